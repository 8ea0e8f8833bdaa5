"""Synthetic table scenes with exact ground truth: what a webcam over a card table would see.

Scenes are plain data in table millimetres (`scene`), seen by a posed, distorting camera
(`camera`), drawn with procedural surfaces, card designs, hands and clutter (`surfaces`,
`designs`, `hands`, `clutter`) by `render.SceneRenderer`, spoiled like a webcam image
(`effects`), and described exactly by a truth file (`truth`, schema in
`datasets/truth/`). `stills` writes random scenes for training with COCO annotations;
`footage` animates a simulated game into a clip. See `docs/synthetic.md`.
"""
