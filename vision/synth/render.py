"""The scene renderer: table, cards, clutter and hands as a webcam sees them, with exact truth.

Drawing happens on an *undistorted canvas* (the base camera's pinhole image, enlarged to cover
everything the distorted lens sees): the table texture and the floor are warped in with plane
homographies, each card is warped straight from its face image onto its projected quad (only
over the quad's bounding box) after a soft shadow, and solids (mugs, hands) are filled
polygons shaded at the rim, with their shadows thrown along the light. One remap then applies
the lens distortion (and a small camera drift, which for a turn about the camera centre is a
homography), and the camera effects (light falloff, glare, blur, noise, JPEG) act on the
output. The static part of a clip — table, markers, cards nobody is touching, clutter — is
cached between frames, so a footage frame only redraws moving cards and hands.

Truth comes from geometry, not pixels: card corners are projected and distorted exactly; the
visible fraction counts each card's pixels in a label map drawn at reduced resolution in the
output image (cards in order, then hands and clutter on top), against the pixels it would
cover alone and unbounded — so a fully hidden card reads 0 and an untouched one exactly 1.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from vision.synth.camera import Camera, CanvasGeometry, canvas_geometry, output_maps
from vision.synth.clutter import clutter_solid, paper_texture
from vision.synth.effects import NoiseBank, RenderStyle, apply_camera_effects
from vision.synth.errors import SynthError
from vision.synth.faces import FaceLibrary
from vision.synth.hands import hand_solid
from vision.synth.noise import Array
from vision.synth.scene import (
    CardPlacement,
    ClutterItem,
    ClutterKind,
    MarkerPlacement,
    Scene,
    TokenPlacement,
)
from vision.synth.shapes import Solid
from vision.synth.surfaces import SurfaceKind, plain_texture, surface_texture
from vision.synth.tokens import side_colour, token_art
from vision.synth.truth import CameraTruth, CardTruth, LensTruth, MarkerTruth

Projector = Callable[[Array], Array]
OCCLUDER = 65535
_SHIFT = 4
_ONE = 1 << _SHIFT
# Cards less visible than this (under other cards, at the static layer) are drawn as a flat
# polygon in their edge colour: what shows of them is a sliver of card edge.
_CHEAP_BELOW = 0.12
# Outline points per card side in the label map (follows the lens's curvature of the edges).
_EDGE = 6


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class RenderResult:
    """A rendered frame and its truth (cards in the order of `Scene.all_cards()`)."""

    image: Array
    cards: tuple[CardTruth, ...]
    markers: tuple[MarkerTruth, ...]
    camera: Camera
    hands: int

    def camera_truth(self) -> CameraTruth:
        return camera_truth(self.camera)


def camera_truth(camera: Camera) -> CameraTruth:
    h = camera.homography()
    lens = camera.lens
    rows = tuple((float(r[0]), float(r[1]), float(r[2])) for r in h)
    return CameraTruth(
        homography=rows,
        lens=LensTruth(fx=lens.fx, fy=lens.fy, cx=lens.cx, cy=lens.cy, k1=lens.k1, k2=lens.k2),
    )


@lru_cache(maxsize=128)
def _rim_lut(rim_percent: int) -> Array:
    """8-bit gain for a blurred silhouette value: 1 inside, `1 - rim` far outside."""
    v = np.arange(256, dtype=np.float64) / 255.0
    return np.clip(255.0 * (1.0 - rim_percent / 100.0 * (1.0 - v)), 0, 255).astype(np.uint8)


@lru_cache(maxsize=128)
def _highlight_lut(percent: int) -> Array:
    v = np.arange(256, dtype=np.float64) / 255.0
    return np.clip(percent / 100.0 * 70.0 * v**4, 0, 255).astype(np.uint8)


def _soft(mask: Array, sigma: float) -> Array:
    """A Gaussian-blurred 8-bit mask, blurred at reduced size when the blur is wide."""
    if sigma <= 3.0:
        return cv2.GaussianBlur(mask, (0, 0), sigma)
    k = 2 if sigma <= 8.0 else 4
    h, w = mask.shape
    small = cv2.resize(mask, (max(1, w // k), max(1, h // k)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma / k)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


@lru_cache(maxsize=64)
def _marker_texture(marker_id: int) -> tuple[Array, float]:
    """A printed marker on white paper: (BGR image, margin as a fraction of the marker side)."""
    cell = 12
    side = 6 * cell
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
    margin = cell * 2
    img = np.full((side + 2 * margin, side + 2 * margin), 250, np.uint8)
    img[margin : margin + side, margin : margin + side] = marker
    out = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    out.setflags(write=False)
    return out, margin / side


def _edge_points(corners3: Array, per_edge: int) -> Array:
    """Points along the closed outline of a 3-D quad (`per_edge` segments per side)."""
    pts = []
    for i in range(4):
        a, b = corners3[i], corners3[(i + 1) % 4]
        for t in np.arange(per_edge) / per_edge:
            pts.append(a + (b - a) * t)
    return np.array(pts)


def _fixed(pts: Array) -> Array:
    """Pixel points → OpenCV fixed-point polygon vertices (far-off points clamped)."""
    p = np.clip(np.nan_to_num(np.asarray(pts, np.float64), nan=0.0), -1e5, 1e5)
    return np.round(p * _ONE).astype(np.int32).reshape(-1, 1, 2)


def _roi(pts: Array, size: tuple[int, int], pad: float) -> tuple[int, int, int, int] | None:
    """Integer box (x0, y0, x1, y1) around points, padded and clipped; None if off the canvas."""
    w, h = size
    x0 = max(0, math.floor(float(pts[:, 0].min()) - pad))
    y0 = max(0, math.floor(float(pts[:, 1].min()) - pad))
    x1 = min(w, math.ceil(float(pts[:, 0].max()) + pad) + 1)
    y1 = min(h, math.ceil(float(pts[:, 1].max()) + pad) + 1)
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    return x0, y0, x1, y1


@dataclass(slots=True)
class _Static:
    key: tuple[object, ...]
    refs: tuple[object, ...]
    canvas: Array
    geom: CanvasGeometry


@dataclass(slots=True)
class _Labels:
    key: tuple[object, ...]
    refs: tuple[object, ...]
    labels: Array
    full: list[int]


class SceneRenderer:
    """Renders scenes with the faces of a `FaceLibrary`; keeps one clip's static layer cached.

    `label_scale` is the resolution of the visibility label map relative to the frame.
    `canvas_margin` (fraction of the frame) leaves room for a drifting camera.
    """

    def __init__(self, faces: FaceLibrary, *, label_scale: float = 0.25,
                 canvas_margin: float = 0.0, noise_seed: int = 0) -> None:
        self.faces = faces
        self.label_scale = label_scale
        self.canvas_margin = canvas_margin
        self.noise_seed = noise_seed
        self._static: _Static | None = None
        self._labels: _Labels | None = None
        self._noise: NoiseBank | None = None
        self._geom_cache: dict[tuple[CardPlacement, ...], tuple[Array, Array]] = {}

    # --- public -----------------------------------------------------------------------------

    def render(self, scene: Scene, camera: Camera, style: RenderStyle, *,
               seed: int | tuple[int, ...] = 0) -> RenderResult:
        """Draw `scene` as `camera` records it with the look `style`, and its truth."""
        base = camera.base if camera.base is not None else camera
        rng = np.random.default_rng(seed)
        static = self._static_layer(scene, base, style)
        dynamic = bool(scene.moving_cards or scene.hands)
        canvas = static.canvas.copy() if dynamic else static.canvas
        to_canvas = self._projector(base, static.geom)
        light = style.shadow_shift()
        for pl in scene.moving_cards:
            self._draw_card(canvas, pl, to_canvas, style, light, support_mm=0.0, cheap=False)
        for hand in scene.hands:
            self._draw_solid(canvas, hand_solid(hand), to_canvas, style, light)
        frame = self._to_output(canvas, base, camera, static.geom)
        noise = self._noise_bank(camera.width, camera.height) if style.noise_sigma > 0 else None
        image = apply_camera_effects(frame, style, rng, noise)
        cards, markers = self._truth(scene, camera)
        return RenderResult(image=image, cards=cards, markers=markers, camera=camera,
                            hands=len(scene.hands))

    # --- static layer -----------------------------------------------------------------------

    def _static_layer(self, scene: Scene, base: Camera, style: RenderStyle) -> _Static:
        under = tuple(c for c in scene.clutter if not c.over_cards)
        over = tuple(c for c in scene.clutter if c.over_cards)
        key = (id(base), id(style), scene.table, scene.cards, scene.clutter, scene.markers,
               scene.tokens, self.canvas_margin)
        if self._static is not None and self._static.key == key:
            return self._static
        geom = canvas_geometry(base, margin=self.canvas_margin)
        canvas = np.empty((geom.size[1], geom.size[0], 3), np.uint8)
        self._draw_table(canvas, scene, base, geom)
        to_canvas = self._projector(base, geom)
        light = style.shadow_shift()
        for m in scene.markers:
            self._draw_marker(canvas, m, to_canvas)
        for item in under:
            self._draw_clutter(canvas, item, to_canvas, style, light)
        vis = self._static_visibility(scene, base)
        for i, pl in enumerate(scene.cards):
            cheap = vis[i] < _CHEAP_BELOW
            self._draw_card(canvas, pl, to_canvas, style, light, support_mm=pl.z_mm, cheap=cheap)
        for tok in scene.tokens:
            self._draw_token(canvas, tok, to_canvas, style, light)
        for item in over:
            self._draw_clutter(canvas, item, to_canvas, style, light)
        self._static = _Static(key=key, refs=(base, style), canvas=canvas, geom=geom)
        return self._static

    def _static_visibility(self, scene: Scene, base: Camera) -> list[float]:
        labels, full = self._card_labels(scene.cards, base)
        counts = np.bincount(labels.ravel(), minlength=len(scene.cards) + 2)
        return [float(counts[i + 1]) / full[i] if full[i] else 0.0 for i in range(len(scene.cards))]

    def _projector(self, base: Camera, geom: CanvasGeometry) -> Projector:
        off = np.array(geom.offset, np.float64)

        def to_canvas(pts3: Array) -> Array:
            return base.project_undistorted(pts3) + off

        return to_canvas

    def _draw_table(self, canvas: Array, scene: Scene, base: Camera, geom: CanvasGeometry) -> None:
        t = scene.table
        x0, y0, x1, y1 = t.extent_mm
        size = (round(x1 - x0), round(y1 - y0))
        ppm = t.px_per_mm
        shift = np.array([[1, 0, geom.offset[0]], [0, 1, geom.offset[1]], [0, 0, 1.0]])
        # Texture pixel (i, j) centre ↔ table point (x0 + (i + 0.5)/ppm, y0 + (j + 0.5)/ppm).
        tex_to_mm = np.array([[1 / ppm, 0, x0 + 0.5 / ppm], [0, 1 / ppm, y0 + 0.5 / ppm], [0, 0, 1.0]])
        h_table = shift @ base.homography() @ tex_to_mm
        cw, ch = geom.size
        # Does the table cover the whole canvas? (then the floor is never seen)
        inv = np.linalg.inv(shift @ base.homography())
        cc = np.array([[0, 0, 1], [cw - 1, 0, 1], [cw - 1, ch - 1, 1], [0, ch - 1, 1]], np.float64)
        mm = cc @ inv.T
        covered = bool(np.all(mm[:, 2] > 0))
        if covered:
            mm = mm[:, :2] / mm[:, 2:3]
            covered = bool(np.all((mm[:, 0] > x0) & (mm[:, 0] < x1) & (mm[:, 1] > y0) & (mm[:, 1] < y1)))
        if not covered:
            self._draw_floor(canvas, scene, base, shift)
        tex = (plain_texture(t.color, size, ppm) if t.color is not None
               else surface_texture(t.surface, t.seed, size, ppm))
        if covered:
            cv2.warpPerspective(tex, h_table, (cw, ch), dst=canvas, flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
            return
        cv2.warpPerspective(tex, h_table, (cw, ch), dst=canvas, flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_TRANSPARENT)
        # A darker band where the table's edge drops away.
        corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)
        if np.all(base.to_camera(corners)[:, 2] > 10.0):
            pts = base.project_undistorted(corners) + np.array(geom.offset, np.float64)
            cv2.polylines(canvas, [_fixed(pts)], True, (30, 30, 30), 3, cv2.LINE_AA, _SHIFT)

    def _draw_floor(self, canvas: Array, scene: Scene, base: Camera, shift: Array) -> None:
        t = scene.table
        x0, y0, x1, y1 = t.extent_mm
        pad = 1500.0
        fx0, fy0 = x0 - pad, y0 - pad
        fw, fh = int(x1 - x0 + 2 * pad), int(y1 - y0 + 2 * pad)
        fppm = 0.25
        tex = surface_texture(SurfaceKind.FLOOR, t.seed, (fw, fh), fppm)
        r = base.rotation
        d = t.floor_depth_mm
        m = base.lens.matrix() @ np.column_stack([r[:, 0], r[:, 1], base.translation + d * r[:, 2]])
        tex_to_mm = np.array([[1 / fppm, 0, fx0], [0, 1 / fppm, fy0], [0, 0, 1.0]])
        hf = shift @ m @ tex_to_mm
        cv2.warpPerspective(tex, hf, (canvas.shape[1], canvas.shape[0]), dst=canvas,
                            flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                            borderValue=(25, 25, 25))

    # --- cards ------------------------------------------------------------------------------

    def _card_size(self, pl: CardPlacement) -> tuple[float, float]:
        return pl.size_mm or self.faces.size_mm(pl.face_id)

    def _shadow(self, canvas: Array, polys3: list[Array], to_canvas: Projector, light: Array,
                blur_mm: float, strength: float) -> None:
        """Darken where the outlines throw their shadow (one soft mask for all of them).

        Each outline is `(n, 3)`: table x, y and the height above the surface that receives
        the shadow; the shadow lands at that surface's height, pushed along the light.
        """
        if strength <= 0.0 or not polys3:
            return
        flat = []
        for o in polys3:
            p = np.array(o, np.float64)
            p[:, :2] += p[:, 2:3] * light[None, :]
            p[:, 2] = 0.0
            flat.append(p)
        pxs = [to_canvas(p) for p in flat]
        allpx = np.concatenate(pxs)
        c = np.concatenate(flat).mean(axis=0)
        one = to_canvas(np.array([c, c + np.array([1.0, 0.0, 0.0])]))
        ppm = float(np.hypot(*(one[1] - one[0])))  # pixels per millimetre near the shadow
        sigma = max(0.7, blur_mm * ppm)
        box = _roi(allpx, (canvas.shape[1], canvas.shape[0]), 3 * sigma + 2)
        if box is None:
            return
        x0, y0, x1, y1 = box
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(mask, [_fixed(px - [x0, y0]) for px in pxs], 255, cv2.LINE_AA, _SHIFT)
        mask = _soft(mask, sigma)
        # canvas *= 1 - strength * mask, in 8-bit fixed point.
        keep = 255 - cv2.convertScaleAbs(mask, alpha=strength)
        roi = canvas[y0:y1, x0:x1]
        cv2.multiply(roi, cv2.merge([keep, keep, keep]), dst=roi, scale=1.0 / 255.0)

    def _draw_card(self, canvas: Array, pl: CardPlacement, to_canvas: Projector, style: RenderStyle,
                   light: Array, *, support_mm: float, cheap: bool) -> None:
        size = self._card_size(pl)
        c3 = pl.corners_3d(size)
        quad = to_canvas(c3)
        box = _roi(quad, (canvas.shape[1], canvas.shape[0]), 2)
        if box is None:
            return
        if style.shadow_strength > 0 and (not cheap or pl.z_mm < 1.0):
            outline = _edge_points(c3, 2)
            outline[:, 2] += style.card_lift_mm - support_mm
            blur = 0.6 + 0.25 * style.card_lift_mm + 0.08 * float(outline[:, 2].max())
            self._shadow_at(canvas, [outline], to_canvas, light, blur, style.shadow_strength,
                            support_mm)
        if pl.sleeve:
            grown = self._grown(c3, size, 1.6)
            self._blend_poly(canvas, to_canvas(grown), (225, 225, 225), 0.28)
        if cheap:
            col = np.array(self.faces.edge_color(pl.face_id)) * (0.88 + 0.1 * ((pl.track or 0) % 3) / 2)
            cv2.fillConvexPoly(canvas, _fixed(quad), col.tolist(), cv2.LINE_AA, _SHIFT)
            return
        edges = np.hypot(*(quad - np.roll(quad, -1, axis=0)).T)
        ppm = float(max(edges[0] / size[0], edges[1] / size[1], edges[2] / size[0], edges[3] / size[1]))
        level = self.faces.level(pl.face_id, ppm, pl.corner_radius_mm)
        img = level.image
        shade = 1.0
        if pl.tilt_deg:
            # A standing card faces the light differently from the table.
            n_up = pl.normal_up()
            shade = 0.78 + 0.22 * n_up
        if pl.sleeve and style.sleeve_glare > 0:
            img = self._sleeve_band(img, pl, style.sleeve_glare)
        self._warp_onto(canvas, img, level.mask, quad, box, shade)

    def _draw_token(self, canvas: Array, tok: TokenPlacement, to_canvas: Projector, style: RenderStyle,
                    light: Array) -> None:
        """A disc or a die: its side walls as one shaded hull, its printed top warped in."""
        top_h = tok.top_mm
        n = 20
        ang = np.linspace(0.0, 2 * np.pi, n, endpoint=False) + math.radians(tok.rotation_deg)
        if tok.is_die:
            ring = tok.square_3d(0.0)[:, :2] - np.asarray(tok.center_mm)
        else:
            ring = np.column_stack([np.cos(ang), np.sin(ang)]) * (tok.size_mm / 2)
        base = np.column_stack([ring + np.asarray(tok.center_mm), np.full(len(ring), tok.z_mm)])
        top = base.copy()
        top[:, 2] = top_h
        if style.shadow_strength > 0:
            outline = top.copy()
            outline[:, 2] = top_h - tok.z_mm + style.card_lift_mm
            self._shadow_at(canvas, [outline], to_canvas, light, 0.5 + 0.05 * top_h,
                            style.shadow_strength * 0.9, tok.z_mm)
        hull = to_canvas(np.concatenate([base, top]))
        hull = cv2.convexHull(hull.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        box = _roi(hull, (canvas.shape[1], canvas.shape[0]), 2)
        if box is None:
            return
        side = np.array(side_colour(tok.token, tok.pips), np.float64) * 0.82
        cv2.fillConvexPoly(canvas, _fixed(hull), side.tolist(), cv2.LINE_AA, _SHIFT)
        img, mask = token_art(tok.token, tok.pips)
        quad = to_canvas(tok.square_3d(top_h))
        qbox = _roi(quad, (canvas.shape[1], canvas.shape[0]), 2)
        if qbox is not None:
            self._warp_onto(canvas, img, mask, quad, qbox)

    def _grown(self, c3: Array, size: tuple[float, float], by_mm: float) -> Array:
        """The card's corners pushed `by_mm` outwards in the card's plane."""
        u = (c3[1] - c3[0]) / size[0]
        v = (c3[3] - c3[0]) / size[1]
        out = c3.copy()
        for i, (su, sv) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
            out[i] = c3[i] + (su * u + sv * v) * by_mm
        return out

    def _blend_poly(self, canvas: Array, pts: Array, color: tuple[int, int, int], alpha: float) -> None:
        box = _roi(pts, (canvas.shape[1], canvas.shape[0]), 2)
        if box is None:
            return
        x0, y0, x1, y1 = box
        roi = canvas[y0:y1, x0:x1]
        layer = roi.copy()
        cv2.fillConvexPoly(layer, _fixed(pts - [x0, y0]), color, cv2.LINE_AA, _SHIFT)
        cv2.addWeighted(layer, alpha, roi, 1.0 - alpha, 0.0, dst=roi)

    def _sleeve_band(self, img: Array, pl: CardPlacement, strength: float) -> Array:
        """A glossy sleeve's specular band across the card (stable per card)."""
        rng = np.random.default_rng(zlib.crc32(f"{pl.face_id}|{pl.track}".encode()))
        h, w = img.shape[:2]
        a = rng.uniform(0, np.pi)
        ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
        d = (xs - w * rng.uniform(0.2, 0.8)) * math.cos(a) + (ys - h * rng.uniform(0.2, 0.8)) * math.sin(a)
        width = rng.uniform(0.05, 0.2) * max(h, w)
        band = strength * np.exp(-(d / width) ** 2)
        out = img.astype(np.float32) * 0.94 + 10.0 + band[..., None]
        return np.clip(out, 0, 255).astype(np.uint8)

    def _warp_onto(self, canvas: Array, img: Array, mask: Array, quad: Array,
                   box: tuple[int, int, int, int], shade: float = 1.0) -> None:
        x0, y0, x1, y1 = box
        h, w = img.shape[:2]
        src = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]], np.float32)
        dst = (quad - [x0, y0]).astype(np.float32)
        m = cv2.getPerspectiveTransform(src, dst)
        size = (x1 - x0, y1 - y0)
        warped = cv2.warpPerspective(img, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        alpha = cv2.warpPerspective(mask, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                                    borderValue=0)
        if shade != 1.0:
            warped = cv2.convertScaleAbs(warped, alpha=shade)
        roi = canvas[y0:y1, x0:x1]
        a = alpha.astype(np.float32) * (1.0 / 255.0)
        roi[:] = cv2.blendLinear(warped, roi, a, 1.0 - a)

    def _draw_marker(self, canvas: Array, m: MarkerPlacement, to_canvas: Projector) -> None:
        tex, margin = _marker_texture(m.marker_id)
        side = m.size_mm * (1 + 2 * margin)
        pl = CardPlacement(face_id="", center_mm=m.center_mm, rotation_deg=m.rotation_deg, z_mm=0.05)
        quad = to_canvas(pl.corners_3d((side, side)))
        box = _roi(quad, (canvas.shape[1], canvas.shape[0]), 2)
        if box is None:
            return
        self._warp_onto(canvas, tex, np.full(tex.shape[:2], 255, np.uint8), quad, box)

    # --- solids -----------------------------------------------------------------------------

    def _draw_clutter(self, canvas: Array, item: ClutterItem, to_canvas: Projector, style: RenderStyle,
                      light: Array) -> None:
        if item.kind is ClutterKind.PAPER:
            tex = paper_texture(item)
            pl = CardPlacement(face_id="", center_mm=item.center_mm, rotation_deg=item.rotation_deg,
                               z_mm=0.1, corner_radius_mm=0.0)
            c3 = pl.corners_3d(item.size_mm)
            quad = to_canvas(c3)
            box = _roi(quad, (canvas.shape[1], canvas.shape[0]), 2)
            if box is None:
                return
            if style.shadow_strength > 0:
                outline = _edge_points(c3, 2)
                outline[:, 2] = style.card_lift_mm
                self._shadow(canvas, [outline], to_canvas, light,
                             0.6 + 0.25 * style.card_lift_mm, style.shadow_strength * 0.8)
            self._warp_onto(canvas, tex, np.full(tex.shape[:2], 255, np.uint8), quad, box)
            return
        solid = clutter_solid(item)
        if solid is not None:
            self._draw_solid(canvas, solid, to_canvas, style, light)

    @staticmethod
    def _hull3(o: Array, light: Array) -> Array:
        """An outline whose shadow is the convex hull of the shadows of its points."""
        moved = o[:, :2] + o[:, 2:3] * light[None, :]
        hull = cv2.convexHull(moved.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        return np.column_stack([hull, np.zeros(len(hull))])

    def _shadow_at(self, canvas: Array, polys3: list[Array], to_canvas: Projector, light: Array,
                   blur_mm: float, strength: float, surface_mm: float) -> None:
        """`_shadow` onto a surface `surface_mm` above the table (a card lying on a pile)."""
        if surface_mm == 0.0:
            self._shadow(canvas, polys3, to_canvas, light, blur_mm, strength)
            return

        def lifted(pts: Array) -> Array:
            q = np.array(pts, np.float64)
            q[:, 2] += surface_mm
            return to_canvas(q)

        self._shadow(canvas, polys3, lifted, light, blur_mm, strength)

    def _part_polys(self, solid: Solid, project: Projector) -> list[Array]:
        polys = []
        for part in solid.parts:
            px = project(part.outline)
            if part.hull:
                px = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2).astype(np.float64)
            polys.append(px)
        return polys

    def _draw_solid(self, canvas: Array, solid: Solid, to_canvas: Projector, style: RenderStyle,
                    light: Array) -> None:
        if solid.casts_shadow and style.shadow_strength > 0:
            outlines = []
            for part in solid.parts:
                o = part.outline
                if part.hull:
                    # A solid's shadow also covers its own footprint.
                    o = np.concatenate([o, np.column_stack([o[:, :2], np.zeros(len(o))])])
                outlines.append(o)
            mean_h = float(np.mean([o[:, 2].mean() for o in outlines]))
            if any(p.hull for p in solid.parts):
                outlines = [self._hull3(o, light) for o in outlines]
            self._shadow(canvas, outlines, to_canvas, light, 1.0 + 0.06 * mean_h,
                         style.shadow_strength * (0.9 - 0.3 * min(1.0, mean_h / 300.0)))
        polys = self._part_polys(solid, to_canvas)
        allpts = np.concatenate(polys)
        box = _roi(allpts, (canvas.shape[1], canvas.shape[0]), 3)
        if box is None:
            return
        x0, y0, x1, y1 = box
        roi = canvas[y0:y1, x0:x1]
        layer = roi.copy()
        mask = np.zeros(roi.shape[:2], np.uint8)
        for part, px in zip(solid.parts, polys, strict=True):
            local = _fixed(px - [x0, y0])
            cv2.fillPoly(layer, [local], part.color, cv2.LINE_AA, _SHIFT)
            cv2.fillPoly(mask, [local], 255, cv2.LINE_AA, _SHIFT)
            if part.edge_color is not None:
                cv2.polylines(layer, [local], True, part.edge_color, 1, cv2.LINE_AA, _SHIFT)
        area = float(np.count_nonzero(mask))
        if area == 0:
            return
        soft = _soft(mask, max(1.0, 0.035 * math.sqrt(area)))
        # Rounded things darken towards their silhouette and catch a little light inside.
        keep = cv2.LUT(soft, _rim_lut(round(solid.rim_shade * 100)))
        cv2.multiply(layer, cv2.merge([keep, keep, keep]), dst=layer, scale=1.0 / 255.0)
        if solid.highlight:
            hl = cv2.LUT(soft, _highlight_lut(round(solid.highlight * 100)))
            cv2.add(layer, cv2.merge([hl, hl, hl]), dst=layer)
        a = mask.astype(np.float32) * (1.0 / 255.0)
        roi[:] = cv2.blendLinear(layer, roi, a, 1.0 - a)

    # --- output and truth -------------------------------------------------------------------

    def _to_output(self, canvas: Array, base: Camera, camera: Camera, geom: CanvasGeometry) -> Array:
        drifted = camera is not base
        if geom.maps is None and not drifted:
            return canvas
        maps = geom.maps if not drifted else output_maps(base, geom, camera.drift)
        assert maps is not None
        return cv2.remap(canvas, maps, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    def _noise_bank(self, w: int, h: int) -> NoiseBank:
        if self._noise is None or (self._noise.width, self._noise.height) != (w, h):
            self._noise = NoiseBank(w, h, seed=self.noise_seed)
        return self._noise

    def _label_geometry(self, camera: Camera) -> tuple[float, int, int]:
        s = self.label_scale
        return s, math.ceil(camera.width * s), math.ceil(camera.height * s)

    def _to_label(self, px: Array, s: float) -> Array:
        return (px + 0.5) * s - 0.5

    def _geometry(self, cards: tuple[CardPlacement, ...]) -> tuple[Array, Array]:
        """Corners `(n, 4, 3)` and outline points `(n, 4 * _EDGE, 3)` of cards, cached per set."""
        key = cards
        hit = self._geom_cache.get(key)
        if hit is not None:
            return hit
        if cards:
            corners = np.stack([pl.corners_3d(self._card_size(pl)) for pl in cards])
        else:
            corners = np.zeros((0, 4, 3))
        t = (np.arange(_EDGE) / _EDGE)[None, None, :, None]
        a = corners[:, :, None, :]
        b = np.roll(corners, -1, axis=1)[:, :, None, :]
        edges = (a + (b - a) * t).reshape(len(cards), 4 * _EDGE, 3)
        if len(self._geom_cache) > 8:
            self._geom_cache.clear()
        self._geom_cache[key] = (corners, edges)
        return corners, edges

    def _rasterise(self, labels: Array, cards: tuple[CardPlacement, ...], camera: Camera,
                   first_label: int) -> list[int]:
        """Draw cards into `labels` (label = first_label + i); returns each card's full count."""
        if not cards:
            return []
        s = self.label_scale
        corners, edges = self._geometry(cards)
        n = len(cards)
        depth = camera.to_camera(corners.reshape(-1, 3))[:, 2].reshape(n, 4)
        pts = self._to_label(camera.project(edges.reshape(-1, 3)), s).reshape(n, -1, 2)
        fixed = np.round(pts * _ONE).astype(np.int32)
        full = []
        for i in range(n):
            if np.any(depth[i] <= 1.0):
                full.append(0)
                continue
            fx = fixed[i].reshape(-1, 1, 2)
            cv2.fillPoly(labels, [fx], first_label + i, cv2.LINE_8, _SHIFT)
            full.append(self._full_count(fx))
        return full

    def _card_labels(self, cards: tuple[CardPlacement, ...], camera: Camera) -> tuple[Array, list[int]]:
        """Label map (uint16, card i → i+1) of `cards` in order, and each card's full pixel count."""
        key = (id(camera), cards, self.label_scale)
        if self._labels is not None and self._labels.key == key:
            return self._labels.labels, self._labels.full
        _, lw, lh = self._label_geometry(camera)
        labels = np.zeros((lh, lw), np.uint16)
        full = self._rasterise(labels, cards, camera, 1)
        labels.setflags(write=False)
        self._labels = _Labels(key=key, refs=(camera,), labels=labels, full=full)
        return labels, full

    @staticmethod
    def _full_count(fx: Array) -> int:
        """Pixels a fixed-point polygon covers on an unbounded grid (same rasterisation)."""
        flat = fx.reshape(-1, 2)
        lo = flat.min(axis=0) // _ONE - 1
        hi = flat.max(axis=0) // _ONE + 2
        local = fx - (lo * _ONE).astype(np.int32)
        m = np.zeros((int(hi[1] - lo[1]) + 1, int(hi[0] - lo[0]) + 1), np.uint8)
        cv2.fillPoly(m, [local], 1, cv2.LINE_8, _SHIFT)
        return int(cv2.countNonZero(m))

    def _truth(self, scene: Scene, camera: Camera) -> tuple[tuple[CardTruth, ...], tuple[MarkerTruth, ...]]:
        all_cards = scene.all_cards()
        if len(all_cards) >= OCCLUDER:
            raise SynthError(f"a scene may hold at most {OCCLUDER - 1} cards, got {len(all_cards)}")
        static_labels, static_full = self._card_labels(scene.cards, camera)
        s, lw, lh = self._label_geometry(camera)
        over = [c for c in scene.clutter if c.over_cards]
        labels = static_labels
        full = list(static_full)
        if scene.moving_cards or scene.hands or over:
            labels = static_labels.copy()
            full += self._rasterise(labels, scene.moving_cards, camera, len(scene.cards) + 1)
            solids = [clutter_solid(c) for c in over if c.kind is not ClutterKind.PAPER]
            solids += [hand_solid(h) for h in scene.hands]
            for solid in solids:
                if solid is None or not solid.occludes:
                    continue
                polys = [_fixed(self._to_label(px, s)) for px in self._part_polys(solid, camera.project)]
                cv2.fillPoly(labels, polys, OCCLUDER, cv2.LINE_8, _SHIFT)
            for c in over:
                if c.kind is ClutterKind.PAPER:
                    pl = CardPlacement(face_id="", center_mm=c.center_mm, rotation_deg=c.rotation_deg)
                    px = camera.project(_edge_points(pl.corners_3d(c.size_mm), 4))
                    cv2.fillPoly(labels, [_fixed(self._to_label(px, s))], OCCLUDER, cv2.LINE_8, _SHIFT)
        counts = np.bincount(labels.ravel(), minlength=OCCLUDER + 1)
        n = len(all_cards)
        if n:
            c_static, _ = self._geometry(scene.cards)
            c_moving, _ = self._geometry(scene.moving_cards)
            corners3 = np.concatenate([c_static, c_moving])
            corners = camera.project(corners3.reshape(-1, 3)).reshape(n, 4, 2)
        else:
            corners = np.zeros((0, 4, 2))
        # Corner visibility: the card's own label just inside each corner, inside the frame.
        centre = corners.mean(axis=1, keepdims=True)
        probe = np.rint(self._to_label(corners + (centre - corners) * 0.03, s)).astype(np.int64)
        inside = ((corners[..., 0] >= 0) & (corners[..., 0] <= camera.width - 1)
                  & (corners[..., 1] >= 0) & (corners[..., 1] <= camera.height - 1)
                  & (probe[..., 0] >= 0) & (probe[..., 0] < lw) & (probe[..., 1] >= 0) & (probe[..., 1] < lh))
        px = np.clip(probe[..., 0], 0, lw - 1)
        py = np.clip(probe[..., 1], 0, lh - 1)
        own = labels[py, px] == (np.arange(n) + 1)[:, None]
        cvis = inside & own
        out = []
        for i, pl in enumerate(all_cards):
            vis = float(counts[i + 1]) / full[i] if full[i] else 0.0
            q = corners[i]
            out.append(CardTruth(
                face=pl.face_id,
                corners=((float(q[0, 0]), float(q[0, 1])), (float(q[1, 0]), float(q[1, 1])),
                         (float(q[2, 0]), float(q[2, 1])), (float(q[3, 0]), float(q[3, 1]))),
                visible=min(1.0, vis),
                corner_visible=(bool(cvis[i, 0]), bool(cvis[i, 1]), bool(cvis[i, 2]), bool(cvis[i, 3])),
                zone=pl.zone,
                track=pl.track,
                card=pl.card,
            ))
        markers = []
        for m in scene.markers:
            q = camera.project(m.corners_3d())
            markers.append(MarkerTruth(
                id=m.marker_id,
                corners=((float(q[0, 0]), float(q[0, 1])), (float(q[1, 0]), float(q[1, 1])),
                         (float(q[2, 0]), float(q[2, 1])), (float(q[3, 0]), float(q[3, 1]))),
            ))
        return tuple(out), tuple(markers)
