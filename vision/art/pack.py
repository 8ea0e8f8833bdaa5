"""Art packs: a folder with one image per face of a game and a `pack.json` manifest.

```
{"schema": 1, "game": "minecraft-card-game", "name": "...", "source": "proxy",
 "card_size_mm": [63, 88], "faces": {"wood-1": "faces/wood-1.png", ...},
 "created_from": "..."}
```

`load_pack` validates a folder (schema, known game, face ids of that game's catalog, every
listed image present and decodable) and raises `PackError` naming the file and the face at
fault. `save_pack` writes images and manifest. `proxy_pack` returns the built-in proxy art of
a game, rendered once into a cache folder keyed by the catalog file's hash and the renderer
version, and reused afterwards. A pack may be partial (an enrolled deck with a few faces not
yet photographed): `missing_faces` says which faces of the catalog it lacks.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import cv2
import numpy as np
from tqdm import tqdm

from engine.catalog import CATALOG_DIR, Catalog, load_catalog
from engine.errors import CatalogError
from vision.art.errors import PackError
from vision.art.proxy import RENDERER_VERSION, render_face

PACK_FILE: Final = "pack.json"
PACK_SCHEMA: Final = 1
PROXY_PACK_DPI: Final = 300
CACHE_ENV: Final = "CARDTRACK_CACHE"


class PackSource(StrEnum):
    """Where a pack's images come from."""

    PROXY = "proxy"  # drawn by the proxy renderer from the catalog
    ENROLLED = "enrolled"  # photographed or scanned from a real deck with cardtrack
    IMPORTED = "imported"  # brought in from elsewhere (a publisher's files, another tool)


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtPack:
    """A validated art pack folder: which image shows which face."""

    root: Path
    game: str
    name: str
    source: PackSource
    card_size_mm: tuple[float, float]
    faces: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    created_from: str = ""

    def path(self, face_id: str) -> Path:
        """The image file of a face; `PackError` when the pack has no image for it."""
        try:
            return self.root / self.faces[face_id]
        except KeyError:
            raise PackError(
                f"{self.root / PACK_FILE}: no image for face {face_id!r} "
                f"(the pack lists {len(self.faces)} faces); add it to 'faces'"
            ) from None

    def image(self, face_id: str) -> np.ndarray:
        """The image of a face, BGR uint8."""
        return _read_image(self.path(face_id), f"{self.root / PACK_FILE}: face {face_id!r}")

    def missing_faces(self, catalog: Catalog) -> tuple[str, ...]:
        """The catalog's faces this pack has no image for, in catalog order."""
        return tuple(fid for fid in catalog.faces if fid not in self.faces)

    def manifest(self) -> dict[str, Any]:
        """The `pack.json` document of this pack."""
        return {
            "schema": PACK_SCHEMA,
            "game": self.game,
            "name": self.name,
            "source": str(self.source),
            "card_size_mm": [self.card_size_mm[0], self.card_size_mm[1]],
            "faces": dict(self.faces),
            "created_from": self.created_from,
        }


def _read_image(path: Path, where: str) -> np.ndarray:
    try:
        data = np.fromfile(str(path), np.uint8)
    except OSError as exc:
        raise PackError(f"{where}: cannot read image {path} ({exc.strerror}); check the path in 'faces'") from None
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise PackError(f"{where}: {path} is not a readable image (PNG or JPEG expected)")
    return img


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: Path, what: str) -> Any:
    if key not in data:
        raise PackError(f"{where}: missing field {key!r} ({what})")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise PackError(f"{where}: field {key!r} must be {what}, got {json.dumps(value)[:60]}")
    return value


