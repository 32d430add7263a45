// Salpakan Arbiter: the build guide's step pictures, like a kit manual. For
// step `step`, the flagship as far as the guide has built it, the part that
// step adds in the highlight colour. The boards, plugs, headers and modules
// are assembly.py's solids (gg_assembly.scad), each put in at the step the
// first of `rules` whose name prefix it matches says (hardware/steps.py passes
// the rules and checks that every solid matches one). Rendered by
// hardware/steps.py into docs/build/img/steps/.
//   step = a guide step (8 to 14); rules = [[name prefix, step], ...];
//   lid_step = the step that closes the lid (before it, the lid floats above).

GG_LIBRARY = true;
include <housing.scad>
include <rc522_block.scad>
include <gauge.scad>  // its jigs (GG_LIBRARY: the gauge itself is not drawn)

step = 8;
lid_step = 13;
sticker_step = 14;
modules_step = 10;
first_step = 8;
rules = [["", 8]];
HIGHLIGHT = "darkorange";
jig_letter = "B";    // the plastic set the models draw (parts.toml [piece])

solids = asm_solids_pi4;
// While open, the lid and what hangs under it lie upside down behind the tray, as the
// builder holds them (turned over about the x axis: the ATTACKER slot then on the right).
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

if (step == sticker_step) sticker_on_piece(); else build_so_far();
