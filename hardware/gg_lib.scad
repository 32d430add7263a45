// Salpakan Arbiter: small helpers shared by the printed parts.
// FDM holes print undersize: every hole here is drawn with `allow` added
// (gg_params.scad) and enough facets to stay round.

include <gg_params.scad>

// A vertical round hole of nominal diameter d (allowance added), h high.
module hole(d, h, center = false) {
    cylinder(d = d + allow, h = h, center = center, $fn = max(24, ceil((d + allow) * 6)));
}

// Hole already including its allowance (a derived size from gg_params.scad).
module bore(d, h, center = false) {
    cylinder(d = d, h = h, center = center, $fn = max(24, ceil(d * 6)));
}

// A 5 mm LED seat cut from the top face at z = top: the flange sits in a
// counterbore so it is flush with the top, the body's bore runs down to the
// wiring space. Insert the LED from above.
module led_seat(top) {
    translate([0, 0, top - led_seat_t]) bore(led_seat_d, led_seat_t + 1);
    translate([0, 0, -1]) bore(led_bore, top + 2);
}

// A screw boss: a column of diameter d, height h, with a pilot hole.
module boss(d, h, pilot) {
    difference() {
        cylinder(d = d, h = h, $fn = 32);
        translate([0, 0, 1]) bore(pilot, h);
    }
}

// Engraved label, 0.6 mm deep, on a face at z = top.
module label(txt, top, size = 3.5, halign = "center") {
    translate([0, 0, top - 0.6])
        linear_extrude(1) text(txt, size = size, halign = halign, valign = "center");
}
