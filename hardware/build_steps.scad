// Salpakan Arbiter: the build guide's step pictures, like a kit manual. For
// step `step`, the flagship as far as the guide has built it, the part that
// step adds in the highlight colour. The boards, plugs, headers and modules
// are assembly.py's solids (gg_assembly.scad), each put in at the step the
// first of `rules` whose name prefix it matches says (hardware/steps.py passes
// the rules and checks that every solid matches one). Rendered by
// hardware/steps.py into docs/build/img/steps/.
//   step = a guide step; rules = [[name prefix, step], ...] (a step past the last
//   one: a hole the flagship leaves empty); lid_step = the step that closes the lid.
// Steps 8 to 13 build the device; the others are scenes of their own: the fit gauge
// with a piece and a board tried in it (2), the two overnight prints (3), the bare Pi
// with its card and supply (5), the Pico on its cable (7), a sticker going on (14), and
// the closed device with pieces in its slots (15 to 17).

GG_LIBRARY = true;
include <housing.scad>
include <rc522_block.scad>
include <gauge.scad>  // its jigs (GG_LIBRARY: the gauge itself is not drawn)

step = 8;
gauge_step = 2;
prints_step = 3;
boot_step = 5;
flash_step = 7;
lid_step = 13;
sticker_step = 14;
enroll_step = 15;
range_step = 16;
game_step = 17;
modules_step = 10;
first_step = 8;
rules = [["", 8]];
HIGHLIGHT = "darkorange";
jig_letter = "B";    // the plastic set the models draw (parts.toml [piece])

solids = asm_solids_pi4;
// While open, the lid and what hangs under it lie upside down behind the tray, as the
// builder holds them: turned over about the x axis, its LED edge tipped away, so the
// ATTACKER slot stays on the left and the boards' pins point towards the tray.
is_open = step < lid_step;
// At the LEDs' step the lid stands the right way up behind the tray (see-through, for the
// piezo under it): the LEDs and the button show where they end up.
upright = step == modules_step;
open_at = [0, asm_depth + 12, 0];
lid_cz = (asm_rim + asm_lid_top) / 2;  // the plate's middle: turned over about it
function flip(p) = !is_open ? p : upright ? p + open_at
    : [p[0], asm_depth - p[1], 2 * lid_cz - p[2]] + open_at - [0, 0, asm_rim];

function starts(s, p) = len(p) == 0 || (len(s) >= len(p) && [for (i = [0:len(p) - 1]) s[i]] == [for (i = [0:len(p) - 1]) p[i]]);
function first_match(name, i = 0) = i >= len(rules) ? first_step : starts(name, rules[i][0]) ? rules[i][1] : first_match(name, i + 1);

// One solid as assembly.py sees it: a box, or the cylinder standing in it.
module solid_shape(s) {
    size = s[2][1] - s[2][0];
    translate(s[2][0])
        if (s[4] == 1) translate([size[0] / 2, size[1] / 2, 0])
            cylinder(d = min(size[0], size[1]), h = size[2], $fn = 48);
        else cube(size);
}

function named(name, i = 0) = i >= len(solids) ? undef : solids[i][0] == name ? solids[i] : named(name, i + 1);
// What hangs under the lid (and is turned over with it): the boards, LEDs, button, piezo.
lid_parts = ["ATTACKER RC522", "DEFENDER RC522", "ATTACKER LED", "DEFENDER LED", "status LED",
             "NEW GAME", "piezo"];
function in_lid(s) = len([for (p = lid_parts) if (starts(s[0], p)) 1]) > 0;
module opened() {
    if (is_open && upright) translate(open_at) children();
    else if (is_open) translate(open_at - [0, 0, asm_rim]) translate([0, asm_depth / 2, lid_cz])
        rotate([180, 0, 0]) translate([0, -asm_depth / 2, -lid_cz]) children();
    else children();
}
// A point of a solid's box: its middle in x and y, at its top (end = 1) or bottom (end = 0).
function end_of(s, end) = let(p = [(s[2][0][0] + s[2][1][0]) / 2, (s[2][0][1] + s[2][1][1]) / 2,
                                    end == 1 ? s[2][1][2] : s[2][0][2]]) in_lid(s) ? flip(p) : p;

