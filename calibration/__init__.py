"""Table geometry: marker sheet, homography, lens model and the zone layouts of each game.

`markers` (detection of the four corner markers), `homography` (the image → table fit),
`lens` (distortion and its ChArUco calibration), `table` (frames → profile), `profile` (the
saved, versioned camera ↔ table mapping), `layout` (zones per game and player count, as data
in `layouts/`), `bump` (noticing a moved camera while tracking), `sheets` (printable PDFs),
`draw` (previews), `sources` (frames from files), `synthetic` and `selftest` (rendered test
frames with known truth). Everything here is numpy and OpenCV; nothing reads the clock.
"""
