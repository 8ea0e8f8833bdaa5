"""The truth file: what really was on the table, frame by frame, for one clip.

One JSON file per clip (video, frame folder or set of stills), `truth_version` 1, described by
`datasets/truth/truth.schema.json` and documented in `datasets/truth/README.md`. It holds the
clip metadata, per frame every card's visible face, its four image corners (after lens
distortion, in the card's own order TL, TR, BR, BL), visible fraction, zone and track, the
table homography and lens; checkpoints with the settled contents of every zone (top card
first); the moves with the frame where each completes; and the final game state. Real footage
annotated by hand uses the same format. `load_truth` validates against the schema (with
`jsonschema` when it is installed, otherwise with the small validator below, which reads the
same schema file) and raises `TruthError` naming the file, the JSON path and the reason.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.synth.errors import TruthError

TRUTH_VERSION = 1
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "datasets" / "truth" / "truth.schema.json"

Point = tuple[float, float]
Quad = tuple[Point, Point, Point, Point]


@dataclass(frozen=True, slots=True, kw_only=True)
class LensTruth:
    """Pinhole intrinsics (pixels) and radial distortion k1, k2 (OpenCV model)."""

    fx: float
    fy: float
    cx: float
    cy: float
    k1: float = 0.0
    k2: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CameraTruth:
    """Table millimetres → undistorted pixels (3×3, row-major), and the lens."""

    homography: tuple[tuple[float, float, float], ...]
    lens: LensTruth


@dataclass(frozen=True, slots=True, kw_only=True)
class CardTruth:
    """One card in one frame: visible face, image corners (card's own TL, TR, BR, BL)."""

    face: str
    corners: Quad
    visible: float
    corner_visible: tuple[bool, bool, bool, bool] | None = None
    zone: str | None = None
    track: int | None = None
    card: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkerTruth:
    """A table marker's id and its image corners (ArUco order: its own TL, TR, BR, BL)."""

    id: int
    corners: Quad


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameTruth:
    """Everything known about one frame (a frame may list no cards)."""

    index: int
    cards: tuple[CardTruth, ...] = ()
    time_s: float | None = None
    image: str | None = None
    camera: CameraTruth | None = None
    markers: tuple[MarkerTruth, ...] = ()
    hands: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneCard:
    """One card of a zone's settled contents."""

    face: str
    card: str | None = None
    track: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """The settled contents of every zone at a frame, top card first; `counts` the number of
    each counter zone (tokens in a token area, the die's face; 0 = no die)."""

    frame: int
    zones: Mapping[str, tuple[ZoneCard, ...]]
    counts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveTruth:
    """A move (the engine's plain-dictionary form) and the frame where it completes."""

    frame: int
    move: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaRef:
    """Where the pixels are, relative to the truth file: a video, a frame folder or images."""

    kind: str  # "video" | "frames" | "images"
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ClipInfo:
    """Clip metadata."""

    game: str | None
    frame_size: tuple[int, int]
    source: str = "synthetic"  # or "recorded"
    players: int | None = None
    fps: float | None = None
    media: MediaRef | None = None
    generator: str | None = None
    seed: int | None = None
    art: tuple[str, ...] = ()
    notes: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Truth:
    """A whole truth file."""

    clip: ClipInfo
    frames: tuple[FrameTruth, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    moves: tuple[MoveTruth, ...] = ()
    final_state: Mapping[str, Any] | None = None


# --- encoding -------------------------------------------------------------------------------


def _r(v: float, nd: int) -> float:
    return float(round(float(v), nd))


def _quad(q: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[_r(p[0], 3), _r(p[1], 3)] for p in q]


def _drop_none(d: dict[str, Any], keep: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None or k in keep}


def card_to_dict(c: CardTruth) -> dict[str, Any]:
    return _drop_none({
        "face": c.face,
        "corners": _quad(c.corners),
        "visible": _r(c.visible, 4),
        "corner_visible": list(c.corner_visible) if c.corner_visible is not None else None,
        "zone": c.zone,
        "track": c.track,
        "card": c.card,
    })


def frame_to_dict(f: FrameTruth) -> dict[str, Any]:
    cam = None
    if f.camera is not None:
        cam = {
            "homography": [[float(v) for v in row] for row in f.camera.homography],
            "lens": {k: float(getattr(f.camera.lens, k)) for k in ("fx", "fy", "cx", "cy", "k1", "k2")},
        }
    return _drop_none({
        "index": f.index,
        "time_s": None if f.time_s is None else _r(f.time_s, 6),
        "image": f.image,
        "camera": cam,
        "cards": [card_to_dict(c) for c in f.cards],
        "markers": [{"id": m.id, "corners": _quad(m.corners)} for m in f.markers] or None,
        "hands": f.hands,
    })


def truth_to_dict(t: Truth) -> dict[str, Any]:
    c = t.clip
    clip = _drop_none({
        "game": c.game,
        "players": c.players,
        "fps": c.fps,
        "frame_size": [int(c.frame_size[0]), int(c.frame_size[1])],
        "source": c.source,
        "media": None if c.media is None else {"kind": c.media.kind, "path": c.media.path},
        "generator": c.generator,
        "seed": c.seed,
        "art": list(c.art),
        "notes": c.notes or None,
        "extra": dict(c.extra) or None,
    }, keep=("game",))
    return {
        "truth_version": TRUTH_VERSION,
        "clip": clip,
        "frames": [frame_to_dict(f) for f in t.frames],
        "checkpoints": [
            {"frame": cp.frame,
             "zones": {z: [_drop_none({"face": zc.face, "card": zc.card, "track": zc.track})
                           for zc in cards] for z, cards in cp.zones.items()},
             **({"counts": {z: int(n) for z, n in cp.counts.items()}} if cp.counts else {})}
            for cp in t.checkpoints
        ],
        "moves": [{"frame": m.frame, "move": dict(m.move)} for m in t.moves],
        "final_state": None if t.final_state is None else dict(t.final_state),
    }


def dumps_truth(t: Truth) -> str:
    """JSON text: one frame, checkpoint or move per line (diffable, still plain JSON)."""
    d = truth_to_dict(t)

    def dump(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    lines = ["{", f' "truth_version": {TRUTH_VERSION},', f' "clip": {dump(d["clip"])},']
    for key in ("frames", "checkpoints", "moves"):
        items = d[key]
        if not items:
            lines.append(f' "{key}": [],')
            continue
        lines.append(f' "{key}": [')
        lines.extend(f"  {dump(it)}{',' if i < len(items) - 1 else ''}" for i, it in enumerate(items))
        lines.append(" ],")
    lines.append(f' "final_state": {dump(d["final_state"])}')
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_truth(t: Truth, path: str | Path) -> Path:
    """Validate and write a truth file; returns its path."""
    path = Path(path)
    text = dumps_truth(t)
    validate_truth_data(json.loads(text), str(path), use_jsonschema=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        # mtime=0: the same truth always compresses to the same bytes.
        with gzip.GzipFile(path, "wb", mtime=0) as fh:
            fh.write(text.encode("utf-8"))
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --- decoding -------------------------------------------------------------------------------


def _quad_of(v: Any) -> Quad:
    a, b, c, d = ((float(p[0]), float(p[1])) for p in v)
    return (a, b, c, d)


def truth_from_dict(d: Mapping[str, Any]) -> Truth:
    """Build a `Truth` from an already validated document."""
    c = d["clip"]
    media = c.get("media")
    clip = ClipInfo(
        game=c.get("game"),
        players=c.get("players"),
        fps=c.get("fps"),
        frame_size=(int(c["frame_size"][0]), int(c["frame_size"][1])),
        source=c["source"],
        media=None if media is None else MediaRef(kind=media["kind"], path=media["path"]),
        generator=c.get("generator"),
        seed=c.get("seed"),
        art=tuple(c.get("art", ())),
        notes=c.get("notes", ""),
        extra=dict(c.get("extra", {})),
    )
    frames = []
    for f in d["frames"]:
        cam = f.get("camera")
        camera = None
        if cam is not None:
            camera = CameraTruth(
                homography=tuple((float(r[0]), float(r[1]), float(r[2])) for r in cam["homography"]),
                lens=LensTruth(**{k: float(v) for k, v in cam["lens"].items()}),
            )
        frames.append(FrameTruth(
            index=int(f["index"]),
            time_s=f.get("time_s"),
            image=f.get("image"),
            camera=camera,
            cards=tuple(
                CardTruth(
                    face=cd["face"],
                    corners=_quad_of(cd["corners"]),
                    visible=float(cd["visible"]),
                    corner_visible=tuple(cd["corner_visible"]) if "corner_visible" in cd else None,
                    zone=cd.get("zone"),
                    track=cd.get("track"),
                    card=cd.get("card"),
                )
                for cd in f["cards"]
            ),
            markers=tuple(MarkerTruth(id=int(m["id"]), corners=_quad_of(m["corners"]))
                          for m in f.get("markers", ())),
            hands=f.get("hands"),
        ))
    checkpoints = tuple(
        Checkpoint(frame=int(cp["frame"]),
                   zones={z: tuple(ZoneCard(face=e["face"], card=e.get("card"), track=e.get("track"))
                                   for e in cards) for z, cards in cp["zones"].items()},
                   counts={z: int(n) for z, n in cp.get("counts", {}).items()})
        for cp in d.get("checkpoints", ())
    )
    moves = tuple(MoveTruth(frame=int(m["frame"]), move=dict(m["move"])) for m in d.get("moves", ()))
    return Truth(clip=clip, frames=tuple(frames), checkpoints=checkpoints, moves=moves,
                 final_state=d.get("final_state"))


def load_truth(path: str | Path) -> Truth:
    """Read and validate a truth file. Raises `TruthError` naming the file, JSON path and reason."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                text = fh.read()
        else:
            text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TruthError(f"{path}: cannot read truth file ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TruthError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    validate_truth_data(data, str(path))
    return truth_from_dict(data)


# --- validation -----------------------------------------------------------------------------


_schema_cache: dict[str, Any] = {}


def load_schema() -> dict[str, Any]:
    """The truth JSON Schema (from `datasets/truth/truth.schema.json`)."""
    if "schema" not in _schema_cache:
        try:
            _schema_cache["schema"] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise TruthError(f"{SCHEMA_PATH}: cannot load the truth schema ({exc})") from None
    schema: dict[str, Any] = _schema_cache["schema"]
    return schema


def json_path(parts: Sequence[str | int]) -> str:
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p):
            out += f".{p}"
        else:
            out += f"[{json.dumps(p)}]"
    return out


# jsonschema needs ~0.06 s per busy synthetic frame; past this many frames it checks a sample of the
# frames, and the compiled validator (same schema) checks every one.
JSONSCHEMA_FRAMES = 40


def validate_truth_data(data: Any, source: str = "<truth>", *, use_jsonschema: bool = True) -> None:
    """Check a decoded truth document against the schema and the cross-field rules.

    With `use_jsonschema` (and the package installed) the document is checked by jsonschema
    (for a long clip: every frame by the compiled validator, and an even sample of the frames
    by jsonschema as well); otherwise the schema is compiled into the small structural
    validator below, which `write_truth` uses for the documents it builds itself.
    """
    jsonschema: Any = None
    if use_jsonschema:
        try:
            import jsonschema  # dev extra; optional at runtime
        except ImportError:
            jsonschema = None
    frames = data.get("frames") if isinstance(data, dict) else None
    long_clip = isinstance(frames, list) and len(frames) > JSONSCHEMA_FRAMES
    if jsonschema is None or long_clip:
        try:
            _compiled()(data)
        except _Invalid as exc:
            raise TruthError(f"{source}: at {json_path(exc.path)}: {exc.reason}") from None
    if jsonschema is not None:
        doc, keep = data, None
        if long_clip:
            assert isinstance(frames, list)
            step = -(-len(frames) // JSONSCHEMA_FRAMES)
            keep = sorted({*range(0, len(frames), step), len(frames) - 1})
            doc = {**data, "frames": [frames[i] for i in keep]}
        validator = jsonschema.Draft202012Validator(load_schema())
        errors = list(validator.iter_errors(doc))
        if errors:
            best = jsonschema.exceptions.best_match(errors)
            path = list(best.absolute_path)
            if keep is not None and len(path) > 1 and path[0] == "frames" and isinstance(path[1], int):
                path[1] = keep[path[1]]
            raise TruthError(f"{source}: at {json_path(path)}: {best.message}")
    _check_semantics(data, source)


class _Invalid(Exception):
    """A value that breaks the schema; containers prepend their key as it propagates."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str | int] = []


# Exact JSON types (json.loads makes only these): a bool is not a number here.
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or (type(v) is float and math.isfinite(v)),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}

Check = Callable[[Any], None]


def _compiled() -> Check:
    if "compiled" not in _schema_cache:
        schema = load_schema()
        _schema_cache["compiled"] = _compile(schema, schema, {})
    check: Check = _schema_cache["compiled"]
    return check


def _compile(s: Mapping[str, Any], root: Mapping[str, Any], refs: dict[str, Check]) -> Check:
    """Turn a schema node (the subset of JSON Schema the truth schema uses) into a checker."""
    steps: list[Check] = []

    if "$ref" in s:
        ref = s["$ref"]
        if ref not in refs:
            node: Any = root
            for part in ref.lstrip("#/").split("/"):
                node = node[part]
            refs[ref] = _compile(node, root, refs)  # the truth schema has no recursive refs
        steps.append(refs[ref])
    if "type" in s:
        names = s["type"] if isinstance(s["type"], list) else [s["type"]]
        tests = [_TYPES[t] for t in names]
        label = " or ".join(names)
        if len(tests) == 1:
            test = tests[0]

            def check_type(v: Any) -> None:
                if not test(v):
                    raise _Invalid(f"{json.dumps(v)[:60]} is not of type {label}")
        else:

            def check_type(v: Any) -> None:
                for t in tests:
                    if t(v):
                        return
                raise _Invalid(f"{json.dumps(v)[:60]} is not of type {label}")

        steps.append(check_type)
    if "const" in s:
        const = s["const"]

        def check_const(v: Any) -> None:
            if v != const or isinstance(v, bool) != isinstance(const, bool):
                raise _Invalid(f"{json.dumps(v)[:60]} must be {json.dumps(const)}")

        steps.append(check_const)
    if "enum" in s:
        allowed = s["enum"]

        def check_enum(v: Any) -> None:
            if v not in allowed:
                raise _Invalid(f"{json.dumps(v)[:60]} is not one of {allowed}")

        steps.append(check_enum)
    if "minLength" in s:
        n = s["minLength"]

        def check_len(v: Any) -> None:
            if isinstance(v, str) and len(v) < n:
                raise _Invalid("must not be empty")

        steps.append(check_len)
    bounds = [(k, s[k]) for k in ("minimum", "maximum", "exclusiveMinimum") if k in s]
    if bounds:

        def check_bounds(v: Any) -> None:
            if not _TYPES["number"](v):
                return
            for key, b in bounds:
                if key == "minimum" and v < b:
                    raise _Invalid(f"{v} is less than the minimum of {b}")
                if key == "maximum" and v > b:
                    raise _Invalid(f"{v} is greater than the maximum of {b}")
                if key == "exclusiveMinimum" and v <= b:
                    raise _Invalid(f"{v} must be greater than {b}")

        steps.append(check_bounds)
    if "required" in s or "properties" in s or "additionalProperties" in s:
        required = list(s.get("required", ()))
        props = {k: _compile(v, root, refs) for k, v in s.get("properties", {}).items()}
        extra = s.get("additionalProperties", True)
        extra_check = _compile(extra, root, refs) if isinstance(extra, dict) else None

        def check_object(v: Any) -> None:
            if not isinstance(v, dict):
                return
            for key in required:
                if key not in v:
                    raise _Invalid(f"{key!r} is a required property")
            for key, val in v.items():
                sub = props.get(key)
                if sub is None:
                    if extra is False:
                        raise _Invalid(f"additional property {key!r} is not allowed")
                    sub = extra_check
                if sub is not None:
                    try:
                        sub(val)
                    except _Invalid as exc:
                        exc.path.insert(0, key)
                        raise

        steps.append(check_object)
    if "items" in s or "prefixItems" in s or "minItems" in s or "maxItems" in s:
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        prefix = [_compile(p, root, refs) for p in s.get("prefixItems", ())]
        rest = _compile(s["items"], root, refs) if "items" in s else None

        def check_array(v: Any) -> None:
            if not isinstance(v, list):
                return
            if len(v) < lo:
                raise _Invalid(f"has {len(v)} items, expected at least {lo}")
            if hi is not None and len(v) > hi:
                raise _Invalid(f"has {len(v)} items, expected at most {hi}")
            for i, item in enumerate(v):
                sub = prefix[i] if i < len(prefix) else rest
                if sub is None:
                    continue
                try:
                    sub(item)
                except _Invalid as exc:
                    exc.path.insert(0, i)
                    raise

        steps.append(check_array)

    if len(steps) == 1:
        return steps[0]

    def check_all(v: Any) -> None:
        for step in steps:
            step(v)

    return check_all


def _check_semantics(d: Mapping[str, Any], source: str) -> None:
    """Rules a schema cannot say: frame indices unique and rising; references to real frames."""
    last = -1
    for i, f in enumerate(d["frames"]):
        if f["index"] <= last:
            raise TruthError(
                f"{source}: at $.frames[{i}].index: {f['index']} must be greater than the "
                f"previous frame's index {last} (frames are listed in order, each once)"
            )
        last = f["index"]
    for key in ("checkpoints", "moves"):
        prev = -1
        for i, item in enumerate(d.get(key, ())):
            if item["frame"] > last:
                raise TruthError(
                    f"{source}: at $.{key}[{i}].frame: frame {item['frame']} is after the last "
                    f"frame of the clip ({last})"
                )
            if item["frame"] < prev:
                raise TruthError(f"{source}: at $.{key}[{i}].frame: {key} must be in frame order")
            prev = item["frame"]
