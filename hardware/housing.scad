// Salpakan Arbiter: the flagship's housing, a tray the RC522 slot block
// (rc522_block.scad) closes as its lid. Inside, on standoffs (layout and
// collision check: hardware/assembly.py, gg_assembly.scad):
//   - a Raspberry Pi 3B+/4/5 (M2.5 x 6 pan-head screws, ISO 7045), parts up,
//     its port side (USB-C power, micro-HDMI) against the back wall, where
//     the power plug goes in through its window; the USB/Ethernet end faces
//     left into an empty bay that takes the Pico cable's USB-A plug;
//   - or a Pi Zero 2 W on the same back row of standoffs and the two short
//     ones in front (lay a printed 2 mm spacer, zero_spacers.stl, on each),
//     its power and data micro-USB through the back wall's windows (the
//     Pico cable runs out of the data window and back in over the wall's
//     cable notch);
//   - the Pico at the front right (M2 x 6 screws), parts up, micro-USB end
//     to the left, BOOTSEL reachable from above until the lid goes on.
// Vents in the floor under the Pi and in both side walls; the SD card
// window in the right wall. Four rubber feet under the corners. Print flat,
// floor down, no supports (the windows bridge).

include <gg_params.scad>
include <gg_assembly.scad>
use <gg_lib.scad>

W = asm_width;
D = asm_depth;
e = asm_wall;
fl = asm_floor;
rim = asm_rim;

module housing() {
    difference() {
        cube([W, D, rim]);
        translate([e, e, fl]) cube([W - 2 * e, D - 2 * e, rim]);
        // port windows in the back wall (Pi 3B+/4/5 and Zero 2 W)
        for (o = concat(asm_back_open_pi4, asm_back_open_zero))
            translate([o[0], D - e - 1, o[2]]) cube([o[1] - o[0], e + 2, o[3] - o[2]]);
        // cable notch for the Zero's Pico cable, from the rim down
        translate([asm_back_open_zero[0][0] - 12, D - e - 1, rim - 8]) cube([8, e + 2, 9]);
        // vents: floor slots under the Pi, wall slots at both ends
        for (x = [asm_pi_box[0] + 30 : 5 : asm_pi_box[2] - 10])
            translate([x, asm_pi_box[1] + 12, -1]) cube([2, asm_pi_box[3] - asm_pi_box[1] - 24, fl + 2]);
        for (xw = [-1, W - e - 1], y = [asm_pi_box[1] + 4 : 5 : asm_pi_box[3] - 30])
            translate([xw, y, fl + 10]) cube([e + 2, 2, 12]);
        // SD card window in the right wall, at the Pi's card
        translate([W - e - 1, asm_pi_box[3] - 36, asm_board_z - 3]) cube([e + 2, 16, 5]);
    }
    // corner columns: the block's screws bite into their pilot holes
    // (each grown 0.5 mm into its two walls: one solid, no touching faces)
    for (c = asm_columns) translate([c[0], c[1], fl - 0.01]) difference() {
        translate([c[0] < W / 2 ? -asm_col / 2 - 0.5 : -asm_col / 2,
                   c[1] < D / 2 ? -asm_col / 2 - 0.5 : -asm_col / 2, 0])
            cube([asm_col + 0.5, asm_col + 0.5, rim - fl + 0.01]);
        translate([0, 0, rim - fl - 10]) bore(m25_pilot, 11);
    }
    for (p = asm_pi_holes) translate([p[0], p[1], fl - 0.01]) boss(6, asm_board_z - fl, m25_pilot);
    for (p = asm_zero_holes) translate([p[0], p[1], fl - 0.01]) boss(6, asm_short_h, m25_pilot);
    for (p = asm_pico_holes) translate([p[0], p[1], fl - 0.01]) boss(6, asm_board_z - fl, m2_pilot);
}

// Two 2 mm spacers for a Zero 2 W's front standoffs.
module zero_spacers() {
    for (i = [0, 1]) translate([i * 9, 0, 0]) difference() {
        cylinder(d = 6, h = asm_board_z - asm_floor - asm_short_h, $fn = 32);
        translate([0, 0, -1]) bore(2.7 + allow, 5);
    }
}

part = "housing";   // "housing" or "zero_spacers"
if (is_undef(GG_LIBRARY)) { if (part == "zero_spacers") zero_spacers(); else housing(); }
