"""Pixel-art icons for the proxy card renderer, as small character grids defined in code.

Each icon is a few rows of characters: `.` is transparent, every other character names a colour
in the icon's palette. The renderer scales an icon up with nearest-neighbour sampling, so the
blocky look survives at any size and reads from across a table. Tools carry the placeholder
colours `M` (head), `m` (head shade) and `W` (head highlight) so one grid serves every material.
`identicon` draws a deterministic symmetric pattern from a text for any subject without an icon
of its own, so a catalog we have never seen still gets distinct, recognisable pictures.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import numpy as np

Rgb = tuple[int, int, int]


def hex_rgb(code: str) -> Rgb:
    """`#rrggbb` to an (r, g, b) tuple."""
    code = code.lstrip("#")
    return (int(code[0:2], 16), int(code[2:4], 16), int(code[4:6], 16))


@dataclass(frozen=True, slots=True, kw_only=True)
class PixelIcon:
    """A named pixel grid and its palette (character -> `#rrggbb`)."""

    name: str
    rows: tuple[str, ...]
    palette: MappingProxyType[str, str] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels of the grid."""
        return (len(self.rows[0]), len(self.rows))

    def rgba(self, overrides: dict[str, str] | None = None) -> np.ndarray:
        """The icon as an RGBA uint8 array (height, width, 4); `overrides` recolours keys."""
        palette = dict(self.palette)
        if overrides:
            palette.update(overrides)
        w, h = self.size
        out = np.zeros((h, w, 4), np.uint8)
        for y, row in enumerate(self.rows):
            for x, ch in enumerate(row):
                if ch == ".":
                    continue
                out[y, x, :3] = hex_rgb(palette[ch])
                out[y, x, 3] = 255
        return out


K = "#1b1b1b"  # outline used by every icon

# Tool heads per material: (main, shade, highlight).
MATERIAL_HEADS: Final = MappingProxyType(
    {
        "wood": ("#a8803f", "#6f4f22", "#caa36a"),
        "stone": ("#8d8d8d", "#5c5c5c", "#b8b8b8"),
        "iron": ("#d8d8d8", "#9a9a9a", "#ffffff"),
        "gold": ("#f5d130", "#c08a10", "#fff59a"),
        "diamond": ("#48e0d8", "#1b9e98", "#c8fffa"),
        "emerald": ("#2fd46a", "#14893d", "#b6ffcc"),
        "netherite": ("#4a4349", "#2c272b", "#7a7079"),
    }
)


def material_overrides(material: str) -> dict[str, str]:
    """Palette overrides that paint a tool head in a material's colours."""
    main, shade, light = MATERIAL_HEADS.get(material, MATERIAL_HEADS["iron"])
    return {"M": main, "m": shade, "W": light}


_TOOL_PALETTE = {"k": K, "h": "#8a5a2b", "H": "#5a3a1a", "M": "#d8d8d8", "m": "#9a9a9a", "W": "#ffffff"}


def _icon(name: str, rows: str, **palette: str) -> PixelIcon:
    lines = tuple(line.strip() for line in rows.strip().splitlines())
    width = len(lines[0])
    for i, line in enumerate(lines):
        if len(line) != width:
            raise ValueError(f"icon {name!r}: row {i} is {len(line)} wide, expected {width}")
        for ch in line:
            if ch != "." and ch not in palette:
                raise ValueError(f"icon {name!r}: colour {ch!r} in row {i} has no palette entry")
    return PixelIcon(name=name, rows=lines, palette=MappingProxyType(dict(palette)))


_ICONS: dict[str, PixelIcon] = {}


def _add(icon: PixelIcon) -> None:
    _ICONS[icon.name] = icon


_add(_icon("wood", """
    ................
    ...kkkkkkkkkk...
    ..kBBBBBBBBBBk..
    .kBLLLLLLLLLLBk.
    .kBLrrrrrrrrLBk.
    .kBLrLLLLLLrLBk.
    .kBLrLrrrrLrLBk.
    .kBLrLrLLrLrLBk.
    .kBLrLrLLrLrLBk.
    .kBLrLrrrrLrLBk.
    .kBLrLLLLLLrLBk.
    .kBLrrrrrrrrLBk.
    .kBLLLLLLLLLLBk.
    ..kBBBBBBBBBBk..
    ...kkkkkkkkkk...
    ................
""", k=K, B="#5b3d1e", L="#d2ab6f", r="#9a7440"))

_add(_icon("stone", """
    kkkkkkkkkkkkkkkk
    kllGGkGGGGlkGGGk
    klGGGkGGGGGkGGdk
    kGGGdkkdGGdkkddk
    kkGdkkGGkkkGGGkk
    kGGkkGGGGGkGGGGk
    kGGkGlGGGGdkGGdk
    kkkkGGGGGGdkkdkk
    kGGGkGGGGdkkGGGk
    klGGGkkddkkGGGGk
    kGGGGGkkkGGGGGdk
    kGGGGdkGGGGGGddk
    kkddkkGGlGGGkkkk
    kGGkkGGGGGGkklGk
    kGGdkkdddddkGGdk
    kkkkkkkkkkkkkkkk
""", k="#3a3a3a", G="#8c8c8c", l="#b8b8b8", d="#606060"))