// The leads as bundles, header to header (which wire goes to which pin: the wiring
// pictures): [from, to, step].
leads = [
    // USB to the left, seen from above: pins 1-20 at the front (the DEFENDER bus), 21-40 at
    // the back (the ATTACKER bus, and 3V3(OUT) whose Dupont Y also feeds the DEFENDER board).
    ["Pico front pins + Dupont", "DEFENDER RC522 header + Dupont", 11],
    ["Pico back pins + Dupont", "ATTACKER RC522 header + Dupont", 11],
    ["Pico back pins + Dupont", "DEFENDER RC522 header + Dupont", 11],
    ["Pi GPIO header + Dupont", "ATTACKER LED", 12],
    ["Pi GPIO header + Dupont", "status LED", 12],
    ["Pi GPIO header + Dupont", "DEFENDER LED", 12],
    ["Pi GPIO header + Dupont", "NEW GAME button body and nut", 12],
    ["Pi GPIO header + Dupont", "piezo", 12],
];

module lead_bundle(a, b) {
    hull() { translate(end_of(a, 1)) sphere(d = 2.5, $fn = 12); translate(end_of(b, 0)) sphere(d = 2.5, $fn = 12); }
}

module build_so_far() {
    for (l = leads) {
        a = named(l[0]);
        b = named(l[1]);
        if (l[2] <= step && !is_undef(a) && !is_undef(b))
            color(l[2] == step ? HIGHLIGHT : "dimgray") lead_bundle(a, b);
    }
    color("tan") housing();
    for (s = solids) {
        at = first_match(s[0]);
        if (at <= step)
            color(at == step ? HIGHLIGHT : s[3] == 1 ? "dimgray" : s[1])
                if (in_lid(s)) opened() solid_shape(s); else solid_shape(s);
    }
    if (step >= first_step + 1)
                color(step == lid_step ? HIGHLIGHT : "lightblue", upright ? 0.5 : 1)
            opened() rc522_block();
}

// A piece held upside down, its base up, the gauge's jig of its letter over the base
// (turned over: its roof on top), and the sticker going in through the jig's hole.
module sticker_on_piece() {
    sticker_d = asm_sticker_d;  // the flagship's NTAG213 sticker (parts.toml [sticker])
    size = [for (s = asm_slots) if (s[0] == jig_letter) [s[1], s[2]]][0];
    color("burlywood") cube([piece_l, piece_w, piece_h]);
    color("lightblue", 0.8)
        translate([(piece_l - size[0]) / 2 - jig_wall, (piece_w - size[1]) / 2 - jig_wall,
                   piece_h + jig_h - (jig_h - jig_top)])
            mirror([0, 0, 1]) jig(size, jig_letter);
    color(HIGHLIGHT) translate([piece_l / 2, piece_w / 2, piece_h + jig_h + 3])
        cylinder(d = sticker_d, h = 0.6, $fn = 64);
}

// The piece as it stands in a slot (its base on the slot's floor): over slot s (0: the
// ATTACKER's), lifted `above` mm.
slot_floor = asm_lid_top - asm_slot_depth;
module piece_in_slot(s, above = 0) {
    translate([asm_slot_xc[s] - piece_l / 2, asm_slot_yc - piece_w / 2, slot_floor + above])
        cube([piece_l, piece_w, piece_h]);
}

// Step 2: the gauge as printed, a piece upside down in the jig of its letter (the
// models' set: B), and an RC522 board lying in the frame.
module gauge_scene() {
    color("lightblue") gauge();
    sizes = [for (s = asm_slots) [s[1], s[2]]];
    i = [for (k = [0 : len(asm_slots) - 1]) if (asm_slots[k][0] == jig_letter) k][0];
    y = i == 0 ? 0 : sum_y(sizes, i);
    x0 = asm_pocket[0] + 2.4 + gap + 9;
    color(HIGHLIGHT)
        translate([x0 + jig_wall + (sizes[i][0] - piece_l) / 2,
                   y + jig_wall + (sizes[i][1] - piece_w) / 2, jig_top])
            cube([piece_l, piece_w, piece_h]);
    color(HIGHLIGHT) translate([1.2 + asm_rc_tol, 1.2 + asm_rc_tol, 0.6]) {
        cube([rc_w, rc_l, 1.6]);
        color("darkslategray") translate([(rc_w - 20.4) / 2, rc_l - 4, 1.6]) cube([20.4, 2.5, 8.5]);
    }
}
function sum_y(sizes, i) = i == 0 ? 0 : sizes[i - 1][1] + 2 * jig_wall + gap + sum_y(sizes, i - 1);

