// Salpakan Arbiter: the flagship assembled (or exploded): the frame, the
// boards, plugs (with their cables' bend room), headers, pin tails and solder
// joints placed by hardware/assembly.py (the same boxes its collision check
// tests), and the lid with the RC522 boards on top.
//   pi = "pi4" (Pi 3B+/4/5) or "zero2w";  explode = 0 (assembled) or a lift in mm.

GG_LIBRARY = true;
include <housing.scad>
include <rc522_block.scad>

pi = "pi4";
explode = 0;

solids = pi == "zero2w" ? asm_solids_zero2w : asm_solids_pi4;

// One solid as assembly.py sees it, shrunk by `inset` on every side: a box (or
// the cylinder standing in it) less its openings.
module asm_solid(s, inset = 0) {
    size = s[2][1] - s[2][0] - 2 * [inset, inset, inset];
    difference() {
        translate(s[2][0] + [inset, inset, inset])
            if (s[4] == 1) translate([size[0] / 2, size[1] / 2, 0])
                cylinder(d = min(size[0], size[1]), h = size[2], $fn = 48);
            else cube(size);
        for (o = s[5]) translate(o[0]) cube(o[1] - o[0]);
    }
}

if (is_undef(GG_CHECK)) {
    color("tan") housing();
    for (s = solids) {
        // what hangs from the lid rises with it
        lift = s[2][1][2] >= asm_rc_board_top - rc_t - 0.01 ? explode * 2 : explode * 0.5;
        color(s[3] == 1 ? "dimgray" : s[1]) translate([0, 0, lift]) asm_solid(s);
    }
    color("lightblue", 0.85) translate([0, 0, explode * 2]) rc522_block();
}