_INGOT = """
    ................
    ................
    ................
    ................
    ....kkkkkkkk....
    ...kWWWWWWWWk...
    ...kWLLLLLLSk...
    ..kWLLLLLLLLSk..
    ..kLLLLLLLLLSk..
    .kWLLLLLLLLLLSk.
    .kLSSSSSSSSSSDk.
    .kDDDDDDDDDDDDk.
    ..kkkkkkkkkkkk..
    ................
    ................
    ................
"""
_add(_icon("iron", _INGOT, k=K, W="#ffffff", L="#dcdcdc", S="#a9a9a9", D="#6e6e6e"))
_add(_icon("gold", _INGOT, k=K, W="#fffbc0", L="#fcdc4d", S="#e0a81c", D="#9a6a0a"))

_GEM = """
    ................
    ................
    .....kkkkkk.....
    ....kWCCCCCk....
    ...kWCCWCCCCk...
    ..kCCCCCCCCCDk..
    ..kkkkkkkkkkkk..
    ..kCCDCCCCCDCk..
    ...kCCDCCCDCk...
    ....kCCDCDCk....
    .....kCCDCk.....
    ......kCCk......
    .......kk.......
    ................
    ................
    ................
"""
_add(_icon("diamond", _GEM, k=K, W="#e8fffd", C="#4fe6dc", D="#1a9a93"))
_add(_icon("emerald", """
    ................
    ......kkkk......
    .....kWCCCk.....
    ....kWCCCCDk....
    ...kWCCCCCCDk...
    ...kCCCWCCCDk...
    ..kCCCCCCCCCDk..
    ..kCCCCCCCCCDk..
    ..kCCCCCCCCCDk..
    ..kCCCCCCCCCDk..
    ...kCCCCCCCDk...
    ...kCCCCCCDDk...
    ....kCCCCDDk....
    .....kDDDDk.....
    ......kkkk......
    ................
""", k=K, W="#d6ffe2", C="#2fd46a", D="#12843a"))

_add(_icon("star", """
    .......kk.......
    ......kYYk......
    ......kYYk......
    .....kYWYYk.....
    kkkkkkYWYYkkkkkk
    kYYYYYYYYYYYYYOk
    .kYYYYYYYYYYYOk.
    ..kYYYYYYYYYOk..
    ...kYYYYYYYOk...
    ...kYYYYYYYOk...
    ..kYYYYOOYYYOk..
    ..kYYYOkkOYYOk..
    .kYYYOk..kOYYOk.
    .kYYOk....kOYOk.
    kYOkk......kkOOk
    kkk..........kkk
""", k=K, Y="#ffd93b", O="#e08a00", W="#fff7c2"))

_add(_icon("creeper", """
    gGgggGgg
    ggGgggGg
    gkkGgkkg
    Gkkggkkg
    gggkkgGg
    gGkkkkgg
    ggkkkkgG
    gGkggkgg
""", k="#101010", g="#4cbb3a", G="#2d8c22"))

_add(_icon("tnt", """
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
    WWWWWWWWWWWWWWWW
    WkkkWkWWkWkkkWWW
    WWkWWkkWkWWkWWWW
    WWkWWkWkkWWkWWWW
    WWkWWkWWkWWkWWWW
    WWkWWkWWkWWkWWWW
    WWWWWWWWWWWWWWWW
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
    RRrRRRRrRRRRrRRR
""", k=K, R="#d8322a", r="#9c1c16", W="#f2f2f2"))

_add(_icon("sword", """
    .............kkk
    ............kWMk
    ...........kWMk.
    ..........kWMk..
    .........kWMk...
    ........kWMk....
    .......kWMk.....
    ..kk..kWMk......
    ..kmkkWMk.......
    ...kmMMk........
    ....kmk.........
    ...khkmk........
    ..khk.kmk.......
    .khk...kk.......
    kHk.............
    kk..............
""", **_TOOL_PALETTE))

_add(_icon("pickaxe", """
    ................
    ....kkkkkk......
    ...kWMMMMMkk....
    ....kkkkMMMMk...
    ........khkMMk..
    .......khk.kMMk.
    ......khk...kMk.
    .....khk....kMk.
    ....khk.....kmk.
    ...khk.......k..
    ..khk...........
    .khk............
    kHk.............
    kk..............
    ................
    ................
""", **_TOOL_PALETTE))

