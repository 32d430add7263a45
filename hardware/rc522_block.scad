// Salpakan Arbiter: the flagship's slot block: two slots, ATTACKER left and
// DEFENDER right seen from the front (the LED side), each over an RC522
// (MFRC522) board read by the Pico. It is the lid of the housing
// (housing.scad): it stands on the tray's rim, four M2.5 x 12 countersunk
// screws (DIN 7991) from the top into the tray's corner columns.
//
// Under each slot a pocket takes an RC522 board from below, its flat back up
// against the slot floor, its antenna end to the front (under the slot), its
// header at the back; solder the 8-pin header with its plastic on the chip
// side so the pins point down, into the housing (a groove over the header
// row clears the solder joints). Fix each board with two dots of hot glue at
// its back corners. The antenna centres are rc_pitch apart, derived in
// hardware/geometry.py so that a sticker anywhere in one slot stays the
// assumed read range plus a margin away from the other antenna loop (stack
// row "RC522 antenna far from the other sticker").
//
// A slot takes a piece glued into its tag shoe (tag_shoe.scad), sticker
// underneath, which lands over the antenna. In front: the ATTACKER,
// status and DEFENDER LEDs (push them in from above, flange flush); in the
// middle the NEW GAME button (12 mm, nut underneath), behind it the piezo
// (glue it in from below) under four sound holes.
//
// Its underside is open over the housing: that is the cable pass. The
// RC522 headers and the LED, button and piezo wires hang straight down to
// the Pico and the Pi's header; nothing runs round the outside.
//
// Print upside down (top face on the bed), no supports.

include <gg_params.scad>
include <gg_assembly.scad>
use <gg_lib.scad>

W = asm_width;
D = asm_depth;
H = asm_block_h;
wb = asm_wall_b;
cav = asm_cav_b;
screw_seat = 5;   // plastic under a screw head, over the tray's rim

module rc522_block() {
    difference() {
        union() {
            difference() {
                cube([W, D, H]);
                translate([wb, wb, -1]) cube([W - 2 * wb, D - 2 * wb, cav + 1]);
            }
            for (c = asm_columns)
                translate([c[0] - asm_col / 2, c[1] - asm_col / 2, 0]) cube([asm_col, asm_col, cav + 0.01]);
        }
        // corner screws: countersunk seat screw_seat above the rim, counterbore over it
        for (c = asm_columns) translate([c[0], c[1], 0]) {
            translate([0, 0, -1]) bore(csk_clear, H + 2);
            translate([0, 0, screw_seat])
                cylinder(d1 = csk_clear, d2 = csk_head_d, h = (csk_head_d - csk_clear) / 2 + 0.01, $fn = 32);
            translate([0, 0, screw_seat + (csk_head_d - csk_clear) / 2]) bore(csk_head_d, H);
        }
        for (s = [0, 1]) {
            xc = asm_slot_xc[s];
            // the piece's slot
            translate([xc - asm_slot_x / 2, asm_front, H - asm_slot_depth]) cube([asm_slot_x, asm_slot_y, asm_slot_depth + 1]);
            // the board's pocket, from below, and the groove over its header's solder joints
            translate([xc - asm_pocket[0] / 2, asm_pocket_y0, cav - 1]) cube([asm_pocket[0], asm_pocket[1], asm_pocket[2] + 1]);
            translate([xc - rc_hdr_len / 2 - 1.5, asm_pocket_y0 + rc_tol + rc_l - rc_hdr_from_end - 2.5, cav - 1])
                cube([rc_hdr_len + 3, 5, asm_pocket[2] + rc_relief + 1]);
            // its LED and label (labels point inwards)
            translate([xc, asm_front / 2, 0]) led_seat(H);
            translate([xc + (s == 0 ? 5 : -5), asm_front / 2, 0])
                label(s == 0 ? "ATTACKER" : "DEFENDER", H, 3, s == 0 ? "left" : "right");
        }
        translate([asm_mid_x, asm_front / 2, 0]) led_seat(H);
        // NEW GAME button: a hole through a thin panel, room for the nut below
        translate([asm_mid_x, asm_button_y, 0]) {
            translate([0, 0, H - btn_panel - 1]) bore(btn_hole, btn_panel + 2);
            translate([0, 0, cav - 1]) bore(btn_cavity, H - btn_panel - cav + 1);
        }
        translate([asm_mid_x, asm_button_y + btn_hole / 2 + 3, 0]) label("NEW GAME", H, 2.5);
        // piezo pocket and sound holes
        translate([asm_mid_x, asm_buzzer_y, 0]) {
            translate([0, 0, cav - 1]) bore(bz_d, H - 1.5 - cav + 1);
            for (a = [45 : 90 : 315]) rotate(a) translate([3, 0, H - 2]) bore(2, 3);
        }
    }
}

if (is_undef(GG_LIBRARY)) rc522_block();
