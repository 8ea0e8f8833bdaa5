"""Webcam-like card crops from a clean face image, for training and measuring the identifier.

A face image is first reduced to a *master*: portrait by the preprocessing rule
(`vision.preprocess.to_portrait`), `MASTER_WIDTH` × `MASTER_HEIGHT` pixels. `webcam_crop` then
spoils a master the way a rectified webcam crop is spoiled, each effect drawn from the given
generator: a finger or an overlapping card hiding up to `max_occlusion` of the card, a mug or
glass beside it leaning over up to `max_object` of it (`_object`), a neighbouring card of a
row or fan lying over one side of it, up to `max_neighbour` of its width or height
(`_neighbour`, given the neighbour's master), a glare
spot, uneven light, imperfect corners (each corner off by up to `corner_jitter` of the card's
size, so a sliver of table shows or an edge is cut), a slipped edge (one edge of the quad moved
in or out by up to `max_edge_slip` of the card and along itself by half that: what the finder's
corners do where a card's border fades into the cloth, a pile's side shows under its top card,
or a neighbour's edge is taken for the card's own), a low resolution (the card `min_width` to
`max_width` pixels wide; the preprocessing enlarges it again), defocus, motion and Gaussian
blur, white balance, brightness, contrast and gamma shifts, sensor noise and JPEG. The same
function makes training batches and evaluation crops; only the seeds differ (`EVAL_CROPS`
leaves out slipped edges and cards under 40 px whatever the training mix was).
`sibling` makes a near-copy of a design with one small local change (a mark, a numeral, a
bar, a recoloured region), the kind of difference that separates two faces of one real deck.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from vision.preprocess import to_portrait

MASTER_WIDTH: Final = 128
MASTER_HEIGHT: Final = 180
_SKIN = ((205, 224, 255), (163, 190, 234), (120, 160, 210), (70, 110, 160), (45, 70, 110))


@dataclass(frozen=True, slots=True, kw_only=True)
class CropConfig:
    """How hard `webcam_crop` spoils a card (defaults: the training mix; `EVAL_CROPS` is the
    accuracy report's). A slipped edge, an object and a neighbour draw from the generator only
    when their probability is above 0, so a mix without them makes the same crops as before
    they existed."""

    corner_jitter: float = 0.03
    edge_slip_probability: float = 0.3
    max_edge_slip: float = 0.2
    min_width: int = 24
    max_width: int = 128
    occlusion_probability: float = 0.3
    max_occlusion: float = 0.25
    object_probability: float = 0.0
    max_object: float = 0.55
    neighbour_probability: float = 0.0
    max_neighbour: float = 0.6
    glare_probability: float = 0.25
    blur_probability: float = 0.5
    defocus_probability: float = 0.15
    motion_probability: float = 0.15
    noise_probability: float = 0.7
    jpeg_probability: float = 0.5
    colour_probability: float = 0.9
    light_probability: float = 0.5

    @classmethod
    def clean(cls) -> CropConfig:
        """No effect at all except the resize (for tests and gallery views)."""
        return cls(corner_jitter=0.0, edge_slip_probability=0.0, occlusion_probability=0.0,
                   object_probability=0.0, glare_probability=0.0, blur_probability=0.0, defocus_probability=0.0, motion_probability=0.0,
                   noise_probability=0.0, jpeg_probability=0.0, colour_probability=0.0,
                   light_probability=0.0)


OPTIONAL_EFFECTS: Final = (
    ("edge_slip_probability", ("max_edge_slip",)),
    ("object_probability", ("max_object",)),
    ("neighbour_probability", ("max_neighbour",)),
)
"""The effects of `CropConfig` that draw from the generator only when their probability is
above 0, each (its probability field, its other fields): a mix with one off makes the very crops
of a mix made before that effect existed (what resuming a training checkpoint relies on)."""

DEFAULT_CROPS: Final = CropConfig()
"""The training mix (also the calibration's); `cardtrack train identifier --edge-slip P
--min-width W` changes it (`--edge-slip 0 --min-width 40 --steps 1800` is the model before,
see `models/identifier.md`)."""
SCENE_CROPS: Final = CropConfig(corner_jitter=0.01, edge_slip_probability=0.0, min_width=80, max_width=80,
                                occlusion_probability=0.1, glare_probability=0.15, blur_probability=0.2,
                                defocus_probability=0.0, motion_probability=0.0)
"""What is done again to a card cut out of a rendered scene (`vision.train.scenes`), which has
the render's blur and the finder's corners already: corners off by 1 %, a finger now and then,
light, colour, noise and JPEG, at the model's input width."""
EVAL_CROPS: Final = CropConfig(edge_slip_probability=0.0, min_width=40, object_probability=0.0)
"""The accuracy report's mix, whatever a model was trained on: no slipped edges or objects,
cards 40 px wide or more, so that every model's figures compare. Slipped edges and smaller cards are
measured on rendered scenes cut at the finder's corners instead
(`vision.train.evaluate.scene_queries`)."""


def master(image: np.ndarray) -> np.ndarray:
    """A face image as a portrait master of `MASTER_WIDTH` × `MASTER_HEIGHT` (BGR uint8)."""
    img = to_portrait(image)
    return cv2.resize(img, (MASTER_WIDTH, MASTER_HEIGHT), interpolation=cv2.INTER_AREA)


def rotate_180(image: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(image[::-1, ::-1])


def is_symmetric(master_image: np.ndarray, tolerance: float = 0.035) -> bool:
    """True when a master looks the same turned 180° (mean difference of a 16×24 thumbnail
    below `tolerance` of full scale): such a face cannot show its orientation."""
    small = cv2.resize(master_image, (16, 24), interpolation=cv2.INTER_AREA).astype(np.float32)
    return float(np.abs(small - small[::-1, ::-1]).mean()) < tolerance * 255.0


def _occlude(img: np.ndarray, rng: np.random.Generator, max_fraction: float) -> None:
    """A finger reaching in from an edge, or the corner of another card lying over this one."""
    h, w = img.shape[:2]
    area = rng.uniform(0.04, max_fraction) * h * w
    if rng.random() < 0.6:
        tone = np.array(_SKIN[int(rng.integers(len(_SKIN)))], np.float32) * rng.uniform(0.8, 1.15)
        width = rng.uniform(0.14, 0.24) * w
        length = min(area / width, 1.2 * h)
        side = int(rng.integers(4))
        t = rng.uniform(0.15, 0.85)
        start = [(t * w, -5.0), (w + 5.0, t * h), (t * w, h + 5.0), (-5.0, t * h)][side]
        inward = [(0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (1.0, 0.0)][side]
        ang = math.atan2(inward[1], inward[0]) + rng.uniform(-0.6, 0.6)
        end = (start[0] + length * math.cos(ang), start[1] + length * math.sin(ang))
        mask = np.zeros((h, w), np.uint8)
        cv2.line(mask, (round(start[0]), round(start[1])), (round(end[0]), round(end[1])), 255,
                 max(1, round(width)), cv2.LINE_AA)
        cv2.circle(mask, (round(end[0]), round(end[1])), max(1, round(width / 2)), 255, -1,
                   cv2.LINE_AA)
        m = mask.astype(np.float32)[..., None] / 255.0
        shade = cv2.GaussianBlur(m, (0, 0), width / 4 + 1)
        shade = shade[..., None] if shade.ndim == 2 else shade
        colour = tone * (0.65 + 0.35 * shade)
        img[:] = img * (1 - m) + colour * m
    else:
        # Another card's corner: a rotated rectangle in a flat colour with a darker edge.
        edge = math.sqrt(area * 2)
        cx, cy = [(0, 0), (w, 0), (w, h), (0, h)][int(rng.integers(4))]
        ang = rng.uniform(0, 180)
        box = cv2.boxPoints(((float(cx), float(cy)), (edge, edge * rng.uniform(0.7, 1.4)), ang))
        colour = rng.uniform(20, 240, 3).tolist()
        cv2.fillPoly(img, [np.round(box).astype(np.int32)], colour, cv2.LINE_AA)
        cv2.polylines(img, [np.round(box).astype(np.int32)], True,
                      [c * 0.5 for c in colour], 2, cv2.LINE_AA)


def _glare(img: np.ndarray, rng: np.random.Generator) -> None:
    h, w = img.shape[:2]
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    sx = rng.uniform(0.05, 0.3) * w
    sy = sx * rng.uniform(0.4, 2.0)
    ys, xs = np.ogrid[0:h, 0:w]
    blob = np.exp(-0.5 * (((xs - cx) / sx) ** 2 + ((ys - cy) / sy) ** 2)).astype(np.float32)
    strength = rng.uniform(0.3, 1.0)
    img += (255.0 - img) * (strength * blob)[..., None]


def _light(img: np.ndarray, rng: np.random.Generator) -> None:
    h, w = img.shape[:2]
    ang = rng.uniform(0, 2 * math.pi)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    t = ((xs / w - 0.5) * math.cos(ang) + (ys / h - 0.5) * math.sin(ang))
    img *= (1.0 + rng.uniform(0.0, 0.5) * t)[..., None]


_NOISE_BANK = np.random.default_rng(0x9015E).standard_normal(1 << 20).astype(np.float32)


def _noise(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Unit Gaussian noise of `shape`, cut from a pre-drawn bank at a random offset (drawing
    fresh normals per crop would cost more than the rest of the crop)."""
    n = int(np.prod(shape))
    start = int(rng.integers(0, _NOISE_BANK.size - n))
    return _NOISE_BANK[start:start + n].reshape(shape)


def _disk(radius: float) -> np.ndarray:
    r = max(1, math.ceil(radius))
    ys, xs = np.mgrid[-r:r + 1, -r:r + 1]
    k = (np.hypot(xs, ys) <= radius + 0.5).astype(np.float32)
    return k / k.sum()


def _motion(length: float, angle: float) -> np.ndarray:
    n = max(3, math.ceil(length) | 1)
    k = np.zeros((n, n), np.float32)
    c = n // 2
    dx, dy = math.cos(angle) * length / 2, math.sin(angle) * length / 2
    cv2.line(k, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1, cv2.LINE_AA)
    return k / max(float(k.sum()), 1e-6)


def _object(img: np.ndarray, rng: np.random.Generator, max_fraction: float) -> None:
    """Something standing beside the card whose body, seen from an oblique camera, leans over
    it: a mug, a glass, a phone. A large rounded blob coming in from one side, in a flat
    colour shaded across and with a lighter rim, hiding a quarter to `max_fraction` of the card."""
    h, w = img.shape[:2]
    side = int(rng.integers(4))
    depth = rng.uniform(0.25, max(0.25, max_fraction))  # share of the card it reaches over
    across = (w, h)[side % 2]  # the length of the side it comes in from
    along = (h, w)[side % 2]
    centre = rng.uniform(0.2, 0.8) * across
    radius = rng.uniform(0.55, 1.0) * across
    reach = depth * along
    # An ellipse whose far edge reaches `reach` into the card, its centre outside the card.
    axes = (radius, rng.uniform(0.8, 1.3) * radius)
    inner = reach - axes[1]
    cx, cy = [(centre, inner), (w - inner, centre), (centre, h - inner), (inner, centre)][side]
    size = (axes[0], axes[1]) if side % 2 == 0 else (axes[1], axes[0])
    mask = np.zeros((h, w), np.uint8)
    cv2.ellipse(mask, ((float(cx), float(cy)), (2 * size[0], 2 * size[1]), float(rng.uniform(-15, 15))),
                255, -1, cv2.LINE_AA)
    m = mask.astype(np.float32)[..., None] / 255.0
    colour = rng.uniform(15, 240, 3).astype(np.float32)
    ramp = np.linspace(-1.0, 1.0, w if side % 2 == 0 else h, dtype=np.float32)
    ramp = ramp[None, :, None] if side % 2 == 0 else ramp[:, None, None]
    shade = colour * (1.0 + np.float32(rng.uniform(0.1, 0.35)) * ramp)
    rim = cv2.dilate(mask, np.ones((3, 3), np.uint8)) - cv2.erode(mask, np.ones((3, 3), np.uint8))
    shade = np.where(rim[..., None] > 0, np.minimum(255.0, shade * 1.3 + 20), shade)
    img[:] = img * (1 - m) + shade * m


def _neighbour(img: np.ndarray, other: np.ndarray, rng: np.random.Generator, max_fraction: float) -> None:
    """Another card (`other`, a master) lying over one side of this one, as in a row or a fan:
    the same size, turned by a few degrees, covering 20 % to `max_fraction` of the card across
    that side, with a thin shadow along its edge."""
    h, w = img.shape[:2]
    side = int(rng.integers(4))  # the neighbour lies to the left, right, top or bottom
    cover = rng.uniform(0.2, max(0.2, max_fraction))
    dx, dy = [(-(1 - cover) * w, 0.0), ((1 - cover) * w, 0.0), (0.0, -(1 - cover) * h), (0.0, (1 - cover) * h)][side]
    dx += rng.uniform(-0.08, 0.08) * w * (side >= 2)
    dy += rng.uniform(-0.08, 0.08) * h * (side < 2)
    theta = rng.uniform(-7.0, 7.0)
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), theta, 1.0)
    rot[:, 2] += (dx, dy)
    card = cv2.resize(other, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    warped = cv2.warpAffine(card, rot, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    mask = cv2.warpAffine(np.ones((h, w), np.float32), rot, (w, h), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT)
    shadow = np.clip(cv2.GaussianBlur(mask, (0, 0), max(0.6, 0.02 * w)) - mask, 0.0, 1.0) * rng.uniform(0.2, 0.6)
    m = mask[..., None]
    img[:] = img * (1 - shadow[..., None]) * (1 - m) + warped * m


def webcam_crop(master_image: np.ndarray, rng: np.random.Generator,
                config: CropConfig = DEFAULT_CROPS, neighbour: np.ndarray | None = None) -> np.ndarray:
    """A spoiled, low-resolution BGR uint8 crop of a portrait master (see module docstring);
    `neighbour`: another card's master, laid over one side of this one with
    `config.neighbour_probability` (none: never)."""
    img = master_image
    h, w = img.shape[:2]
    # Imperfect corners: the source quad that the caller's rectification maps to the crop.
    lo, hi = math.log(config.min_width), math.log(max(config.min_width, config.max_width))
    out_w = round(math.exp(rng.uniform(lo, hi)))
    out_h = round(out_w * MASTER_HEIGHT / MASTER_WIDTH)
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    src += (rng.uniform(-1, 1, (4, 2)) * config.corner_jitter * np.array([w, h])).astype(np.float32)
    if config.edge_slip_probability > 0 and rng.random() < config.edge_slip_probability:
        side = int(rng.integers(4))  # top, right, bottom, left: corners (side, side + 1)
        outward = np.array([(0.0, -h), (w, 0.0), (0.0, h), (-w, 0.0)][side], np.float32)
        along = np.array([(w, 0.0), (0.0, h), (-w, 0.0), (0.0, -h)][side], np.float32)
        shift = (rng.uniform(-1, 1) * config.max_edge_slip * outward
                 + rng.uniform(-0.5, 0.5) * config.max_edge_slip * along)
        src[[side, (side + 1) % 4]] += shift
    dst = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], np.float32)
    scale = w / out_w
    if scale > 1.3:  # anti-alias before the warp shrinks it
        img = cv2.GaussianBlur(img, (0, 0), 0.45 * scale)
    table = rng.uniform(20, 235, 3).tolist()
    m = cv2.getPerspectiveTransform(src, dst)
    crop: np.ndarray = cv2.warpPerspective(img, m, (out_w, out_h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=table).astype(np.float32)
    # What lies on or over the card, drawn at the crop's resolution (cheaper, same picture).
    if rng.random() < config.occlusion_probability:
        _occlude(crop, rng, config.max_occlusion)
    if config.object_probability > 0 and rng.random() < config.object_probability:
        _object(crop, rng, config.max_object)
    if neighbour is not None and config.neighbour_probability > 0 and rng.random() < config.neighbour_probability:
        _neighbour(crop, neighbour, rng, config.max_neighbour)
    if rng.random() < config.glare_probability:
        _glare(crop, rng)
    if rng.random() < config.light_probability:
        _light(crop, rng)
    if rng.random() < config.blur_probability:
        crop = cv2.GaussianBlur(crop, (0, 0), rng.uniform(0.3, 1.2))
    if rng.random() < config.defocus_probability:
        crop = cv2.filter2D(crop, -1, _disk(rng.uniform(0.8, 2.0)))
    if rng.random() < config.motion_probability:
        crop = cv2.filter2D(crop, -1, _motion(rng.uniform(2.0, 5.0), rng.uniform(0, math.pi)))
    if rng.random() < config.colour_probability:
        # White balance, exposure, contrast and gamma: what every webcam shifts a little.
        gains = np.exp(rng.normal(0.0, 0.08, 3)) * rng.uniform(0.65, 1.3)
        crop = crop * gains.astype(np.float32)
        mean = float(crop.mean())
        crop = (crop - mean) * np.float32(rng.uniform(0.7, 1.25)) + np.float32(mean)
        lut = (255.0 * (np.arange(256) / 255.0) ** rng.uniform(0.75, 1.35)).astype(np.float32)
        crop = lut[np.clip(crop, 0, 255).astype(np.uint8)]
    if rng.random() < config.noise_probability:
        crop = crop + _noise(crop.shape, rng) * np.float32(rng.uniform(1.0, 8.0))
    out = np.clip(crop + 0.5, 0, 255).astype(np.uint8)
    if rng.random() < config.jpeg_probability:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 96))])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            out = decoded
    return out


def sibling(master_image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A near-copy of a master with one local change: a mark (numeral, badge, bar, corner tab,
    about 1–4 % of the card) or a recoloured region (an iron tool and a gold one differ so)."""
    img = master_image.copy()
    h, w = img.shape[:2]
    kind = int(rng.integers(5))
    if kind == 4:  # recolour a region: per-channel gains that keep its brightness
        rw, rh = int(rng.uniform(0.25, 0.6) * w), int(rng.uniform(0.15, 0.4) * h)
        x, y = int(rng.uniform(0, w - rw)), int(rng.uniform(0, h - rh))
        gains = rng.uniform(0.5, 1.5, 3)
        gains /= gains.mean()
        region = img[y:y + rh, x:x + rw].astype(np.float32) * gains.astype(np.float32)
        img[y:y + rh, x:x + rw] = np.clip(region, 0, 255).astype(np.uint8)
        return img
    size = int(rng.uniform(0.12, 0.22) * w)
    x = int(rng.uniform(0.05 * w, 0.95 * w - size))
    y = int(rng.uniform(0.04 * h, 0.96 * h - size))
    patch = img[y:y + size, x:x + size].astype(np.float32)
    lum = float(patch.mean())
    ink = [20.0] * 3 if lum > 128 else [235.0] * 3
    colour = rng.uniform(0, 255, 3).tolist() if rng.random() < 0.5 else ink
    if kind == 0:  # a numeral
        text = str(int(rng.integers(0, 10)))
        scale = cv2.getFontScaleFromHeight(cv2.FONT_HERSHEY_SIMPLEX, size)
        cv2.putText(img, text, (x, y + size), cv2.FONT_HERSHEY_SIMPLEX, scale, colour,
                    max(1, size // 6), cv2.LINE_AA)
    elif kind == 1:  # a badge
        cv2.circle(img, (x + size // 2, y + size // 2), size // 2, colour, -1, cv2.LINE_AA)
    elif kind == 2:  # a bar of another length
        bar_h = max(3, size // 3)
        cv2.rectangle(img, (x, y), (x + int(size * rng.uniform(1.2, 2.5)), y + bar_h), colour, -1)
    else:  # a tab in a corner
        cx = 0 if rng.random() < 0.5 else w - size
        cy = 0 if rng.random() < 0.5 else h - size
        cv2.rectangle(img, (cx, cy), (cx + size, cy + int(size * 0.7)), colour, -1)
    return img