_add(_icon("axe", """
    ................
    ......kkkk......
    .....kWMMMkkhk..
    ....kWMMMMkhk...
    ....kWMMMkhk....
    ....kmMMkhk.....
    .....kmkhk......
    .....kkhk.......
    .....khk........
    ....khk.........
    ...khk..........
    ..khk...........
    .khk............
    kHk.............
    kk..............
    ................
""", **_TOOL_PALETTE))

_add(_icon("shovel", """
    ...........kkk..
    ..........kWMMk.
    .........kWMMMMk
    .........kMMMMMk
    ........kkMMMmk.
    .......khkkmmk..
    ......khk..kk...
    .....khk........
    ....khk.........
    ...khk..........
    ..khk...........
    .khk............
    kHk.............
    kk..............
    ................
    ................
""", **_TOOL_PALETTE))

_add(_icon("hoe", """
    ................
    ......kkkkkk....
    .....kWMMMMhk...
    ......kkkkkhk...
    ..........khk...
    .........khk....
    ........khk.....
    .......khk......
    ......khk.......
    .....khk........
    ....khk.........
    ...khk..........
    ..kHk...........
    ..kk............
    ................
    ................
""", **_TOOL_PALETTE))

_add(_icon("heart", """
    ..kkk...kkk..
    .kRRRk.kRRRk.
    kRWRRRkRRRRRk
    kRWRRRRRRRRRk
    kRRRRRRRRRRrk
    .kRRRRRRRRrk.
    ..kRRRRRRrk..
    ...kRRRRrk...
    ....kRRrk....
    .....krk.....
    ......k......
""", k=K, R="#e8383a", r="#a01c1e", W="#ffb0b0"))

_add(_icon("food", """
    ..........kk....
    .........kWWk...
    ........kWWWWk..
    .......kWWkkWk..
    ......kkkk..kk..
    ....kkBBk.......
    ...kBBBBBk......
    ..kBRRBBBBk.....
    .kBRRRRBBBk.....
    .kBRRRRRBBk.....
    .kBRRRRRBk......
    .kBBRRRBBk......
    ..kBBBBBk.......
    ...kkkkk........
    ................
    ................
""", k=K, W="#f4efe0", B="#b0622c", R="#e0493a"))

_add(_icon("apple", """
    ........kk......
    .......kGk......
    ...kkk.kk.kkk...
    ..kRRRkkkkRRRk..
    .kRWRRRRRRRRRrk.
    .kRWRRRRRRRRRrk.
    .kRRRRRRRRRRRrk.
    .kRRRRRRRRRRRrk.
    .kRRRRRRRRRRrrk.
    ..kRRRRRRRRRrk..
    ..kRRRRRRRRrrk..
    ...kRRRkkRRrk...
    ....kkk..kkk....
""", k=K, R="#d8282a", r="#8e1416", W="#ff9c9c", G="#3b8f2a"))

_add(_icon("bread", """
    ................
    ....kkkkkkkk....
    ..kkBBBBBBBBkk..
    .kBBLBBLBBLBBBk.
    kBBLBBLBBLBBBBBk
    kBLBBLBBLBBBBBDk
    kBBBBBBBBBBBBBDk
    kBBBBBBBBBBBBDDk
    .kDDDDDDDDDDDDk.
    ..kkkkkkkkkkkk..
""", k=K, B="#c9893a", L="#f0c47a", D="#8a5420"))

_add(_icon("carrot", """
    ..........k.k.k.
    .........kGkGkG.
    ..........kGGGk.
    .........kOkGk..
    ........kOOOk...
    .......kOOOOk...
    ......kOOOOk....
    .....kOOOOk.....
    ....kOOOOk......
    ...kOOOOk.......
    ..kOOOk.........
    .kOOk...........
    .kk.............
""", k=K, O="#f08a1a", G="#3fae2a"))

_add(_icon("melon", """
    ................
    kkkkkkkkkkkkkkkk
    kRRRRRRRRRRRRRRk
    .kRRkRRRRkRRRRk.
    .kRRRRRRRRRRkRk.
    ..kRRRRkRRRRRk..
    ..kRRRRRRRRRRk..
    ...kWWWWWWWWk...
    ....kGGGGGGk....
    .....kkkkkk.....
""", k=K, R="#e8443c", W="#f4f0c8", G="#3c9a2c"))

_add(_icon("berries", """
    ......kk........
    .....kGGk.kk....
    ....kGkkkkGGk...
    ...kkk.kk.kkk...
    ..kRRk.kRk.kRRk.
    .kRWRRkRWRkRWRRk
    .kRRRrkRRrkRRRrk
    ..krrk.krk.krrk.
    ...kk...k...kk..
""", k=K, R="#d8283a", r="#8e1426", W="#ffb0b8", G="#3b8f2a"))