def load_pack(directory: str | Path, *, check_images: bool = True) -> ArtPack:
    """Read and validate an art pack folder.

    With `check_images` (the default) every listed image is decoded once; pass False to only
    check that the files exist (fast, for listing many packs).
    """
    root = Path(directory)
    manifest = root / PACK_FILE
    if not root.is_dir():
        raise PackError(f"{root}: not a folder; an art pack is a folder with a {PACK_FILE}")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PackError(f"{manifest}: missing; an art pack folder needs a {PACK_FILE} manifest") from None
    except OSError as exc:
        raise PackError(f"{manifest}: cannot read ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        detail = f"line {exc.lineno} column {exc.colno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise PackError(f"{manifest}: not valid JSON ({detail})") from None
    if not isinstance(data, dict):
        raise PackError(f"{manifest}: must be a JSON object")
    if data.get("schema") != PACK_SCHEMA:
        raise PackError(
            f"{manifest}: field 'schema' must be {PACK_SCHEMA}, got {json.dumps(data.get('schema'))}; "
            "this cardtrack reads art packs of schema 1"
        )
    game = _field(data, "game", str, manifest, "a game id")
    try:
        catalog = load_catalog(game)
    except CatalogError as exc:
        raise PackError(f"{manifest}: field 'game': {exc}") from None
    name = _field(data, "name", str, manifest, "the pack's name")
    source_text = _field(data, "source", str, manifest, "one of proxy, enrolled, imported")
    try:
        source = PackSource(source_text)
    except ValueError:
        raise PackError(
            f"{manifest}: field 'source' must be one of "
            f"{', '.join(s.value for s in PackSource)}, got {source_text!r}"
        ) from None
    size = _field(data, "card_size_mm", list, manifest, "[width, height] in mm")
    if len(size) != 2 or not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in size):
        raise PackError(f"{manifest}: field 'card_size_mm' must be [width, height] in mm, got {size}")
    faces = _field(data, "faces", dict, manifest, "an object: face id -> image path")
    created_from = data.get("created_from", "")
    if not isinstance(created_from, str):
        raise PackError(f"{manifest}: field 'created_from' must be a string")

    resolved_root = root.resolve()
    for fid, rel in faces.items():
        where = f"{manifest}: face {fid!r}"
        if fid not in catalog.faces:
            raise PackError(
                f"{where}: not a face of game {game!r}; "
                f"`cardtrack deck list --game {game}` shows the face ids"
            )
        if not isinstance(rel, str) or not rel:
            raise PackError(f"{where}: the image path must be a non-empty string relative to the pack")
        path = Path(rel)
        if path.is_absolute() or not (resolved_root / path).resolve().is_relative_to(resolved_root):
            raise PackError(f"{where}: image path {rel!r} must stay inside the pack folder")
        full = root / path
        if not full.is_file():
            raise PackError(f"{where}: image file {full} does not exist")
        if check_images:
            _read_image(full, where)
    return ArtPack(
        root=root,
        game=game,
        name=name,
        source=source,
        card_size_mm=(float(size[0]), float(size[1])),
        faces=MappingProxyType(dict(faces)),
        created_from=created_from,
    )


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def face_file_name(face_id: str) -> str:
    """A portable file name for a face id (`wood-hoe/craft` -> `wood-hoe_craft.png`)."""
    stem = _UNSAFE.sub("_", face_id).strip("._") or "face"
    return f"{stem}.png"


def _write_png(path: Path, image: np.ndarray, where: str) -> None:
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise PackError(f"{where}: expected a BGR uint8 image (h, w, 3), got {image.dtype} {image.shape}")
    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise PackError(f"{where}: could not encode the image as PNG")
    buf.tofile(str(path))


def save_pack(
    directory: str | Path,
    *,
    game: str,
    name: str,
    source: PackSource | str,
    images: Mapping[str, np.ndarray] | Iterable[tuple[str, np.ndarray]],
    card_size_mm: tuple[float, float] | None = None,
    created_from: str = "",
    subdir: str = "faces",
) -> ArtPack:
    """Write images (BGR uint8, face id -> image) and `pack.json` into `directory`.

    The folder is created if needed; the manifest is written last, so a pack interrupted
    half-way is never mistaken for a complete one. Returns the pack as `load_pack` reads it.
    """
    try:
        catalog = load_catalog(game)
    except CatalogError as exc:
        raise PackError(f"cannot save an art pack: {exc}") from None
    try:
        src = PackSource(source)
    except ValueError:
        raise PackError(f"source must be one of {', '.join(s.value for s in PackSource)}, got {source!r}") from None
    root = Path(directory)
    (root / subdir).mkdir(parents=True, exist_ok=True)
    items = images.items() if isinstance(images, Mapping) else images
    faces: dict[str, str] = {}
    used: set[str] = set()
    for fid, image in items:
        if fid not in catalog.faces:
            raise PackError(f"cannot save face {fid!r}: not a face of game {game!r}")
        file_name = face_file_name(fid)
        n = 2
        while file_name in used:
            file_name = face_file_name(f"{fid}-{n}")
            n += 1
        used.add(file_name)
        rel = f"{subdir}/{file_name}"
        _write_png(root / rel, image, f"face {fid!r}")
        faces[fid] = rel
    size = card_size_mm or catalog.card_size_mm
    pack = ArtPack(
        root=root,
        game=game,
        name=name,
        source=src,
        card_size_mm=(float(size[0]), float(size[1])),
        faces=MappingProxyType(faces),
        created_from=created_from,
    )
    tmp = root / f".{PACK_FILE}.tmp"
    tmp.write_text(json.dumps(pack.manifest(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, root / PACK_FILE)
    return load_pack(root, check_images=False)


def render_proxy_pack(
    game: str,
    directory: str | Path,
    *,
    dpi: float = PROXY_PACK_DPI,
    progress: bool = False,
    name: str | None = None,
) -> ArtPack:
    """Render every face of a game with the proxy renderer and save it as an art pack."""
    catalog = load_catalog(game)
    faces = list(catalog.faces)
    bar = tqdm(faces, desc=f"rendering {game}", unit="face", disable=not progress)
    images = ((fid, render_face(catalog, fid, dpi)) for fid in bar)
    return save_pack(
        directory,
        game=game,
        name=name or f"{catalog.name} proxy art",
        source=PackSource.PROXY,
        images=images,
        card_size_mm=catalog.card_size_mm,
        created_from=f"proxy renderer {RENDERER_VERSION}, catalog {game} "
        f"sha256:{catalog_digest(game)[:16]}, {dpi:g} dpi",
    )


def catalog_digest(game: str) -> str:
    """SHA-256 of a built-in catalog file (what a proxy pack was drawn from)."""
    path = CATALOG_DIR / f"{game}.json"
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        load_catalog(game)  # raises the catalog's own clear error for an unknown game
        raise


def default_cache_dir() -> Path:
    """Where proxy packs are cached: `$CARDTRACK_CACHE/packs`, else `~/.cache/cardtrack/packs`."""
    base = os.environ.get(CACHE_ENV)
    root = Path(base).expanduser() if base else Path.home() / ".cache" / "cardtrack"
    return root / "packs"


def proxy_pack(
    game: str,
    cache_dir: str | Path | None = None,
    *,
    dpi: float = PROXY_PACK_DPI,
    progress: bool = False,
) -> ArtPack:
    """The built-in proxy art pack of a game, rendered on first use and cached.

    The cache folder is named by the game and a hash of the catalog file, the renderer version
    and the dpi, so editing a catalog or upgrading the renderer renders afresh while an
    unchanged one is reused. A broken cache entry is replaced.
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key_text = f"{catalog_digest(game)}|renderer {RENDERER_VERSION}|{dpi:g} dpi"
    key = hashlib.sha256(key_text.encode("utf-8")).hexdigest()[:16]
    folder = root / f"{game}-proxy-{key}"
    if (folder / PACK_FILE).is_file():
        try:
            return load_pack(folder, check_images=False)
        except PackError:
            shutil.rmtree(folder, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{game}-proxy-", dir=root))
    try:
        render_proxy_pack(game, tmp, dpi=dpi, progress=progress)
        try:
            os.replace(tmp, folder)
        except OSError:
            # Another process finished the same pack first: use theirs.
            if not (folder / PACK_FILE).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return load_pack(folder, check_images=False)


ImageSource = Callable[[str], np.ndarray]  # face id -> BGR image (e.g. `ArtPack.image`)


def open_pack(art: str | Path, game: str, *, progress: bool = False) -> ArtPack:
    """`art` = "proxy" (the built-in proxy art of `game`) or an art pack folder for `game`
    (`cardtrack deck enroll` writes one); `PackError` when it is for another game."""
    pack = proxy_pack(game, progress=progress) if str(art) == "proxy" else load_pack(Path(art))
    if pack.game != game:
        raise PackError(
            f"{Path(art) / PACK_FILE}: the pack is for game {pack.game!r}, not {game!r}; "
            "pass --game to match it or choose another pack"
        )
    return pack
