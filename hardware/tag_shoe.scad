// Salpakan Arbiter: a tag shoe (RFID variants, the flagship first). Glue a
// piece's base into the recess on top; stick a 25 mm NTAG213 sticker into the
// shallow round recess underneath (it centres the sticker and keeps it
// flush). In a slot the shoe sits centred over the reader's antenna, so the
// sticker lands over it whichever way round the piece goes in.
//
//   set = "plastic"  the common plastic set's pieces ([piece] in parts.toml)
//   set = "wooden"   a wooden block set ([piece_wooden])
//   count = 14       shoes on one plate (print three plates for 42 pieces)
//
// Print flat, top up, no supports (the sticker recess is two layers deep).

include <gg_params.scad>

set = "plastic";
count = 1;
cols = 4;
gap = 3;

module tag_shoe(l = piece_l, w = piece_w) {
    rl = l + 2 * shoe_play;
    rw = w + 2 * shoe_play;
    difference() {
        cube([shoe_l, shoe_w, shoe_h]);
        translate([(shoe_l - rl) / 2, (shoe_w - rw) / 2, shoe_floor]) cube([rl, rw, shoe_h]);
        translate([shoe_l / 2, shoe_w / 2, -1])
            cylinder(d = tag_d + 0.8, h = 1.4, $fn = 96);
    }
}

for (i = [0 : count - 1])
    translate([(i % cols) * (shoe_l + gap), floor(i / cols) * (shoe_w + gap), 0])
        if (set == "wooden") tag_shoe(wpiece_l, wpiece_w); else tag_shoe();