_add(_icon("torch", """
    ......kk......
    .....kYYk.....
    ....kYWWYk....
    ....kOYYOk....
    .....kOOk.....
    .....khhk.....
    .....khhk.....
    .....khhk.....
    .....khhk.....
    .....khhk.....
    .....khhk.....
    .....kHHk.....
    ......kk......
""", k=K, Y="#ffd93b", W="#fffbd8", O="#e86a10", h="#8a5a2b", H="#5a3a1a"))

_add(_icon("sun", """
    .......YY.......
    ..Y....YY....Y..
    ...Y........Y...
    .......kk.......
    .....kkOOkk.....
    ....kOYYYYOk....
    ....kYYWYYYk....
    YY.kOYWYYYYOk.YY
    YY.kOYYYYYYOk.YY
    ....kYYYYYYk....
    ....kOYYYYOk....
    .....kkOOkk.....
    .......kk.......
    ...Y........Y...
    ..Y....YY....Y..
    .......YY.......
""", k=K, Y="#ffd020", O="#f08a00", W="#fff8c8"))

_add(_icon("moon", """
    .....kkkkk......
    ...kkBBBBk......
    ..kBBBBkk.......
    .kBBBBk.........
    .kBBBk..........
    kBBBBk..........
    kBBBBk..........
    kBBBBk..........
    kBBBBBk.........
    .kBBBBBk......k.
    .kBBBBBBkkkkkkk.
    ..kBBBBBBBBBBk..
    ...kkBBBBBBkk...
    .....kkkkkk.....
""", k=K, B="#f4e27a"))

_add(_icon("drop", """
    .......kk.......
    ......kBBk......
    ......kBBk......
    .....kBBBBk.....
    ....kBBBBBBk....
    ...kBWBBBBBBk...
    ..kBWBBBBBBBBk..
    ..kBWBBBBBBBDk..
    ..kBBBBBBBBBDk..
    ..kBBBBBBBBDDk..
    ...kBBBBBBDDk...
    ....kkDDDDkk....
    ......kkkk......
""", k=K, B="#3a8cf0", D="#1a4ea8", W="#cfe6ff"))

_add(_icon("cloud", """
    ......kkkk......
    ....kkWWWWkk....
    ...kWWWWWWWWk...
    .kkWWWWWWWWWWkk.
    kWWWWWWWWWWWWWGk
    kWWWWWWWWWWWWGGk
    .kGGGGGGGGGGGGk.
    ..kkkkkkkkkkkk..
    ...B...B...B....
    ..B...B...B.....
    .B...B...B......
""", k=K, W="#f2f4f8", G="#b8c0cc", B="#3a8cf0"))

_add(_icon("bolt", """
    ......kkkkkk
    .....kYYYYk.
    ....kYYYYk..
    ...kYYYYk...
    ..kYYYYkkkk.
    .kYYYYYYYYk.
    kkkkkYYYYk..
    ....kYYYk...
    ...kYYYk....
    ..kYYk......
    .kYk........
    kk..........
""", k=K, Y="#ffe23a"))

_add(_icon("tree", """
    .....kkkkkk.....
    ...kkGGGGGGkk...
    ..kGGLGGGGGGGk..
    .kGLGGGGGGLGGGk.
    .kGGGGGLGGGGGGk.
    kGGGLGGGGGGGLGGk
    kGGGGGGGLGGGGGGk
    .kGGLGGGGGGGGGk.
    ..kkGGGGGLGGkk..
    ....kkkhhkkk....
    ......khhk......
    ......khhk......
    ......khhk......
    .....kkhhkk.....
""", k=K, G="#2e8b2a", L="#5cc23a", h="#7a5230"))

_add(_icon("sapling", """
    ......kk......
    .....kGGk.....
    ..kk.kGLk.kk..
    .kGGkkGGkkGLk.
    .kGLGkGGkGGGk.
    ..kGGGkGkGGk..
    ...kkGGGGkk...
    .....kGGk.....
    ......kk......
    .....kGGk.....
    ....kkkkkk....
    ...kBBBBBBk...
    ...kBBBBBBk...
    ....kkkkkk....
""", k=K, G="#2e9a2a", L="#7ad24a", B="#7a4a22"))

_add(_icon("seed", """
    ..............
    ....kk....kk..
    ...kSSk..kSSk.
    ...kSSk..kSDk.
    ....kk....kk..
    ..kk...kk.....
    .kSSk.kSSk....
    .kSDk.kSDk....
    ..kk...kk..kk.
    .....kk...kSSk
    ....kSSk..kSDk
    ....kSDk...kk.
    .....kk.......
""", k=K, S="#7ac23a", D="#3c7a1c"))

_add(_icon("stick", """
    ...........kk
    ..........khk
    .........khk.
    ........khk..
    .......khk...
    ......khk....
    .....khk.....
    ....khk......
    ...khk.......
    ..khk........
    .kHk.........
    kk...........
""", k=K, h="#8a5a2b", H="#5a3a1a"))

