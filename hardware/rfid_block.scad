// Salpakan Arbiter: the slot block of the RFID variants (rdm6300, mcu).
// Two slots, ATTACKER left and DEFENDER right seen from the front; under each
// slot's thin floor a pocket for an RDM6300's flat coil (glue or tape it in
// from below). The coils' centres are coil_pitch apart, derived in
// hardware/geometry.py so that their edges stay further apart than two
// 125 kHz coils can read each other's tags (stack row "RFID coils apart").
// The RDM6300 boards lie in the wiring space underneath, coil leads short.
// LEDs, NEW GAME button and piezo as in slot_block.scad, in the middle.
//
// The slots take a piece glued into its tag shoe (tag_shoe.scad).
// Print upside down, no supports; four M2.5 x 10 countersunk screws
// (DIN 7991) from below through base_plate.scad (variant = "rfid") into the
// bosses.

include <gg_params.scad>
use <gg_lib.scad>

coil_pocket = [coil_l + 1, coil_w + 1, coil_t + 0.5];
rfid_depth = 10;                                 // slot depth: a piece on its tag
rblock_w = coil_pitch + coil_pocket[0] + 2 * (wall + 3);
rblock_d = max(front_margin + rfid_slot_y + 14, coil_pocket[1] + 2 * wall + 16);
rcav_h = skirt_h;                               // wiring space
rfloor_z = rcav_h + coil_pocket[2] + rfid_floor_t;
rblock_h = rfloor_z + rfid_depth;
rmid_x = rblock_w / 2;
rslot_yc = front_margin + rfid_slot_y / 2;
function rslot_xc(s) = rmid_x + (s == 0 ? -1 : 1) * coil_pitch / 2;
function rfid_bosses() = [[wall + 4, wall + 4], [rblock_w - wall - 4, wall + 4],
                          [wall + 4, rblock_d - wall - 4], [rblock_w - wall - 4, rblock_d - wall - 4]];

module rfid_block() {
    difference() {
        union() {
            difference() {
                cube([rblock_w, rblock_d, rblock_h]);
                translate([wall, wall, -1]) cube([rblock_w - 2 * wall, rblock_d - 2 * wall, rcav_h + 1]);
            }
            for (p = rfid_bosses()) translate([p[0], p[1], 0]) cylinder(d = 7, h = rcav_h, $fn = 32);
        }
        for (p = rfid_bosses()) translate([p[0], p[1], -1]) bore(m25_pilot, 13);
        // cable exit in the front wall, towards the boards on the base plate
        translate([rmid_x - 10, -1, -1]) cube([20, wall + 2, 7]);
        for (s = [0, 1]) {
            // piece slot
            translate([rslot_xc(s) - rfid_slot_x / 2, front_margin, rfloor_z])
                cube([rfid_slot_x, rfid_slot_y, rfid_depth + 1]);
            // coil pocket from below, centred under the slot
            translate([rslot_xc(s) - coil_pocket[0] / 2, rslot_yc - coil_pocket[1] / 2, rcav_h - 1])
                cube([coil_pocket[0], coil_pocket[1], coil_pocket[2] + 1]);
            // LED in front of each slot, and its label
            translate([rslot_xc(s), front_margin / 2, 0]) led_seat(rblock_h);
            translate([rslot_xc(s) - 5, front_margin / 2, 0])
                label(s == 0 ? "ATTACKER" : "DEFENDER", rblock_h, 3.5, "right");
        }
        translate([rmid_x, front_margin / 2, 0]) led_seat(rblock_h);
        translate([rmid_x, rslot_yc, 0]) {
            translate([0, 0, rblock_h - btn_panel - 1]) bore(btn_hole, btn_panel + 2);
            translate([0, 0, rcav_h - 1]) bore(btn_cavity, rblock_h - btn_panel - rcav_h + 1);
        }
        translate([rmid_x, rslot_yc + btn_hole / 2 + 2.5, 0]) label("NEW GAME", rblock_h, 2.5);
        translate([rmid_x, rblock_d - wall - bz_d / 2 - 1, 0]) {
            translate([0, 0, rcav_h - 1]) bore(bz_d, rblock_h - 1.5 - rcav_h + 1);
            for (a = [45 : 90 : 315]) rotate(a) translate([3, 0, rblock_h - 2]) bore(2, 3);
        }
    }
}

if (is_undef(GG_LIBRARY)) rfid_block();
