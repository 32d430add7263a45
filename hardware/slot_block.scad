// Salpakan Arbiter: the slot block. Two slots side by side, ATTACKER on the
// left and DEFENDER on the right seen from the front (the LED side). Under
// each slot floor, n_switches microswitch pockets in a row across the slot,
// switch 1 at the left; a window in the floor over each switch lets its lever
// up into the slot, where a key's tooth presses it.
//
// Switches: subminiature lever microswitches, body about 12.8 x 5.8 x 6.5 mm
// (sw_len x sw_wid x sw_hgt), pushed into the pockets from below, lever up,
// body lengthwise front to back. Two 2 mm rods (or M2 threaded rod) run the
// whole width of the block through all 14 switches' mounting holes. MEASURE
// your switch (mounting-hole height sw_hole_z, hole spacing sw_hole_pitch,
// lever height lever_free) and set them in hardware/generate.py (GEOMETRY).
//
// LEDs: a 5 mm hole in front of each slot (ATTACKER, DEFENDER) and one in
// the middle (status). Legs and wires go down into the open wiring space under
// the block; close it with a 3 mm base board. Cables leave by the notch at
// the back.
//
// Print upside down (top face on the bed), no supports. Preview (F5) shows a
// key in each slot.

GG_LIBRARY = true;
include <key_base.scad>

slot_x = key_length() + 2 * clear;
slot_y = key_thick + 2 * clear;
block_w = 2 * wall + 2 * slot_x + slot_gap;
block_d = front_margin + slot_y + back_margin;
pocket_h = sw_hgt + 0.2;
floor_z = skirt_h + pocket_h + floor_t;  // top of the slot floor
block_h = floor_z + slot_depth;

function slot_x0(s) = wall + s * (slot_x + slot_gap);  // s = 0 ATTACKER, 1 DEFENDER
function switch_x(s, i) = slot_x0(s) + clear + tooth_x(i);
slot_yc = front_margin + slot_y / 2;

module slot_block() {
    difference() {
        cube([block_w, block_d, block_h]);
        // wiring space underneath, open at the bottom
        translate([wall, wall, -1]) cube([block_w - 2 * wall, block_d - 2 * wall, skirt_h + 1]);
        // cable exit at the back
        translate([block_w / 2 - 8, block_d - wall - 1, -1]) cube([16, wall + 2, 6]);
        for (s = [0, 1]) {
            // the slot
            translate([slot_x0(s), front_margin, floor_z]) cube([slot_x, slot_y, slot_depth + 1]);
            // groove for the key's polarising rib: front wall, switch-1 end
            translate([slot_x0(s) + clear + foot_w / 2 - rib_w / 2 - clear,
                       front_margin - rib_d - clear, floor_z])
                cube([rib_w + 2 * clear, rib_d + clear + 0.01, slot_depth + 1]);
            for (i = [0 : n_switches - 1]) {
                // switch pocket
                translate([switch_x(s, i) - sw_wid / 2 - sw_clear,
                           slot_yc - sw_len / 2 - sw_clear, skirt_h - 0.01])
                    cube([sw_wid + 2 * sw_clear, sw_len + 2 * sw_clear, pocket_h + 0.01]);
                // lever window through the floor
                translate([switch_x(s, i) - window_w / 2, slot_yc - window_l / 2,
                           skirt_h + pocket_h - 0.01])
                    cube([window_w, window_l, floor_t + 0.02]);
            }
            // slot LED and its label
            translate([slot_x0(s) + slot_x / 2, front_margin / 2, skirt_h - 1])
                cylinder(d = led_d, h = block_h, $fn = 32);
            translate([slot_x0(s) + slot_x / 2 - led_d, front_margin / 2, block_h - 0.6])
                linear_extrude(1)
                    text(s == 0 ? "ATTACKER" : "DEFENDER", size = 3.5,
                         halign = "right", valign = "center");
        }
        // status LED
        translate([block_w / 2, front_margin / 2, skirt_h - 1])
            cylinder(d = led_d, h = block_h, $fn = 32);
        // rods through the switches' mounting holes, the whole width
        for (dy = [-sw_hole_pitch / 2, sw_hole_pitch / 2])
            translate([-1, slot_yc + dy, skirt_h + sw_hole_z])
                rotate([0, 90, 0]) cylinder(d = sw_hole_d, h = block_w + 2, $fn = 16);
    }
}

slot_block();

// Preview only: a key seated in each slot.
for (s = [0, 1])
    %translate([slot_x0(s) + clear, front_margin + clear, floor_z])
        key_base(s == 0 ? "1110000" : "0000111");