_add(_icon("leather", """
    ..kkkkkkkkkkkk..
    .kLLLLLLLLLLLLk.
    kLLLLLLLLLLLLLLk
    kLLDLLLLLLLLDLLk
    .kLLLLLLLLLLLLk.
    ..kLLLLLLLLLLk..
    ..kLLLLLLLLLLk..
    .kLLLLLLLLLLLLk.
    kLLDLLLLLLLLDLLk
    kLLLLLLLLLLLLLLk
    .kLLLLLLLLLLLLk.
    ..kkkkkkkkkkkk..
""", k=K, L="#b06a30", D="#6e3e16"))

_add(_icon("armor", """
    .kkkk....kkkk.
    kMMMMkkkkMMMMk
    kMWMMMMMMMMMmk
    kMWMMMMMMMMMmk
    .kkMMMMMMMMkk.
    ..kWMMMMMMmk..
    ..kWMMMMMMmk..
    ..kWMMMMMMmk..
    ..kWMMMMMMmk..
    ..kMMMMMMMmk..
    ..kkkkkkkkkk..
""", k=K, M="#d8d8d8", m="#9a9a9a", W="#ffffff"))

_add(_icon("shield", """
    kkkkkkkkkkkk
    kWWWWWWWWWBk
    kWSSSSSSSSBk
    kWSSSSSSSSBk
    kWSSSSSSSSBk
    kWSSSSSSSSBk
    .kWSSSSSSBk.
    .kWSSSSSSBk.
    ..kWSSSSBk..
    ...kWSSBk...
    ....kkkk....
""", k=K, W="#e4e8f0", S="#7b8ab8", B="#3c4870"))

_add(_icon("skull", """
    ...kkkkkkkk...
    ..kWWWWWWWWk..
    .kWWWWWWWWWWk.
    kWWWWWWWWWWWWk
    kWkkkWWWWkkkWk
    kWkkkWWWWkkkWk
    kWkkkWWWWkkkWk
    kWWWWWkkWWWWWk
    .kWWWWkkWWWWk.
    ..kkWWWWWWkk..
    ...kWkWkWkWk..
    ...kkkkkkkk...
""", k=K, W="#f0f0e8"))

_add(_icon("chest", """
    ..kkkkkkkkkkkk..
    .kBBBBBBBBBBBBk.
    kBLLLLLLLLLLLLBk
    kBLLLLLLLLLLLLBk
    kBLLLLLLLLLLLLBk
    kkkkkkkGGkkkkkkk
    kBLLLLLGGLLLLLBk
    kBLLLLLkkLLLLLBk
    kBLLLLLLLLLLLLBk
    kBLLLLLLLLLLLLBk
    kBBBBBBBBBBBBBBk
    kkkkkkkkkkkkkkkk
""", k=K, B="#6a4218", L="#a8702c", G="#d8d8d8"))

_add(_icon("house", """
    .......kk.......
    ......kRRk......
    .....kRRRRk.....
    ....kRRRRRRk....
    ...kRRRRRRRRk...
    ..kRRRRRRRRRRk..
    .kkkkkkkkkkkkkk.
    ..kWWWWWWWWWWk..
    ..kWkkWWWWkkWk..
    ..kWkBWWWWkkWk..
    ..kWWWWWDDWWWk..
    ..kWWWWWDDWWWk..
    ..kWWWWWDDWWWk..
    ..kkkkkkkkkkkk..
""", k=K, R="#b83a2a", W="#e8d8b0", B="#8ac8f0", D="#6a4218"))

_add(_icon("furnace", """
    kkkkkkkkkkkkkk
    kGGGGGGGGGGGGk
    kGllGGGGGGllGk
    kGGGGGGGGGGGGk
    kGGkkkkkkkkGGk
    kGGkkkkkkkkGGk
    kGGkOYYOYOkGGk
    kGGkYOYOYYkGGk
    kGGkkkkkkkkGGk
    kGGGGGGGGGGGGk
    kkkkkkkkkkkkkk
""", k=K, G="#8c8c8c", l="#b8b8b8", O="#f06a10", Y="#ffd020"))

_add(_icon("mountain", """
    ................
    .......kk.......
    ......kWWk......
    .....kWWWWk.....
    ....kWWGGGGk....
    ...kGGGGGGGGk.kk
    ..kGGGGGGGGGGkGk
    .kGGGGGGGGGGGGGk
    kGGGGGGGGGGGGGGk
    kkkkkkkkkkkkkkkk
""", k=K, W="#ffffff", G="#6f8a5a"))

_add(_icon("map", """
    kkkkkkkkkkkkkk
    kPPPPPPPPPPPPk
    kPGGPPPPBBPPPk
    kPGGGPPPBBBPPk
    kPPGPPRPPBPPPk
    kPPPPRPRPPPPPk
    kPPPPPRPPPGGPk
    kPBBPPPPPGGGPk
    kPBBBPPPPPGPPk
    kPPPPPPPPPPPPk
    kkkkkkkkkkkkkk
""", k=K, P="#f0e0b0", G="#5cae3a", B="#4a8ae0", R="#d8282a"))

