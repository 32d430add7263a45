// Salpakan Arbiter: the base plate of the keys, rdm6300 and mcu variants
// (the flagship rc522 variant has a housing instead: housing.scad). The slot
// block (or the RFID block, variant = "rfid") stands at the back, fixed by
// four M2.5 x 10 countersunk screws (DIN 7991 / ISO 10642) from below. In
// front, on 6 mm standoffs, left to right: the Pico (mcu; long side front to
// back, micro-USB at the front edge, parts up, M2 x 6 screws), the MCP23017
// perfboard (keys-mcp23017, 50 x 70 mm, M2 x 6 screws) and the Raspberry Pi
// (58 x 49 mm M2.5 pattern, M2.5 x 6 screws) with its USB/Ethernet end at the
// plate's right edge, so plugs stand out past the plate, clear of the
// boards. Stick four rubber feet under the corners.
//
// 186 mm is wider than a 180 mm bed: the plate prints in two halves
// (part = "left", "right") that key together with two dovetails between the
// perfboard and the Pi; glue the joint. Print flat, no supports.
// Self-tapping pilot holes print undersize by design; if a screw binds, drill
// them out: 2.2 mm (M2.5), 1.7 mm (M2).

GG_PART = "base_plate";
include <slot_block.scad>
include <rfid_block.scad>
use <gg_lib.scad>

variant = "keys";   // "keys" (slot_block) or "rfid" (rfid_block)
part = "whole";     // "whole" (preview), "left", "right" (print)

bw = variant == "rfid" ? rblock_w : block_w;
bd = variant == "rfid" ? rblock_d : block_d;
bosses = variant == "rfid" ? rfid_bosses() : block_bosses();
board_zone = perf_d + 12;                 // front strip for the boards
board_gap = 8;                            // between boards: fingers, SD card
plate_w = max(bw, 5 + pi_w + board_gap + perf_w + 5 + pico_d + 5) + 10;
plate_d = board_zone + bd + 8;
block_origin = [(plate_w - bw) / 2, board_zone];

pi_origin = [plate_w - 5 - pi_w, 6];      // USB/Ethernet end at the right edge
perf_origin = [pi_origin[0] - board_gap - perf_w, 6];
pico_origin = [perf_origin[0] - 5 - pico_d, 6];  // turned: 21 wide, 51 long
cut_x = pi_origin[0] - board_gap / 2;     // where the halves meet
// Dovetails across the cut: clear of the cable pass and the screws.
dovetail_y = [25, plate_d - 10];
dt_neck = 8;
dt_head = 12;
dt_len = 7;
dt_play = 0.15;

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
        // block screws, countersunk from below for DIN 7991 M2.5 heads
        for (p = bosses) translate([block_origin[0] + p[0], block_origin[1] + p[1], 0]) {
            translate([0, 0, -1]) bore(csk_clear, base_t + 2);
            translate([0, 0, -0.01])
                cylinder(d1 = csk_head_d, d2 = csk_clear, h = (csk_head_d - csk_clear) / 2, $fn = 32);
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

// The left half's dovetails (grown by `grow` on every side), full height.
module dovetails(grow = 0) {
    for (y = dovetail_y) translate([cut_x, y, -1]) linear_extrude(base_t + 20)
        offset(delta = grow) polygon([[-1, -dt_neck / 2], [0, -dt_neck / 2], [dt_len, -dt_head / 2],
                                      [dt_len, dt_head / 2], [0, dt_neck / 2], [-1, dt_neck / 2]]);
}

module half(which) {
    if (which == "left") intersection() {
        base_plate();
        union() { translate([-1, -1, -1]) cube([cut_x + 1, plate_d + 2, 40]); dovetails(); }
    } else difference() {
        intersection() { base_plate(); translate([cut_x, -1, -1]) cube([plate_w, plate_d + 2, 40]); }
        dovetails(dt_play);
    }
}

if (is_undef(GG_PRINT)) if (part == "whole") {
    half("left");
    half("right");
    %translate([block_origin[0], block_origin[1], base_t])
        if (variant == "rfid") rfid_block(); else slot_block();
} else {
    half(part);
}
