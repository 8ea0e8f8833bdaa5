"""Drawing the evaluation: the report a person reads, its plots, and contact sheets of frames.

Everything here reads plain data, the summary `vision.evaluate` builds (per clip and overall,
version `SUMMARY_VERSION`), and writes files: `summary.json`, `report.md` (tables, links to
the plots and to the contact sheets of every missed or spurious move), and PNG plots drawn with
matplotlib's Agg canvas (no display, no global pyplot state): the identification confusion of
the worst faces, the latency histogram, and recall against visible fraction. `contact_sheet`
lays out a few frames around a wrong move as thumbnails with their frame numbers. Nothing here
computes a figure; it only shows what the summary holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

SHEET_OFFSETS_S = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0)  # contact sheet frames around a wrong move
THUMB_WIDTH = 320
SHEET_COLUMNS = 3
PLOTS = {"confusion": "plots/confusion.png", "latency": "plots/latency.png", "recall": "plots/recall-visible.png"}


# -- summary file ----------------------------------------------------------------------------------


def dumps_summary(summary: Mapping[str, Any]) -> str:
    """A summary as JSON that diffs well: one key per line, but every list of numbers or of
    short rows (histogram bins, score bins) on one line."""

    def flat(value: Any) -> bool:
        scalar = (str, int, float, bool, type(None))
        return isinstance(value, list) and all(
            isinstance(v, scalar) or (isinstance(v, list) and all(isinstance(x, scalar) for x in v)) for v in value
        )

    def dump(value: Any, depth: int) -> str:
        pad, inner = " " * depth, " " * (depth + 1)
        if isinstance(value, Mapping) and value:
            items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {dump(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(items) + f"\n{pad}}}"
        if isinstance(value, list) and value and not flat(value):
            return "[\n" + ",\n".join(f"{inner}{dump(v, depth + 1)}" for v in value) + f"\n{pad}]"
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))

    return dump(summary, 0) + "\n"


# -- contact sheets ----------------------------------------------------------------------------------


def sheet_frames(frame: int, fps: float, last: int) -> list[int]:
    """The frames a contact sheet shows around `frame`: from 2 s before to 1 s after, within
    the clip (0..`last`), each once."""
    picks = sorted({min(max(frame + round(o * fps), 0), max(last, 0)) for o in SHEET_OFFSETS_S})
    return picks


def thumbnail(image: np.ndarray) -> np.ndarray:
    """A frame at contact-sheet size (`THUMB_WIDTH` wide, same aspect)."""
    h, w = image.shape[:2]
    size = (THUMB_WIDTH, max(1, round(THUMB_WIDTH * h / max(w, 1))))
    return image if (w, h) == size else cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def contact_sheet(
    frames: Sequence[tuple[int, np.ndarray]], *, marked: int, title: str = "", marked_label: str = ""
) -> np.ndarray:
    """Thumbnails of `frames` (index, BGR image) in rows of three, each with its frame number;
    the thumbnail of frame `marked` (or the first after it) framed in red with `marked_label`."""
    if not frames:
        raise ValueError("contact_sheet: no frames to show")
    h0, w0 = frames[0][1].shape[:2]
    tw, th = THUMB_WIDTH, max(1, round(THUMB_WIDTH * h0 / max(w0, 1)))
    rows = (len(frames) + SHEET_COLUMNS - 1) // SHEET_COLUMNS
    width = SHEET_COLUMNS * tw
    per_line = max(20, width // 8)
    text = _ascii(title)
    lines = [text[k:k + per_line] for k in range(0, len(text), per_line)][:3] or [""]
    header = 8 + 18 * len(lines)
    sheet = np.full((header + rows * th, width, 3), 32, np.uint8)
    for k, line in enumerate(lines):
        _text(sheet, line, (6, 19 + 18 * k), 0.45)
    target = next((i for i, _ in frames if i >= marked), frames[-1][0])
    for k, (index, image) in enumerate(frames):
        r, c = divmod(k, SHEET_COLUMNS)
        y, x = header + r * th, c * tw
        thumb = image if image.shape[:2] == (th, tw) else cv2.resize(image, (tw, th), interpolation=cv2.INTER_AREA)
        sheet[y:y + th, x:x + tw] = thumb
        label = f"frame {index}"
        if index == target:
            cv2.rectangle(sheet, (x + 1, y + 1), (x + tw - 2, y + th - 2), (0, 0, 255), 3)
            label += f"  {marked_label}" if marked_label else ""
        cv2.rectangle(sheet, (x, y), (x + min(tw, 12 + 8 * len(label)), y + 22), (0, 0, 0), -1)
        _text(sheet, label, (x + 5, y + 16), 0.45)
    return sheet


def _text(image: np.ndarray, text: str, origin: tuple[int, int], scale: float) -> None:
    cv2.putText(image, text, origin, cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), 1, cv2.LINE_AA)


def _ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode("ascii")


# -- plots ------------------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def plot_confusion(confusion: Mapping[str, Mapping[str, int]], path: Path, *, faces: int = 12) -> Path:
    """Rows: the faces read wrong most often; columns: what they were read as; cells: share of
    the row's crops."""
    worst = sorted(
        ((sum(r.values()) - r.get(f, 0), f) for f, r in confusion.items() if sum(r.values()) - r.get(f, 0) > 0),
        key=lambda x: (-x[0], x[1]),
    )[:faces]
    fig = _figure(9.0, 6.0)
    ax = fig.add_subplot()
    if not worst:
        ax.text(0.5, 0.5, "no identification errors" if confusion else "no identified crops",
                ha="center", va="center", fontsize=14)
        ax.set_axis_off()
    else:
        rows = [f for _, f in worst]
        cols: list[str] = []
        for face in rows:
            for said in sorted(confusion[face], key=lambda s: -confusion[face][s]):
                if said not in cols:
                    cols.append(said)
        cols = cols[:16]
        grid = np.zeros((len(rows), len(cols)))
        for i, face in enumerate(rows):
            total = sum(confusion[face].values())
            for j, said in enumerate(cols):
                grid[i, j] = confusion[face].get(said, 0) / total
        image = ax.imshow(grid, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", fontsize=8)
        ax.set_yticks(range(len(rows)), [f"{f} ({sum(confusion[f].values())})" for f in rows], fontsize=8)
        ax.set_xlabel("read as")
        ax.set_ylabel("true face (crops)")
        fig.colorbar(image, ax=ax, label="share of the face's crops")
    ax.set_title("Identification of the worst faces")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def plot_latency(latency: Sequence[int], path: Path) -> Path:
    """Histogram of frames from each truth move's completion to the move read."""
    fig = _figure(7.0, 4.0)
    ax = fig.add_subplot()
    if latency:
        lo, hi = min(latency), max(latency)
        ax.hist(latency, bins=np.arange(lo - 0.5, hi + 1.5, max(1, (hi - lo + 1) // 30)), color="#3b7dd8")
        ax.axvline(float(np.median(latency)), color="#d83b3b", linestyle="--", label=f"median {np.median(latency):g}")
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no matched moves", ha="center", va="center", transform=ax.transAxes)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("frames from the truth move's completion to the move read")
    ax.set_ylabel("moves")
    ax.set_title(f"Move latency ({len(latency)} matched moves)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def plot_recall(summary: Mapping[str, Any], path: Path) -> Path:
    """Finder recall (IoU 0.5) per visible-fraction bin: each clip, and overall in bold."""
    fig = _figure(7.0, 4.5)
    ax = fig.add_subplot()

    def line(rows: Sequence[Mapping[str, Any]], label: str, bold: bool) -> None:
        xs = [k for k, r in enumerate(rows) if r.get("recall") is not None]
        ys = [rows[k]["recall"] for k in xs]
        ax.plot(xs, ys, marker="o", linewidth=2.5 if bold else 1.0, alpha=1.0 if bold else 0.6, label=label)

    for name, clip in summary.get("clips", {}).items():
        line(clip["finder"]["recall_by_visible"], name, False)
    overall = summary["overall"]["finder"]["recall_by_visible"]
    line(overall, "overall", True)
    ax.set_xticks(range(len(overall)), [f"{r['visible']}\n(n={r['cards']})" for r in overall], fontsize=8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("visible fraction of the card (cards in the overall bin)")
    ax.set_ylabel("recall at IoU 0.5")
    ax.set_title("Cards found, by how much of them is seen")
    ax.legend(fontsize=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


# -- report ----------------------------------------------------------------------------------------


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _crop_cell(io: Mapping[str, Any]) -> str:
    figures = io.get("crop_corner_error_pct") or {}
    return f"{_f(figures.get('p50'), 2)} / {_f(figures.get('p95'), 2)} % of card width"


def _moves_cell(moves: Mapping[str, Any]) -> str:
    return (f"{_f(moves['precision'], 2)} / {_f(moves['recall'], 2)} / {_f(moves['f1'], 2)} "
            f"({moves['matched']} of {moves['truth']}, {moves['emitted']} read)")


def _state_cell(state: Mapping[str, Any]) -> str:
    if not state["compared"]:
        return "not compared"
    return f"{state['equal']} of {state['compared']} equal"


def _move_text(move: Mapping[str, Any]) -> str:
    return "`" + json.dumps(move, ensure_ascii=False, separators=(", ", ": ")) + "`"


def report_markdown(summary: Mapping[str, Any]) -> str:
    """The report: overall and per-clip tables, the plots, and the wrong moves with their
    contact sheets."""
    o = summary["overall"]
    models = summary.get("models", {})
    lines = ["# cardtrack evaluation", ""]
    if models.get("oracle"):
        lines.append("Models: **truth stand-ins** (finder and identifier read the truth: only the stages "
                     "downstream of the models are measured).")
    else:
        named = [f"{key} **truth stand-in**" if models.get(f"{key}_sha256") is None and models.get(key) == "truth stand-in"
                 else f"{key} `{models.get(key)}` ({models.get(f'{key}_sha256')})" for key in ("finder", "identifier")]
        lines.append(f"Models: {named[0]}, {named[1]}.")
    shard = summary.get("shard")
    if shard:
        lines.append(f"Shard {shard['index']}/{shard['count']}: every {shard['count']}th clip from clip {shard['index']}.")
    if summary.get("merged_from"):
        lines.append(f"Merged from {len(summary['merged_from'])} summaries: " +
                     ", ".join(f"`{s}`" for s in summary["merged_from"]) + ".")
    lines += ["", "What each figure means: `docs/evaluation.md`.", "", "## Overall", "",
              "| figure | value |", "|---|---|"]
    fo, io, mo, lo = o["finder"], o["identifier"], o["moves"], o["latency_frames"]
    lines += [
        f"| clips, frames | {o['clips']}, {o['speed']['frames']} |",
        f"| finder AP@0.5 / AP@[.5:.95] (cards ≥ 30 % visible: {fo['truth_cards']}) | {_f(fo['ap50'])} / {_f(fo['ap50_95'])} |",
        f"| corner error, median (found cards ≥ 60 % visible: {fo['corner_cards']}) | "
        f"{_f(fo['corner_error_px']['p50'], 2)} px = {_f(fo['corner_error_pct']['p50'], 2)} % of card width |",
        f"| identifier top-1 (crops: {io['scored']}; unknown: {io['unknown']}) | {_f(io['top1'])} "
        f"(answered: {_f(io['top1_answered'])}) |",
        f"| corner error of the identifier's crops, median / p95 (cards ≥ 60 % visible: {io.get('crop_cards', 0)}) | "
        f"{_crop_cell(io)} |",
        f"| tracked identity, per card and frame ({o['tracked']['cards']}) | {_f(o['tracked']['accuracy'])} |",
        f"| moves precision / recall / F1 | {_moves_cell(mo)} |",
        f"| latency, frames p50 / p95 / max ({lo['moves']} moves) | {_f(lo['p50'], 1)} / {_f(lo['p95'], 1)} / {_f(lo['max'])} |",
        f"| final state | {_state_cell(o['final_state'])} |",
        f"| final scores (and winner) | {_state_cell(o.get('final_scores') or {'compared': 0})} |",
        *([f"| referee: rounds whose outcome was announced right | {_referee_cell(o['referee'])} |"]
          if o.get("referee", {}).get("rounds") else []),
        f"| speed | {_f(o['speed']['fps'], 1)} frames/s in `Pipeline.process` |",
        "",
        "## Clips",
        "",
        "| clip | frames | AP@0.5 | AP@[.5:.95] | top-1 | moves P / R / F1 | latency p50 | final state | fps |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in summary["clips"].items():
        lines.append(
            f"| [{name}](#{_anchor(name)}) | {c['frames']} | {_f(c['finder']['ap50'])} | {_f(c['finder']['ap50_95'])} | "
            f"{_f(c['identifier']['top1'])} | {_moves_cell(c['moves'])} | {_f(c['latency_frames']['p50'], 1)} | "
            f"{_state_cell(c['final_state'])} | {_f(c['speed']['fps'], 1)} |"
        )
    lines += ["", "## Plots", "",
              f"![identification confusion]({PLOTS['confusion']})", "",
              f"![latency]({PLOTS['latency']})", "",
              f"![recall by visible fraction]({PLOTS['recall']})", ""]
    for name, c in summary["clips"].items():
        lines += _clip_section(name, c)
    return "\n".join(lines) + "\n"


def _referee_cell(referee: Mapping[str, Any]) -> str:
    return f"{_f(referee['accuracy'])} ({referee['called']} of {referee['rounds']})"


def _anchor(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "-" else "" for ch in name.lower().replace(" ", "-"))


def _clip_section(name: str, c: Mapping[str, Any]) -> list[str]:
    f, ident = c["finder"], c["identifier"]
    lines = [f"## {name}", "",
             f"`{c['footage']}` ({c['game']}, {c['players']} players, {c['fps']:g} fps, {c['frames']} frames"
             + (f", cut at frame {c['cut_at_frame']}" if c.get("cut_at_frame") else "")
             + f"); moves matched within {c['tolerance_frames']} frames.", "",
             "### Finder", "",
             f"AP@0.5 {_f(f['ap50'])}, AP@[.5:.95] {_f(f['ap50_95'])} over {f['frames']} annotated frames "
             f"({f['truth_cards']} cards ≥ 30 % visible, {f['detections']} detections). Corner error "
             f"p50 / p95: {_f(f['corner_error_px']['p50'], 2)} / {_f(f['corner_error_px']['p95'], 2)} px, "
             f"{_f(f['corner_error_pct']['p50'], 2)} / {_f(f['corner_error_pct']['p95'], 2)} % of card width.", "",
             "| visible | cards | found | recall |", "|---|---|---|---|"]
    lines += [f"| {r['visible']} | {r['cards']} | {r['found']} | {_f(r['recall'])} |" for r in f["recall_by_visible"]]
    lines += ["", "### Identifier", "",
              f"Top-1 {_f(ident['top1'])} over {ident['scored']} crops of found cards ({ident['unknown']} answered "
              f"unknown; {ident['crops'] - ident['scored']} crops matched no card ≥ 30 % visible). Tracked "
              f"identity: {_f(c['tracked']['accuracy'])} of {c['tracked']['cards']} card-frames.", ""]
    if ident["worst_faces"]:
        lines += ["| face | crops | accuracy | taken for |", "|---|---|---|---|"]
        for w in ident["worst_faces"]:
            taken = ", ".join(f"{t['face']} ({t['crops']})" for t in w["taken_for"])
            lines.append(f"| {w['face']} | {w['crops']} | {_f(w['accuracy'])} | {taken} |")
        lines.append("")
    m, lt = c["moves"], c["latency_frames"]
    lines += ["### Moves", "",
              f"Precision / recall / F1: {_moves_cell(m)}. Latency p50 / p95 / max: {_f(lt['p50'], 1)} / "
              f"{_f(lt['p95'], 1)} / {_f(lt['max'])} frames.", ""]
    moves = c.get("move_list", {})
    for kind, label in (("missed", "Missed (in the truth, not read)"), ("spurious", "Spurious (read, not in the truth)")):
        items = moves.get(kind, [])
        if not items:
            continue
        lines += [f"{label}:", ""]
        for item in items:
            sheet = f" — [frames]({item['sheet']})" if item.get("sheet") else ""
            lines.append(f"- frame {item['frame']}: {_move_text(item['move'])}{sheet}")
        lines.append("")
    calls = c.get("round_calls") or []
    if calls:
        lines += ["### Referee", "",
                  f"Rounds whose outcome the overlay announced right when the cards were collected: "
                  f"{_referee_cell(c['referee'])}.", ""]
        wrong = [r for r in calls if not r["right"]]
        if wrong:
            lines += ["| collected at frame | cards | announced | real |", "|---|---|---|---|"]
            for r in wrong:
                cards = ", ".join(f"{p}: {card}" for p, card in r["truth"]["cards"].items())
                lines.append(f"| {r['frame']} | {cards} | {r['says']} | {r['should']} |")
            lines.append("")
    lines += ["### Final state", ""]
    if not c["final_state"]["compared"]:
        lines += ["Not compared (no final state in the truth, or the clip was cut).", ""]
    elif c["final_state"]["equal"]:
        lines += ["Equal to the truth's.", ""]
    else:
        scores = c.get("final_scores") or {"compared": 0}
        if scores["compared"]:
            lines += [("The scores and the winner are the truth's; the rest differs:" if scores["equal"]
                       else "The scores or the winner differ:"), ""]
        lines += ["| where | differs in | read | truth |", "|---|---|---|---|"]
        for d in c.get("final_state_differences", []):
            lines.append(f"| `{d['path']}` | {d.get('kind', '')} | `{json.dumps(d['read'])}` | "
                         f"`{json.dumps(d['truth'])}` |")
        lines.append("")
    lines += ["### Speed", "",
              f"{_f(c['speed']['fps'], 1)} frames/s; per frame p50 / p95 {_f(c['frame_ms']['p50'], 2)} / "
              f"{_f(c['frame_ms']['p95'], 2)} ms.", "",
              "| stage | calls | mean ms | p50 ms | p95 ms |", "|---|---|---|---|---|"]
    for stage, s in c["stage_ms"].items():
        mean = c["speed"]["ms_per_stage"].get(stage, {}).get("mean_ms")
        lines.append(f"| {stage} | {s['calls']} | {_f(mean, 2)} | {_f(s['p50'], 2)} | {_f(s['p95'], 2)} |")
    lines.append("")
    return lines


def write_report(summary: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """`summary.json`, `report.md` and the plots under `out_dir`; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    summary_path = out_dir / "summary.json"
    summary_path.write_text(dumps_summary(summary), encoding="utf-8")
    counts = summary["overall"]["counts"]
    written = [
        summary_path,
        plot_confusion(counts["confusion"], out_dir / PLOTS["confusion"]),
        plot_latency(counts["latency_frames"], out_dir / PLOTS["latency"]),
        plot_recall(summary, out_dir / PLOTS["recall"]),
    ]
    report = out_dir / "report.md"
    report.write_text(report_markdown(summary), encoding="utf-8")
    written.append(report)
    return written