_add(_icon("eye", """
    ....kkkkkk....
    ..kkWWWWWWkk..
    .kWWWWkkWWWWk.
    kWWWWkPPkWWWWk
    kWWWWkPPkWWWWk
    .kWWWWkkWWWWk.
    ..kkWWWWWWkk..
    ....kkkkkk....
""", k=K, W="#f0f0f0", P="#b040e0"))

_add(_icon("zombie", """
    kkkkkkkk
    kGGgGGgk
    kGgGGGGk
    kkkGGkkk
    kGGggGGk
    kGgkkgGk
    kGGGGGGk
    kkkkkkkk
""", k=K, G="#4f9a3a", g="#3a7a2a"))

_add(_icon("skeleton", """
    kkkkkkkk
    kWWWWWWk
    kWLWWLWk
    kkkWWkkk
    kWWkkWWk
    kWkkkkWk
    kWLWWLWk
    kkkkkkkk
""", k=K, W="#e0e0d8", L="#b0b0a8"))

_add(_icon("spider", """
    k..kkkk..k
    .k.kRRk.k.
    ..kkkkkk..
    kkkkRRkkkk
    ..kkkkkk..
    .k.kkkk.k.
    k........k
""", k=K, R="#e02020"))

_add(_icon("enderman", """
    kkkkkkkk
    kkkkkkkk
    kkkkkkkk
    kkkkkkkk
    kPpkkpPk
    kkkkkkkk
    kkkkkkkk
    kkkkkkkk
""", k="#141018", P="#e070ff", p="#b040e0"))

_add(_icon("witch", """
    ....kk......
    ...kPk......
    ...kPPk.....
    ..kPPPPk....
    ..kPGPPk....
    kkkkkkkkkkkk
    ..kSSSSSSk..
    ..kSkSSkSk..
    ..kSSSNSSk..
    ..kSSNNSSk..
    ...kSSSSk...
    ....kkkk....
""", k=K, P="#4a2a6a", G="#5cae3a", S="#c89a6a", N="#8a5a2a"))

_add(_icon("villager", """
    kkkkkkkk
    kSSSSSSk
    kkkSSkkk
    kWGSSGWk
    kSSNNSSk
    kSSNNSSk
    kSSNNSSk
    kkkkkkkk
""", k=K, S="#c89a6a", N="#a8704a", W="#f0f0f0", G="#3a8a3a"))

_add(_icon("pig", """
    .kk......kk.
    kPPkkkkkkPPk
    kPPPPPPPPPPk
    kPkkPPPPkkPk
    kPWkPPPPkWPk
    kPPPPPPPPPPk
    kPPPkkkkPPPk
    kPPkNkkNkPPk
    kPPPkkkkPPPk
    .kPPPPPPPPk.
    ..kkkkkkkk..
""", k=K, P="#8ad05a", W="#ffffff", N="#3c7a1c"))

_add(_icon("bird", """
    ......kkk.....
    .....kRRRk....
    ...kkRRRRRkk..
    ..kRRRRRRRRRk.
    .kRRWWkRWWkRRk
    .kRRWkkRWkkRRk
    kRRRRkkYYkkRRk
    kRRRRRYYYYRRRk
    kRRRRRRYYRRRRk
    kRRRWWWWWWRRRk
    .kRWWWWWWWWRk.
    ..kkWWWWWWkk..
    ....kkkkkk....
""", k=K, R="#e02a2a", W="#f4e4c8", Y="#ffb020"))

_add(_icon("beam-v", """
    kkkkk
    kLWLk
    kLBLk
    kLWLk
    kLWLk
    kLBLk
    kLWLk
    kLWLk
    kLBLk
    kLWLk
    kLWLk
    kLBLk
    kkkkk
""", k=K, L="#c8902a", W="#a87020", B="#6a4410"))

_add(_icon("beam-h", """
    kkkkkkkkkkkkk
    kLLLLLLLLLLLk
    kWWBWWBWWBWWk
    kLLLLLLLLLLLk
    kkkkkkkkkkkkk
""", k=K, L="#c8902a", W="#a87020", B="#6a4410"))

_add(_icon("grass", """
    GGGGGGGGGGGGGGGG
    GgGGGGgGGGGgGGGG
    GGGgGGGGGgGGGGgG
    DGDDGDGGDDGDGDDG
    DDDDDDDDDDDDDDDD
    DdDDDDdDDDDDdDDD
    DDDDdDDDDdDDDDDD
    DDdDDDDDDDDDDdDD
    DDDDDDDdDDDdDDDD
    DdDDDDDDDDDDDDdD
    DDDDdDDDDdDDDDDD
    DDDDDDDDDDDDdDDD
    DDdDDDDdDDDDDDDD
    DDDDDDDDDDDDDDdD
    DDDDDdDDDDdDDDDD
    DDDDDDDDDDDDDDDD
""", G="#5cae3a", g="#3c8a28", D="#8a5a32", d="#6a4424"))

