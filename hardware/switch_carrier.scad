// Salpakan Arbiter: the switch carrier, one per slot (print 2). Seven
// pockets in a row hold Omron D2HW-A201D pin-plunger switches standing on
// their bases, plunger up, body front to back; the straight PCB terminals go
// down through the slot in each pocket floor, where the wires are soldered.
// Two M3 x 12 pan-head screws from below, their heads sunk in counterbores
// (9 mm of thread in the block), fix the carrier under its slot: its top then
// presses on the slot floor's underside, which traps the switches, and its
// top closes the slot floor's two magnet holes (glue a magnet in each, the
// same pole up in every hole, opposite to the keys' magnets).
//
// The pocket depth IS the stack: gg_params.scad's pocket_depth is the height
// of the slot floor's underside over the switch base (hardware/geometry.py).
// It fits one way only: the key pin on its top, at the switch-1 end, enters a
// hole in the block's underside; turned round, the pin meets plastic.
// Solder the wires to each switch first (heat shrink over the joints), then
// thread them down through the wide terminal slot and seat the switch: no
// iron ever touches the printed pocket, so its measured depth stays true.
// Print it standing on its floor, pockets up (no bridges, no supports);
// check the pocket depth with calipers (pocket_depth +- the printing
// tolerance in parts.toml) before printing the block.

include <gg_params.scad>
use <gg_lib.scad>

carrier_len = 2 * foot_w + n_switches * pitch;  // the key's length
carrier_w = pocket_l + 2 * 6;
carrier_h = pocket_depth + carrier_floor;
screw_dy = pocket_l / 2 + 2.6;                  // screws beside the pockets

function carrier_switch_x(i) = foot_w + (i + 0.5) * pitch;
function carrier_screws() = [[foot_w / 2, carrier_w / 2 + screw_dy],
                             [carrier_len - foot_w / 2, carrier_w / 2 - screw_dy]];
// The key pin: the corner the screws leave free at the switch-1 end.
function carrier_pin() = [foot_w / 2, carrier_w / 2 - screw_dy];

module switch_carrier() {
    translate([carrier_pin()[0], carrier_pin()[1], carrier_h - 0.01])
        cylinder(d = carrier_pin_d, h = carrier_pin_h, $fn = 24);
    difference() {
        cube([carrier_len, carrier_w, carrier_h]);
        for (i = [0 : n_switches - 1]) {
            x = carrier_switch_x(i);
            // pocket, open at the top
            translate([x - pocket_w / 2, carrier_w / 2 - pocket_l / 2, carrier_floor])
                cube([pocket_w, pocket_l, pocket_depth + 1]);
            // terminal slot through the floor (three terminals in a row)
            translate([x - term_slot_w / 2, carrier_w / 2 - (pocket_l - 3) / 2, -1])
                cube([term_slot_w, pocket_l - 3, carrier_floor + 2]);
        }
        for (p = carrier_screws()) {
            translate([p[0], p[1], -1]) bore(m3_clear, carrier_h + 2);
            translate([p[0], p[1], -1]) bore(carrier_cbore_d, carrier_cbore_h + 1);
        }
        // number switch 1 on the underside
        translate([carrier_switch_x(0), 2.5, 0.6]) mirror([1, 0, 0])
            linear_extrude(1, center = true) text("1", size = 3, halign = "center", valign = "center");
    }
}

if (is_undef(GG_LIBRARY)) switch_carrier();
