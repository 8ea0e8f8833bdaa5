"""`cardtrack deck`: look at a game's deck, render its proxy art, print it to play, enroll a
real deck from scans or photos, and check that a pack's faces are distinct.

Each subcommand is one handler function (`list_command`, `render_command`, `print_command`)
and one `add_parser` block in `register`; a new subcommand adds the same two pieces.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tqdm import tqdm

from engine import get_game
from engine.catalog import CATALOG_DIR_ENV, Catalog, available_games, load_catalog, parse_catalog
from vision.art.distinct import DEFAULT_MARGIN, check_distinct
from vision.art.enroll import ExtractConfig, enroll, load_name_map, shipped_name_map, summarise
from vision.art.pack import PACK_FILE, ImageSource, load_pack, proxy_pack, render_proxy_pack
from vision.art.printsheet import PRINT_DPI, Paper, proxy_images, write_pdf
from vision.art.proxy import MAX_DPI, MIN_DPI

# Card attributes worth a column in `deck list` (others are rules bookkeeping).
_SKIP_ATTRS = frozenset({"orientation", "per_player", "per_player_minus_one", "start", "fixed"})


def _attr_text(value: Any) -> str:
    if isinstance(value, Mapping):
        return "+".join(f"{v}{k[:1].upper()}{k[1:]}" if isinstance(v, int) else f"{k}:{v}" for k, v in value.items())
    if isinstance(value, tuple):
        return "/".join(_attr_text(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _key_attrs(attrs: Mapping[str, Any]) -> str:
    parts = [f"{k}={_attr_text(v)}" for k, v in attrs.items() if k not in _SKIP_ATTRS and v is not None]
    return " ".join(parts)


def deck_table(catalog: Catalog) -> list[str]:
    """The lines of `deck list`: one row per card type, then totals."""
    rows = [("id", "name", "kind", "count", "faces (front / back)", "attributes")]
    for card in catalog.cards.values():
        rows.append(
            (card.id, card.name, card.kind, str(card.count), f"{card.front} / {card.back}", _key_attrs(card.attrs))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for i, row in enumerate(rows):
        cells = [row[j].rjust(widths[j]) if j == 3 else row[j].ljust(widths[j]) for j in range(5)]
        lines.append("  ".join([*cells, row[5]]).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 10)
    by_kind = Counter[str]()
    for card in catalog.cards.values():
        by_kind[card.kind] += card.count
    lines.append("")
    lines.append(
        f"{catalog.total} cards in {len(catalog.cards)} types, {len(catalog.faces)} distinct faces"
        f" ({sum(1 for f in catalog.faces.values() if f.side == 'front')} front,"
        f" {sum(1 for f in catalog.faces.values() if f.side == 'back')} back);"
        f" card size {catalog.card_size_mm[0]:g}×{catalog.card_size_mm[1]:g} mm"
    )
    lines.append("by kind: " + ", ".join(f"{kind} {n}" for kind, n in by_kind.items()))
    if catalog.tokens:
        lines.append("tokens: " + ", ".join(f"{t.name} ×{t.count}" for t in catalog.tokens.values()))
    if catalog.placeholder:
        lines.append("note: this catalog is a placeholder; edit the JSON file to match a real deck")
    return lines


def list_command(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.game)
    print(f"{catalog.name} ({catalog.game}){' - ' + catalog.publisher if catalog.publisher else ''}")
    print()
    for line in deck_table(catalog):
        print(line)
    return 0


def render_command(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a folder; choose a folder for the art pack")
    if out.is_dir() and any(out.iterdir()) and not (out / PACK_FILE).exists():
        raise ValueError(f"{out}: folder is not empty and holds no {PACK_FILE}; choose an empty folder")
    pack = render_proxy_pack(args.game, out, dpi=args.dpi, progress=not args.quiet)
    print(f"wrote {len(pack.faces)} faces of {args.game} at {args.dpi:g} dpi to {out}/ ({PACK_FILE})")
    return 0


def print_command(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.game)
    if args.pack:
        pack = load_pack(args.pack)
        if pack.game != catalog.game:
            raise ValueError(f"{args.pack}: the pack is for {pack.game!r}, not {catalog.game!r}")
        missing = pack.missing_faces(catalog)
        if missing:
            raise ValueError(
                f"{args.pack}: no image for {len(missing)} faces (e.g. {', '.join(missing[:3])}); "
                "complete the pack or print the proxy art"
            )
        image_for: ImageSource = pack.image
    else:
        image_for = proxy_images(catalog, PRINT_DPI)
    result = write_pdf(catalog, args.out, args.paper, image_for=image_for, progress=not args.quiet)
    print(
        f"wrote {result.path}: {result.cards} cards on {result.sheets} sheets "
        f"({result.pages} pages, {result.per_page} cards a page, {result.paper.value})"
        + (f", then {result.token_pages} one-sided token page(s)" if result.token_pages else "")
    )
    print("print at 100% / actual size, two-sided, flip on the long edge; check the 50 mm bar")
    return 0


def enroll_command(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.is_dir() and any(out.iterdir()) and not (out / PACK_FILE).exists():
        raise ValueError(f"{out}: folder is not empty and holds no {PACK_FILE}; choose an empty folder")
    names = Path(args.names) if args.names else shipped_name_map(args.game)
    name_map = load_name_map(names) if names else None
    print(f"name map: {names or 'none (files named after their face ids)'}")
    config = ExtractConfig(dpi=args.dpi, upscale=args.upscale)
    report = enroll(args.game, args.images, out, name_map, config=config, progress=not args.quiet)
    for line in summarise(report):
        print(line)
    return 0 if report.complete else 1


def check_command(args: argparse.Namespace) -> int:
    if args.pack == "proxy":
        if not args.game:
            raise ValueError("`deck check proxy` needs --game to know which proxy pack")
        pack = proxy_pack(args.game, progress=not args.quiet)
    else:
        pack = load_pack(args.pack, check_images=False)
    faces = list(pack.faces)
    images = {f: pack.image(f) for f in tqdm(faces, desc="reading faces", disable=args.quiet)}
    report = check_distinct(images, margin=args.margin, top=args.top)
    print(f"{pack.name} ({pack.game}, {report.faces} faces): closest pairs, distance in ΔE")
    for p in report.closest:
        mark = "  < margin" if p.distance < report.margin else ""
        turned = " (turned 180°)" if p.turned else ""
        print(f"  {p.distance:6.1f}  mean {p.mean:5.1f}  peak {p.peak:5.1f}  {p.a} ~ {p.b}{turned}{mark}")
    for p in report.turn_symmetric:
        print(f"  note: {p.a} looks alike turned 180° ({p.distance:.1f}); a turn of it cannot be seen")
    if report.ok:
        print(f"ok: every pair of faces is at least {report.margin:g} apart")
        return 0
    print(f"FAIL: {len(report.failing)} pairs closer than the margin {report.margin:g}:")
    for p in report.failing:
        print(f"  {p.distance:6.1f}  {p.a} ~ {p.b}")
    return 1


def import_command(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    importer = getattr(game, "import_deck_csv", None)
    if importer is None:
        raise ValueError(f"{args.game}: no CSV deck import for this game; edit its catalog JSON instead")
    source = Path(args.csv)
    try:
        text = source.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ValueError(f"{source}: cannot read ({exc.strerror})") from None
    document = importer(text, str(source))
    catalog = parse_catalog(document, str(source))
    out = Path(args.out)
    if out.is_dir():
        out = out / f"{catalog.game}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: {catalog.total} cards, {len(catalog.faces)} faces of {catalog.game}")
    if out.name == f"{catalog.game}.json":
        print(f"play with it: {CATALOG_DIR_ENV}={out.parent} cardtrack ...")
    else:
        print(f"to play with it, name it {catalog.game}.json in a folder set as {CATALOG_DIR_ENV}")
    return 0


def _dpi(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not MIN_DPI <= value <= MAX_DPI:
        raise argparse.ArgumentTypeError(f"dpi must be between {MIN_DPI} and {MAX_DPI}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "deck",
        help="list a game's cards, render proxy art, print a deck to play",
        description="Work with a game's deck: its cards and faces, and card art (art packs).",
    )
    dsub = parser.add_subparsers(dest="deck_command", metavar="ACTION", required=True)
    games = ", ".join(available_games())

    p = dsub.add_parser("list", help="a table of the deck: ids, names, counts, faces, attributes")
    p.add_argument("--game", required=True, help=f"game id ({games})")
    p.set_defaults(func=list_command)

    p = dsub.add_parser(
        "render",
        help="render the proxy art of every face into an art pack folder",
        description="Draw every face of the game with the built-in proxy renderer and write "
        "the PNGs and a pack.json manifest (a valid art pack, see docs/decks.md).",
    )
    p.add_argument("--game", required=True, help=f"game id ({games})")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write the pack into")
    p.add_argument("--dpi", type=_dpi, default=300.0, help="resolution (default 300)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=render_command)

    p = dsub.add_parser(
        "print",
        help="write a print-and-play PDF of the whole deck (duplex, true size, cut marks)",
        description="Lay out every physical card (copies repeated) on front pages and matching "
        "back pages for two-sided printing, flipped on the long edge, at true size.",
    )
    p.add_argument("--game", required=True, help=f"game id ({games})")
    p.add_argument("--paper", choices=[x.value for x in Paper], default=Paper.A4.value)
    p.add_argument("--out", required=True, metavar="FILE.pdf", help="the PDF to write")
    p.add_argument("--pack", metavar="DIR", help="print this art pack instead of the proxy art")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=print_command)

    p = dsub.add_parser(
        "enroll",
        help="build an art pack from scans or photos of a real deck",
        description="Cut each card out of its scan or photo, rectify it to the card's size and "
        "name it by a name map; report missing faces and files that matched nothing. Exit 1 "
        "while faces are missing (the pack is written anyway). See docs/decks.md.",
    )
    p.add_argument("--game", required=True, help=f"game id ({games})")
    p.add_argument("--images", required=True, metavar="DIR", help="folder of scans or photos")
    p.add_argument("--out", required=True, metavar="PACK", help="folder to write the pack into")
    p.add_argument(
        "--names",
        metavar="MAP",
        help="name map (.json rules or .csv file,face); default: datasets/namemaps/<game>.*",
    )
    p.add_argument("--dpi", type=_dpi, default=300.0, help="resolution (default 300)")
    p.add_argument("--upscale", action="store_true", help="resample above an image's own resolution")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=enroll_command)

    p = dsub.add_parser(
        "import",
        help="write a catalog from a CSV of a real deck's cards (see docs/decks.md)",
        description="Read a CSV of a real deck (one row per card; columns documented in "
        "docs/rules/<game>.md), check every row and write a catalog JSON file. Put it in a "
        f"folder named by the environment variable {CATALOG_DIR_ENV} to play with it.",
    )
    p.add_argument("csv", metavar="CSV", help="the deck's cards, one row each")
    p.add_argument("--game", required=True, help=f"game id ({games})")
    p.add_argument("--out", required=True, metavar="FILE", help="catalog JSON to write (or a folder)")
    p.set_defaults(func=import_command)

    p = dsub.add_parser(
        "check",
        help="list the faces a camera may confuse; exit 1 when a pair is closer than the margin",
        description="Compare every pair of faces of an art pack (both ways up) by a colour "
        "thumbnail distance (docs/decks.md) and list the closest pairs.",
    )
    p.add_argument("pack", metavar="PACK", help="art pack folder, or `proxy` with --game")
    p.add_argument("--game", help="with PACK `proxy`: the game whose proxy art to check")
    p.add_argument("--top", type=int, default=10, help="how many closest pairs to list (default 10)")
    p.add_argument(
        "--margin", type=float, default=DEFAULT_MARGIN,
        help=f"smallest allowed distance in ΔE (default {DEFAULT_MARGIN:g})",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=check_command)