_add(_icon("crossbow", """
    kkkkkkkkk.......
    kMMMMMMMk.......
    .kkkkkkMMk......
    ....khk.kMk.....
    ...khkhk.kMk....
    ..khk.khk.kMk...
    .khk...khkkMk...
    kHk.....khhMk...
    kk.......khhk...
    ..........khk...
    ...........kk...
""", k=K, h="#8a5a2b", H="#5a3a1a", M="#6e6e6e"))

_add(_icon("spyglass", """
    ............kkk.
    ...........kYYYk
    ..........kYWYYk
    .........kYYYYk.
    ........kYYYYk..
    .......kkkkkk...
    ......kBBBk.....
    .....kBBBk......
    ....kBBBk.......
    ...kBBBk........
    ..kBBBk.........
    .kBBBk..........
    kkkkk...........
""", k=K, Y="#e0a81c", W="#fff0a0", B="#a86a30"))

_add(_icon("lantern", """
    .....kkkk.....
    .....k..k.....
    ...kkkkkkkk...
    ...kGGGGGGk...
    ..kkYYWYYYkk..
    ..kGYWWWYYGk..
    ..kGYYWYYYGk..
    ..kGYYYYYYGk..
    ..kkkkkkkkkk..
""", k=K, G="#3a3a4a", Y="#ffc830", W="#fff8c8"))

_add(_icon("book", """
    kkkkkkkkkkkk
    kRRRRRRRRRWk
    kRYYYYYYRRWk
    kRRRRRRRRRWk
    kRRRRRRRRRWk
    kRRRRRRRRRWk
    kRRRRRRRRRWk
    kRRRRRRRRRWk
    kkkkkkkkkkWk
    .kWWWWWWWWWk
    ..kkkkkkkkkk
""", k=K, R="#8a2a2a", Y="#e0b040", W="#f0f0e0"))

_add(_icon("pot", """
    ...kkkkkk...
    ...kOOOOk...
    ..kkkkkkkk..
    .kOOOOOOOOk.
    kOOkkOOkkOOk
    kOOkOOOOkOOk
    kOOOOkkOOOOk
    kOOkOOOOkOOk
    .kOOOOOOOOk.
    ..kkkkkkkk..
""", k=K, O="#c06a3a"))

_add(_icon("flower", """
    ....kk.kk....
    ...kRRkRRk...
    ...kRYYYRk...
    ....kRYRk....
    .....kGk.....
    ...k.kGk.k...
    ..kGkkGkkGk..
    ...kkkGkkk...
    ..kkkkkkkkk..
    ..kOOOOOOOk..
    ...kOOOOOk...
    ....kkkkk....
""", k=K, R="#e03a5a", Y="#ffd020", G="#3c9a2c", O="#b05a2a"))

_add(_icon("banner", """
    kkkkkkkkkkkk
    kWWWWWWWWWWk
    kWWkkkkkkWWk
    kWWkGGGGkWWk
    kWWWkGGkWWWk
    kWWWWkkWWWWk
    kWWWWWWWWWWk
    kWWkWWWWkWWk
    kWkWkWWkWkWk
    kkWWWkkWWWkk
    k.kWk..kWk.k
""", k=K, W="#e8e8e0", G="#3a8a8a"))

_add(_icon("cauldron", """
    kk..........kk
    kGkkkkkkkkkkGk
    kGBBBBBBBBBBGk
    kGGGGGGGGGGGGk
    kGGGGGGGGGGGGk
    kGGkkkkkkkkGGk
    kGGGGGGGGGGGGk
    kGGGGGGGGGGGGk
    kkGGkkkkkkGGkk
    .kkk......kkk.
""", k=K, G="#4a4a4a", B="#3a6ae0"))

_add(_icon("totem", """
    ...kkkkkk...
    ..kYYYYYYk..
    ..kYkYYkYk..
    ..kYYYYYYk..
    ..kYGGGGYk..
    kkkYYYYYYkkk
    kYYYGGGGYYYk
    .kkYYYYYYkk.
    ...kYYYYk...
    ...kYkkYk...
    ...kkk.kk...
""", k=K, Y="#f0c830", G="#2fb45a"))

_add(_icon("sponge", """
    kkkkkkkkkkkk
    kYYYYYYYYYYk
    kYDYYYYDYYYk
    kYYYYDYYYYDk
    kYYDYYYYDYYk
    kYYYYYDYYYYk
    kDYYYYYYYDYk
    kYYYDYYYYYYk
    kYYYYYYDYYYk
    kkkkkkkkkkkk
""", k=K, Y="#c8c040", D="#8a8420"))

