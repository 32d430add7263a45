// Salpakan Arbiter: a notched key base. A game piece is glued on top; the
// teeth underneath press the slot's microswitches (see keycodes.md).
//
//   key_base(code = "1011000", label = "W:2*G");
//
// code:  one digit per switch, switch 1 first: "1" = tooth (presses the
//        switch), "0" = notch (leaves it open). Exactly n_pressed "1"s.
// label: optional text engraved on the top face, which the glued piece
//        covers (so it never shows a rank during a game).
//
// Axes: x along the switch row (switch 1 at x = 0 end), y front (0) to back,
// z up. Feet, teeth and skirt are one plane at z = 0: the key stands on them
// on the slot floor, and a tooth pushes its switch's plunger down to the
// floor's top. The skirt (the front and back faces carried down to that
// plane, skirt_wall thick) stands beside the plunger windows and hides the
// notches: from the side a key shows a plain bar, so its code cannot be read
// off a piece on the board (the stack checks the channel clears the plunger).
// Each foot holds a 5 x 2 mm magnet (glue it in, all the same pole down);
// the slot floor's magnets hold the key against the switches' springs.
// The polarising rib is on the front face at the switch-1 end, so a key
// turned round does not fit. All keys on a plate: keys_all.scad.
// Dimensions (derived from parts.toml): gg_params.scad.

include <gg_params.scad>
use <gg_lib.scad>

function key_length(n = n_switches) = 2 * foot_w + n * pitch;
// Centre of switch position i (0-based) from the switch-1 end of the key.
function tooth_x(i) = foot_w + (i + 0.5) * pitch;

module key_base(code = "1011000", label = "") {
    n = len(code);
    L = key_length(n);
    assert(n == n_switches, str("code must have ", n_switches, " digits: ", code));
    assert(len([for (i = [0 : n - 1]) if (code[i] == "1") i]) == n_pressed,
           str("code must have exactly ", n_pressed, " teeth: ", code));
    difference() {
        union() {
            // bar above the notches
            translate([0, 0, notch_h]) cube([L, key_thick, key_h - notch_h]);
            // feet
            cube([foot_w, key_thick, notch_h + 0.01]);
            translate([L - foot_w, 0, 0]) cube([foot_w, key_thick, notch_h + 0.01]);
            // skirt: front and back faces run down to the feet's plane, so
            // the notches are a channel seen only from underneath
            cube([L, skirt_wall, notch_h + 0.01]);
            translate([0, key_thick - skirt_wall, 0]) cube([L, skirt_wall, notch_h + 0.01]);
            // teeth
            for (i = [0 : n - 1]) if (code[i] == "1")
                translate([tooth_x(i) - tooth_w / 2, 0, 0])
                    cube([tooth_w, key_thick, notch_h + 0.01]);
            // polarising rib, full height, on the front face at the switch-1 end
            translate([foot_w / 2 - rib_w / 2, -rib_d, 0])
                cube([rib_w, rib_d + 0.01, key_h]);
        }
        // magnet pockets, open at the bottom of each foot
        for (x = [foot_w / 2, L - foot_w / 2])
            translate([x, key_thick / 2, -1]) bore(mag_d, mag_depth + 1);
        if (label != "")
            translate([L / 2, key_thick / 2, key_h - 0.6])
                linear_extrude(1)
                    text(label, size = 4, halign = "center", valign = "center");
    }
}

// Opened on its own, show one key. Files that include this one set
// GG_LIBRARY = true first.
if (is_undef(GG_LIBRARY)) key_base("1011000", "W:2*G");
