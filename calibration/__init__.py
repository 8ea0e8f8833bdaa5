"""Table geometry: marker sheet, homography, lens model and the zone layouts of each game."""
