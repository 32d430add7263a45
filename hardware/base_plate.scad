// Salpakan Arbiter: the base plate. The slot block (or the RFID block,
// variant = "rfid") stands at the back, fixed by four M3 x 12 screws from
// below (countersunk holes); in front, on 6 mm standoffs: the Raspberry Pi
// (58 x 49 mm M2.5 pattern, M2.5 x 6 self-tapping screws), the MCP23017
// perfboard (keys-mcp23017, 50 x 70 mm, M2 screws) and the Pico (mcu, M2
// screws). Stick four rubber feet under the corners. Print flat, no supports.
// Self-tapping pilot holes print undersize by design; if a screw binds, drill
// them out: 2.2 mm (M2.5), 1.7 mm (M2), 2.5 mm (M3).

GG_PART = "base_plate";
include <slot_block.scad>
include <rfid_block.scad>
use <gg_lib.scad>

variant = "keys";   // "keys" (slot_block) or "rfid" (rfid_block)

bw = variant == "rfid" ? rblock_w : block_w;
bd = variant == "rfid" ? rblock_d : block_d;
bosses = variant == "rfid" ? rfid_bosses() : block_bosses();
board_zone = perf_d + 12;                 // front strip for the boards
plate_w = max(bw, 5 + pi_w + 5 + perf_w + 5 + pico_d + 5) + 10;
plate_d = board_zone + bd + 8;
block_origin = [(plate_w - bw) / 2, board_zone];

pi_origin = [5, 6];                        // board corner; holes 3.5 mm in
perf_origin = [pi_origin[0] + pi_w + 5, 6];
pico_origin = [perf_origin[0] + perf_w + 5, 6];  // turned: 21 wide, 51 long

function pi_holes() = [for (i = [0, 1], j = [0, 1])
    [pi_origin[0] + 3.5 + i * pi_hole_x, pi_origin[1] + 3.5 + j * pi_hole_y]];
function perf_holes() = [for (i = [0, 1], j = [0, 1])
    [perf_origin[0] + (perf_w - perf_hole_x) / 2 + i * perf_hole_x,
     perf_origin[1] + (perf_d - perf_hole_y) / 2 + j * perf_hole_y]];
function pico_holes() = [for (i = [0, 1], j = [0, 1])
    [pico_origin[0] + (pico_d - pico_hole_y) / 2 + i * pico_hole_y,
     pico_origin[1] + (pico_w - pico_hole_x) / 2 + j * pico_hole_x]];

module standoffs(points, pilot) {
    for (p = points) translate([p[0], p[1], base_t - 0.01]) boss(6, standoff_h, pilot);
}

module base_plate() {
    difference() {
        cube([plate_w, plate_d, base_t]);
        // block screws, countersunk from below
        for (p = bosses) translate([block_origin[0] + p[0], block_origin[1] + p[1], 0]) {
            translate([0, 0, -1]) bore(m3_clear, base_t + 2);
            translate([0, 0, -0.01]) cylinder(d1 = 6.4, d2 = m3_clear, h = 1.6, $fn = 32);
        }
        // cable pass under the block's wiring space
        translate([block_origin[0] + bw / 2 - 20, block_origin[1] + 16, -1]) cube([40, 14, base_t + 2]);
    }
    standoffs(pi_holes(), m25_pilot);
    standoffs(perf_holes(), m2_pilot);
    standoffs(pico_holes(), m2_pilot);
    // outline of where the block stands
    translate([block_origin[0], block_origin[1], base_t]) difference() {
        cube([bw, bd, 0.6]);
        translate([1.2, 1.2, -1]) cube([bw - 2.4, bd - 2.4, 3]);
    }
}

base_plate();
%translate([block_origin[0], block_origin[1], base_t])
    if (variant == "rfid") rfid_block(); else slot_block();
