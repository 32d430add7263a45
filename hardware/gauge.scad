// Salpakan Arbiter: the fit gauge, printed first (about a quarter of an hour):
// it tells the builder which lid to print and checks the RC522 board.
//
//   - Four sticker jigs, A to D: each a cap as large inside as the lid's slot
//     of that letter (a piece's base plus play), with the letter raised beside
//     it. Try a piece's base in each, upside down: the first letter (A is the
//     smallest) whose cap takes the base flat, all the way in, is the lid to
//     print (rc522_block_<letter>.stl). Keep that cap: over a base, upside
//     down, its round hole is the sticker's spot (the base's centre); press
//     the sticker in through it.
//   - The RC522 frame: the lid's pocket (the largest board plus clearance)
//     with four pegs where the board's mounting holes are. Lay the board on
//     it, chip side up: it fits the lid if it drops inside the frame with its
//     four holes over the pegs.
//
// Print flat, as it lies, no supports.

include <gg_params.scad>
include <gg_assembly.scad>
use <gg_lib.scad>

jig_wall = 0.9;
jig_top = 0.6;                          // the cap's roof, with the sticker hole
jig_h = jig_top + 1.6;                  // walls round the base
sticker_hole = asm_sticker_d + 2 * asm_jig_play;
gap = 3;

module jig(size, letter) {
    o = size + 2 * [jig_wall, jig_wall];
    ring = sticker_hole + 2 * jig_wall;
    difference() {
        union() {
            cube([o[0], o[1], jig_h]);
        }
        translate([jig_wall, jig_wall, -1]) cube([size[0], size[1], jig_h + 2]);
    }
    // the roof: a ring round the sticker hole on a cross of bars
    translate([o[0] / 2, o[1] / 2, 0]) difference() {
        union() {
            cylinder(d = ring, h = jig_top, $fn = 64);
            translate([-o[0] / 2 + 0.5, -1.5, 0]) cube([o[0] - 1, 3, jig_top]);
            translate([-1.5, -o[1] / 2 + 0.5, 0]) cube([3, o[1] - 1, jig_top]);
        }
        translate([0, 0, -1]) bore(sticker_hole, jig_top + 2);
    }
    // the letter on a tab at the left
    translate([-9, o[1] / 2 - 4, 0]) {
        cube([9.01, 8, jig_top]);
        translate([4.5, 4, jig_top - 0.01]) linear_extrude(0.6)
            text(letter, size = 5.5, halign = "center", valign = "center");
    }
}

// The lid's RC522 pocket: its rails as a frame, its pegs and standoffs as pegs
// on two bars under the holes.
module rc522_frame() {
    p = asm_pocket;
    hole_rows = [asm_rc_holes_wide_from_end, asm_rc_holes_wide_from_end + asm_rc_holes_pitch];
    // its four corners, 8 mm each way
    for (cx = [0, 1], cy = [0, 1]) translate([cx * (p[0] + 2.4), cy * (p[1] + 2.4), 0])
        mirror([cx, 0, 0]) mirror([0, cy, 0]) {
            cube([9.2, 1.2, 2]);
            cube([1.2, 9.2, 2]);
        }
    // two side strips join the corners and the bars into one piece
    for (x = [0, p[0] + 1.2]) translate([x, 0, 0]) cube([1.2, p[1] + 2.4, 0.6]);
    // y from the frame's header-end inside edge; the board lies asm_rc_tol in
    for (row = [0, 1]) {
        y = 1.2 + asm_rc_tol + hole_rows[row];
        half = row == 0 ? asm_rc_holes_wide / 2 : asm_rc_holes_narrow / 2;
        translate([0, y - 2.5, 0]) cube([p[0] + 2.4, 5, 0.6]);
        for (s = [-1, 1]) translate([1.2 + p[0] / 2 + s * half, y, 0.6 - 0.01])
            cylinder(d = asm_rc_hole_d - 0.4, h = rc_t + 0.61, $fn = 24);
    }
    translate([p[0] / 2 + 1.2, 1.2 + asm_rc_tol + hole_rows[1], 0.6 - 0.01]) linear_extrude(0.6)
        text("RC522", size = 3.5, halign = "center", valign = "center");
}

module gauge() {
    rc522_frame();
    x0 = asm_pocket[0] + 2.4 + gap + 9;
    sizes = [for (s = asm_slots) [s[1], s[2]]];
    for (i = [0 : len(asm_slots) - 1])
        translate([x0, [for (j = [0 : i]) j == 0 ? 0 : sizes[j - 1][1] + 2 * jig_wall + gap]
                       * [for (j = [0 : i]) 1], 0])
            jig(sizes[i], asm_slots[i][0]);
}

if (is_undef(GG_LIBRARY)) gauge();
