// Salpakan Arbiter: the slot block (keys variants). Two slots side by side,
// ATTACKER on the left and DEFENDER on the right seen from the front (the
// LED side). Under each slot floor a switch carrier (switch_carrier.scad)
// holds 7 Omron D2HW-A201D pin-plunger switches in a row across the slot,
// switch 1 at the left; a window in the floor over each switch lets its
// plunger up into the slot, where a key's tooth pushes it down to the
// floor's top. The floor's thickness is derived from the switch's datasheet
// (hardware/geometry.py, stack table in keycodes.md).
//
// Front: the ATTACKER and DEFENDER LEDs and the status LED in seats that put
// a 5 mm LED's flange flush with the top (push each LED in from above).
// Between the slots: the NEW GAME button (12 mm hole in a 3 mm panel, nut
// underneath). Behind the button: a pocket for the piezo transducer
// (glue it in from below) under four sound holes. In each slot floor two
// magnet holes, closed from below by the carrier.
//
// Print upside down (top face on the bed), no supports. Four M2.5 x 10
// countersunk screws (DIN 7991) from below through base_plate.scad into the
// bosses. Preview (F5) shows a
// key in each slot and the carriers.

GG_LIBRARY = true;
include <key_base.scad>
include <switch_carrier.scad>
use <gg_lib.scad>

slot_x = key_length() + 2 * clear;
slot_y = key_thick + 2 * clear;
block_w = 2 * wall + 2 * slot_x + slot_gap;
block_d = front_margin + slot_y + back_margin;
cav_h = skirt_h + carrier_h;           // floor underside: the carriers' top
floor_z = cav_h + floor_t;             // top of the slot floor
block_h = floor_z + slot_depth;

function slot_x0(s) = wall + s * (slot_x + slot_gap);  // s = 0 ATTACKER, 1 DEFENDER
function switch_x(s, i) = slot_x0(s) + clear + tooth_x(i);
slot_yc = front_margin + slot_y / 2;
mid_x = block_w / 2;
function carrier_origin(s) = [slot_x0(s) + clear, slot_yc - carrier_w / 2, skirt_h];
function block_bosses() = [[mid_x - 8, 9], [mid_x + 8, 9],
                           [wall + 4, block_d - wall - 3], [block_w - wall - 4, block_d - wall - 3]];
buzzer_xy = [mid_x, front_margin + slot_y + back_margin / 2];

module slot_block() {
    difference() {
        union() {
            difference() {
                cube([block_w, block_d, block_h]);
                // wiring space and carrier bays, open at the bottom
                translate([wall, wall, -1])
                    cube([block_w - 2 * wall, block_d - 2 * wall, cav_h + 1]);
            }
            for (p = block_bosses()) translate([p[0], p[1], 0]) cylinder(d = 7, h = cav_h, $fn = 32);
        }
        for (p = block_bosses()) translate([p[0], p[1], -1]) bore(m25_pilot, 13);
        // cable exit in the front wall, towards the boards on the base plate
        translate([mid_x - 10, -1, -1]) cube([20, wall + 2, 7]);
        for (s = [0, 1]) {
            // the slot
            translate([slot_x0(s), front_margin, floor_z]) cube([slot_x, slot_y, slot_depth + 1]);
            // groove for the key's polarising rib: front wall, switch-1 end
            translate([slot_x0(s) + clear + foot_w / 2 - rib_w / 2 - clear,
                       front_margin - rib_d - clear, floor_z])
                cube([rib_w + 2 * clear, rib_d + clear + 0.01, slot_depth + 1]);
            // plunger windows
            for (i = [0 : n_switches - 1])
                translate([switch_x(s, i) - window_w / 2, slot_yc - window_l / 2, cav_h - 1])
                    cube([window_w, window_l, floor_t + 2]);
            // magnet holes under the key's feet (the carrier closes them)
            for (x = [foot_w / 2, key_length() - foot_w / 2])
                translate([slot_x0(s) + clear + x, slot_yc, cav_h - 1]) bore(mag_d, floor_t + 2);
            // carrier screws (pilot holes up into the block) and the hole for
            // the carrier's key pin: the carrier fits one way only
            for (p = carrier_screws())
                translate([carrier_origin(s)[0] + p[0], carrier_origin(s)[1] + p[1], cav_h - 1])
                    bore(m3_pilot, carrier_pilot + 1);
            translate([carrier_origin(s)[0] + carrier_pin()[0],
                       carrier_origin(s)[1] + carrier_pin()[1], cav_h - 1])
                bore(carrier_pin_d + allow + 0.2, carrier_pin_h + 1.5);
            // slot LED and its label
            translate([slot_x0(s) + slot_x / 2, front_margin / 2, 0]) led_seat(block_h);
            translate([slot_x0(s) + slot_x / 2 - 5, front_margin / 2, 0])
                label(s == 0 ? "ATTACKER" : "DEFENDER", block_h, 3.5, "right");
        }
        // status LED
        translate([mid_x, front_margin / 2, 0]) led_seat(block_h);
        // NEW GAME button: a hole through a thin panel, room for the nut below
        translate([mid_x, slot_yc, 0]) {
            translate([0, 0, block_h - btn_panel - 1]) bore(btn_hole, btn_panel + 2);
            translate([0, 0, cav_h - 1]) bore(btn_cavity, block_h - btn_panel - cav_h + 1);
        }
        translate([mid_x, slot_yc + btn_hole / 2 + 2.5, 0]) label("NEW GAME", block_h, 2.5);
        // piezo pocket and sound holes
        translate([buzzer_xy[0], buzzer_xy[1], 0]) {
            translate([0, 0, cav_h - 1]) bore(bz_d, block_h - 1.5 - cav_h + 1);
            for (a = [45 : 90 : 315]) rotate(a) translate([3, 0, block_h - 2]) bore(2, 3);
        }
    }
}

// The stack's reference heights as built here (tests/hardware/test_hardware_models.py
// compares them with hardware/geometry.py): switch base = carrier pocket floor.
echo(gg_tooth_z = floor_z - (skirt_h + carrier_floor), gg_floor_under_z = cav_h - (skirt_h + carrier_floor));

// Opened on its own (base_plate.scad includes this file and sets GG_PART).
if (is_undef(GG_PART)) {
    slot_block();
    // Preview only: the carriers and a key seated in each slot.
    for (s = [0, 1]) {
        %translate(carrier_origin(s)) switch_carrier();
        %translate([slot_x0(s) + clear, front_margin + clear, floor_z])
            key_base(s == 0 ? "1110000" : "0000111");
    }
}
