// Salpakan Arbiter: the flagship's frame, on which the lid (rc522_block.scad,
// the slot plate) stands. Not a box: a floor of ribs and four corner posts,
// because nothing needs walls; every plug and lead has its bend room in the
// open (layout and collision check: hardware/assembly.py, gg_assembly.scad).
// On the floor ribs:
//   - a Raspberry Pi 3B+/4/5 on four standoffs (M2.5 x 6 pan-head screws,
//     ISO 7045), parts up, its port side (USB-C power, micro-HDMI) at the back
//     edge; the USB/Ethernet end faces left, where the Pico cable's USB-A plug
//     goes into the USB 2.0 pair nearer the middle;
//   - or a Pi Zero 2 W on the same back standoffs and the two short ones in
//     front (lay a printed 2 mm spacer, zero_spacers.stl, on each);
//   - the Pico H / WH (header soldered at the factory, pins down) at the front
//     right on two pillars that stand between its header rows, clear of the
//     pins, their Dupont housings and the solder joints, one M2 x 6 pan-head
//     screw in each mounting hole; BOOTSEL and micro-USB stay on top.
// Four rubber feet under the corner pads. Print flat, floor down, no supports.

include <gg_params.scad>
include <gg_assembly.scad>
use <gg_lib.scad>

W = asm_width;
D = asm_depth;
fl = asm_floor;
rib = asm_rib_w;
col = asm_col;

// The floor: a grid of ribs through every post, standoff and pillar.
module floor_ribs() {
    // rows: the posts' (the back one also through the Pi's back holes), the Pi's
    // front holes, the Pico's pillars; columns: the posts', the Pi's (and the
    // Zero's) holes, which also cross the Pico's right pillar; the row through
    // the pillars joins the left one
    ys = [asm_columns[0][1], (asm_pico_pillars[0][0][1] + asm_pico_pillars[0][1][1]) / 2,
          asm_pi_holes[1][1], (asm_columns[2][1] + asm_pi_holes[0][1]) / 2];
    xs = [asm_columns[0][0], asm_columns[1][0], asm_pi_holes[0][0], asm_pi_holes[2][0]];
    x0 = asm_columns[0][0]; x1 = asm_columns[1][0];
    y0 = asm_columns[0][1]; y1 = asm_columns[2][1];
    for (y = ys) translate([x0, y - rib / 2, 0]) cube([x1 - x0, rib, fl]);
    for (x = xs) translate([x - rib / 2, y0, 0]) cube([rib, y1 - y0, fl]);
    // corner pads for 10 mm bumper feet
    for (c = asm_columns) translate([c[0] - 5.5, c[1] - 5.5, 0]) cube([11, 11, fl]);
}

module housing() {
    floor_ribs();
    // corner posts: the lid's screws bite into their pilot holes
    for (c = asm_columns) translate([c[0], c[1], fl - 0.01]) difference() {
        translate([-col / 2, -col / 2, 0]) cube([col, col, asm_rim - fl + 0.01]);
        translate([0, 0, asm_rim - fl - 11]) bore(m25_pilot, 12);
    }
    // fins at the posts' feet along their ribs, so the frame does not rack: along
    // the side ribs at every post, along the end ribs at the left posts only (the
    // Pico's leads and the Pi lie over the right ones)
    for (c = asm_columns) {
        sx = c[0] < W / 2 ? 1 : -1;
        sy = c[1] < D / 2 ? 1 : -1;
        translate([c[0], c[1], fl - 0.01]) {
            if (sx == 1) translate([0, 0.8, 0]) rotate([90, 0, 0]) linear_extrude(1.6)
                polygon([[0, 0], [col / 2 + 12, 0], [0, 14]]);
            translate([-0.8, 0, 0]) rotate([90, 0, 90]) linear_extrude(1.6)
                polygon([[0, 0], [sy * (col / 2 + 12), 0], [0, 14]]);
        }
    }
    for (p = asm_pi_holes) translate([p[0], p[1], fl - 0.01]) boss(6, asm_board_z - fl, m25_pilot);
    for (p = asm_zero_holes) translate([p[0], p[1], fl - 0.01]) boss(6, asm_short_h, m25_pilot);
    // the Pico H's pillars, an M2 pilot under each mounting hole
    difference() {
        for (b = asm_pico_pillars) translate(b[0] - [0, 0, 0.01]) cube(b[1] - b[0] + [0, 0, 0.01]);
        for (p = asm_pico_holes) translate([p[0], p[1], asm_pico_z - 7]) bore(m2_pilot, 8);
    }
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
