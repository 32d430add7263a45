// Salpakan Arbiter: the flagship assembled (or exploded): the housing, the
// boards, plugs, headers and standoffs placed by hardware/assembly.py (the
// same boxes its collision check tests), and the RC522 block on top.
//   pi = "pi4" (Pi 3B+/4/5) or "zero2w";  explode = 0 (assembled) or a lift in mm.

GG_LIBRARY = true;
include <housing.scad>
include <rc522_block.scad>

pi = "pi4";
explode = 0;

solids = pi == "zero2w" ? asm_solids_zero2w : asm_solids_pi4;
color("tan") housing();
for (s = solids) {
    lift = s[2][0][2] >= asm_rim + asm_cav_b - 20 && s[2][1][2] > asm_rim ? explode * 2 : explode * 0.5;
    color(s[3] == 1 ? "dimgray" : s[1]) translate([0, 0, lift]) translate(s[2][0]) cube(s[2][1] - s[2][0]);
}
color("lightblue", 0.85) translate([0, 0, asm_rim + explode * 2]) rc522_block();