_add(_icon("glow", """
    kkkkkkkkkk
    kYOYYWYOYk
    kOYWYYOYYk
    kYYYOYYWOk
    kWYOYYYOYk
    kYOYYWYYOk
    kOYYOYOYYk
    kYWYYYYWYk
    kkkkkkkkkk
""", k=K, Y="#ffd860", O="#d89020", W="#fffbe0"))

_add(_icon("coin", """
    ...kkkkkk...
    ..kYYYYYYk..
    .kYWYYYYYOk.
    kYWYYkkYYYOk
    kYYYkYYkYYOk
    kYYYkYYYYYOk
    kYYYkYYkYYOk
    kYYYYkkYYYOk
    .kYYYYYYYOk.
    ..kOOOOOOk..
    ...kkkkkk...
""", k=K, Y="#ffd020", O="#c08a10", W="#fff7c2"))

_add(_icon("die", """
    kkkkkkkkkkk
    kWWWWWWWWWk
    kWkWWWWWkWk
    kWWWWWWWWWk
    kWWWWkWWWWk
    kWWWWWWWWWk
    kWkWWWWWkWk
    kWWWWWWWWWk
    kkkkkkkkkkk
""", k=K, W="#f4f4f4"))

# Generic shapes for subjects that have no icon of their own.
_add(_icon("circle", """
    ...kkkkk...
    .kkSSSSSkk.
    .kSSSSSSSk.
    kSSSSSSSSSk
    kSSSSSSSSSk
    kSSSSSSSSSk
    kSSSSSSSSSk
    kSSSSSSSSSk
    .kSSSSSSSk.
    .kkSSSSSkk.
    ...kkkkk...
""", k=K, S="#ffffff"))

_add(_icon("triangle", """
    .....k.....
    ....kSk....
    ....kSk....
    ...kSSSk...
    ...kSSSk...
    ..kSSSSSk..
    ..kSSSSSk..
    .kSSSSSSSk.
    .kSSSSSSSk.
    kSSSSSSSSSk
    kkkkkkkkkkk
""", k=K, S="#ffffff"))

_add(_icon("square", """
    kkkkkkkkkk
    kSSSSSSSSk
    kSSSSSSSSk
    kSSSSSSSSk
    kSSSSSSSSk
    kSSSSSSSSk
    kSSSSSSSSk
    kSSSSSSSSk
    kSSSSSSSSk
    kkkkkkkkkk
""", k=K, S="#ffffff"))

_add(_icon("rhombus", """
    .....kk.....
    ....kSSk....
    ...kSSSSk...
    ..kSSSSSSk..
    .kSSSSSSSSk.
    kSSSSSSSSSSk
    .kSSSSSSSSk.
    ..kSSSSSSk..
    ...kSSSSk...
    ....kSSk....
    .....kk.....
""", k=K, S="#ffffff"))

_add(_icon("hexagon", """
    ...kkkkkk...
    ..kSSSSSSk..
    .kSSSSSSSSk.
    kSSSSSSSSSSk
    kSSSSSSSSSSk
    kSSSSSSSSSSk
    .kSSSSSSSSk.
    ..kSSSSSSk..
    ...kkkkkk...
""", k=K, S="#ffffff"))

ICONS: Final = MappingProxyType(_ICONS)
GENERIC_SHAPES: Final = ("circle", "triangle", "square", "rhombus", "hexagon")
TOOL_ICONS: Final = frozenset({"sword", "pickaxe", "axe", "shovel", "hoe"})


def get_icon(name: str) -> PixelIcon:
    """The icon of this name; raises KeyError listing none (callers check `ICONS` first)."""
    return ICONS[name]


def identicon(text: str, colour: str) -> PixelIcon:
    """A symmetric 7×7 pattern derived from `text` (SHA-256), outlined, in `colour`.

    The same text always gives the same pattern; different texts give visibly different ones,
    which keeps faces without a dedicated icon apart for people and for the camera.
    """
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    bits = [(digest[i // 8] >> (i % 8)) & 1 for i in range(28)]
    half = 4
    grid = [["." for _ in range(7)] for _ in range(7)]
    for y in range(7):
        for x in range(half):
            if bits[y * half + x]:
                grid[y][x] = "C"
                grid[y][6 - x] = "C"
    # Guarantee a solid spine so the pattern never comes out empty.
    for y in range(1, 6):
        grid[y][3] = "C" if bits[(y + 20) % 28] or y == 3 else grid[y][3]
    framed = ["k" * 9] + ["k" + "".join(row).replace(".", "W") + "k" for row in grid] + ["k" * 9]
    return PixelIcon(
        name=f"identicon:{text}",
        rows=tuple(framed),
        palette=MappingProxyType({"k": K, "C": colour, "W": "#f4f4f4"}),
    )