// Step 3: the housing and the lid of the letter, as they come off the bed, side by side.
module prints_scene() {
    color(HIGHLIGHT) housing();
    // right way up, its lowest part (the boards' pegs) on the table
    color(HIGHLIGHT) translate([asm_width + 20, 0, -(asm_rc_board_top - rc_t - 0.6)])
        rc522_block(jig_letter);
}

// The solids whose names start with one of `prefixes`, each in its own colour.
module solids_named(prefixes, except = []) {
    for (s = solids)
        if (len([for (p = prefixes) if (starts(s[0], p)) 1]) > 0
            && len([for (p = except) if (starts(s[0], p)) 1]) == 0)
            color(s[3] == 1 ? "dimgray" : s[1]) solid_shape(s);
}

// Step 5: the bare Pi on the table, the SD card going into its slot (under the board's
// end away from the USB sockets) and the supply's plug into its USB-C socket.
module boot_scene() {
    solids_named(["Pi board", "Pi USB", "Pi underside"]);
    pb = named("Pi board")[2];
    color(HIGHLIGHT) {
        translate([pb[1][0] - 12, (pb[0][1] + pb[1][1]) / 2 - 5.5, pb[0][2] - 1.4])
            cube([15, 11, 1]);
        solid_shape(named("USB-C power plug"));
    }
}

// Step 7: after flashing, the Pico on its cable to the Pi (the Pi as in step 5), the
// Pico lying on the table beside it (lowered from its place in the housing).
pico_down = [0, 0, -14];
module flash_scene() {
    solids_named(["Pi board", "Pi USB", "Pi underside", "USB-C power plug"]);
    translate(pico_down)
        solids_named(["Pico"], except = ["Pico front pins", "Pico back pins", "Pico screw",
                                         "Pico cable", "Pico micro-USB"]);
    p = named("Pico micro-USB plug");
    a = [p[0], p[1], [p[2][0] + pico_down, p[2][1] + pico_down], p[3], p[4]];
    b = named("USB-A plug (Pico cable) in the Pi");
    color(HIGHLIGHT) {
        solid_shape(a);
        solid_shape(b);
        hull() {
            translate([a[2][0][0], (a[2][0][1] + a[2][1][1]) / 2, (a[2][0][2] + a[2][1][2]) / 2])
                sphere(d = 4, $fn = 16);
            translate([b[2][1][0] - 8, (b[2][0][1] + b[2][1][1]) / 2, b[2][1][2]])
                sphere(d = 4, $fn = 16);
        }
    }
}

// Steps 15 to 17: the closed device and the pieces: one in the ATTACKER slot
// (enrollment); one held over it beside a ruler standing in it (the range check); a
// piece in each slot, the ATTACKER LED lit (the first challenge).
module pieces_scene() {
    build_so_far();
    if (step == enroll_step) color(HIGHLIGHT) piece_in_slot(0);
    if (step == range_step) {
        color(HIGHLIGHT) piece_in_slot(0, 30);
        color("ivory") translate([asm_slot_xc[0] + piece_l / 2 - 24, asm_slot_yc + piece_w / 2 + 1,
                                  slot_floor])
            cube([20, 1.5, 60]);
    }
    if (step == game_step) {
        color(HIGHLIGHT) { piece_in_slot(0); piece_in_slot(1); }
        led = named("ATTACKER LED")[2];
        color("red", 0.45) translate([(led[0][0] + led[1][0]) / 2, (led[0][1] + led[1][1]) / 2,
                                      led[1][2]])
            sphere(d = 14, $fn = 32);
    }
}

if (step == gauge_step) gauge_scene();
else if (step == prints_step) prints_scene();
else if (step == boot_step) boot_scene();
else if (step == flash_step) flash_scene();
else if (step == sticker_step) sticker_on_piece();
else if (step >= enroll_step) pieces_scene();
else build_so_far();
