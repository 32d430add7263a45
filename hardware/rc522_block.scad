// Salpakan Arbiter: the flagship's lid: a plate with the two slots, ATTACKER
// left and DEFENDER right seen from the front (the LED side), each over an
// RC522 (MFRC522) board read by the Pico. It stands on the frame's corner
// posts (housing.scad), four M2.5 x 12 countersunk screws (DIN 7991) from the
// top into their pilots.
//
// A slot is a recess the piece's base stands in, sized for one gauge letter
// (slot = "A" .. "D": print the lid of the letter the fit gauge, gauge.scad,
// gave your pieces); its sticker (a small NTAG213 stuck on the base's centre)
// then lies over the board's antenna whichever way round the piece goes in.
// Under each slot a pad carries the board: flat back up, antenna end to the
// front, header at the back (bought soldered, pins down). Its two antenna-end
// holes go over two printed pegs, its two header-end holes take M2.5 x 6
// pan-head screws into standoffs; side rails locate it (pocket: the largest
// board plus clearance). The standoffs hold its flat back clear of the header's
// solder joints. The antenna centres are rc_pitch apart, derived in
// hardware/geometry.py so that a sticker anywhere in one slot stays the
// assumed read range plus a margin away from the other antenna loop.
//
// In front: the ATTACKER, status and DEFENDER LEDs (pre-wired, pushed in from
// above, their Dupont ends first, one at a time, through the bore); in the
// middle the NEW GAME button (12 mm, nut underneath), behind it the piezo
// (pressed into its ring from below) under four sound holes.
//
// Print upside down (top face on the bed), no supports.

include <gg_params.scad>
include <gg_assembly.scad>
use <gg_lib.scad>

slot = "B";

W = asm_width;
D = asm_depth;
rim = asm_rim;
top = asm_lid_top;
screw_seat = 0.8;   // plastic under a countersunk head

function slot_size(letter) = [for (s = asm_slots) if (s[0] == letter) [s[1], s[2]]][0];

module rc522_block(letter = slot) {
    sz = slot_size(letter);
    sw = asm_slot_wall;
    difference() {
        union() {
            translate([0, 0, rim]) cube([W, D, asm_lid_t]);
            for (xc = asm_slot_xc) {
                // the slot's pad, and the pocket's side rails
                translate([xc - asm_slot_x / 2 - sw, asm_slot_yc - asm_slot_y / 2 - sw, asm_pad_z])
                    cube([asm_slot_x + 2 * sw, asm_slot_y + 2 * sw, rim - asm_pad_z + 0.01]);
                by0 = asm_slot_yc - rc_ant_l / 2 - (rc_ant_c - rc_ant_l / 2);
                for (x = [xc - asm_pocket[0] / 2 - 1.2, xc + asm_pocket[0] / 2])
                    translate([x, by0 + 24, asm_rc_board_top - asm_rail_h])
                        cube([1.2, rc_l - 34, rim - asm_rc_board_top + asm_rail_h + 0.01]);
            }
            // standoffs (header end) and pegs (antenna end) for the boards' holes
            for (s = asm_rc_standoffs) translate([s[0], s[1], 0]) {
                z1 = s[2] == 1 ? asm_pad_z : rim;
                translate([0, 0, asm_rc_board_top]) cylinder(d = asm_rc_standoff_d, h = z1 - asm_rc_board_top + 0.01, $fn = 32);
                if (s[2] == 1)
                    translate([0, 0, asm_rc_board_top - rc_t - 0.6]) cylinder(d = asm_rc_hole_d - 0.4, h = rc_t + 0.61, $fn = 24);
            }
            // the piezo's ring
            translate([asm_mid_x, asm_buzzer_y, rim - bz_h]) difference() {
                cylinder(d = bz_d + 2.4, h = bz_h + 0.01, $fn = 48);
                translate([0, 0, -1]) bore(bz_d, bz_h + 1);
            }
        }
        // the M2.5 pilots in the header-end standoffs
        for (s = asm_rc_standoffs) if (s[2] == 0)
            translate([s[0], s[1], asm_rc_board_top - 1]) bore(m25_pilot, 7);
        // corner screws: countersunk into the plate
        for (c = asm_columns) translate([c[0], c[1], 0]) {
            translate([0, 0, rim - 1]) bore(csk_clear, asm_lid_t + 2);
            translate([0, 0, rim + screw_seat])
                cylinder(d1 = csk_clear, d2 = csk_head_d, h = (csk_head_d - csk_clear) / 2 + 0.01, $fn = 32);
            translate([0, 0, rim + screw_seat + (csk_head_d - csk_clear) / 2]) bore(csk_head_d, 2);
        }
        for (s = [0, 1]) {
            xc = asm_slot_xc[s];
            // the piece's slot, and its letter behind it
            translate([xc - sz[0] / 2, asm_slot_yc - sz[1] / 2, top - asm_slot_depth]) cube([sz[0], sz[1], asm_slot_depth + 1]);
            translate([xc, asm_slot_yc + asm_slot_y / 2 + sw + 3, 0]) label(letter, top, 3);
            // its LED and label (labels point inwards)
            translate([xc, asm_led_y, 0]) led_seat(top);
            translate([xc + (s == 0 ? 5 : -5), asm_led_y, 0])
                label(s == 0 ? "ATTACKER" : "DEFENDER", top, 3, s == 0 ? "left" : "right");
        }
        translate([asm_mid_x, asm_led_y, 0]) led_seat(top);
        translate([asm_mid_x, asm_button_y, rim - 1]) bore(btn_hole, asm_lid_t + 2);
        translate([asm_mid_x, asm_button_y + btn_hole / 2 + 3, 0]) label("NEW GAME", top, 2.5);
        for (a = [45 : 90 : 315]) rotate(a) translate([asm_mid_x, asm_buzzer_y, 0]);
        translate([asm_mid_x, asm_buzzer_y, 0])
            for (a = [45 : 90 : 315]) rotate(a) translate([3, 0, rim - 1]) bore(2, asm_lid_t + 2);
    }
}

if (is_undef(GG_LIBRARY)) rc522_block();
