"""Debug drawings: the calibration preview on a camera frame and the layout plan in mm.

Annotators take an image and data and return a new image; they hold no logic of their own.
`annotate_profile` projects the game's zones (edges densified, so lens distortion shows as
curves), a 100 mm table grid and the markers through a `TableProfile` onto a camera frame:
if the outlines sit on the real piles and edges, the calibration is right.
`render_layout` draws a layout as a plan view, one pixel per `px_per_mm`.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from calibration.layout import Layout, ZoneKind
from calibration.markers import TableCorner
from calibration.profile import TableProfile

# BGR colours per zone kind.
KIND_COLOURS: Mapping[ZoneKind, tuple[int, int, int]] = {
    ZoneKind.PILE: (40, 160, 255),
    ZoneKind.SPREAD: (80, 200, 80),
    ZoneKind.SLOT: (230, 160, 40),
    ZoneKind.HOLDER: (200, 80, 220),
    ZoneKind.TOKEN_AREA: (60, 220, 230),
    ZoneKind.DIE: (90, 90, 240),
}


def _densify(polygon: np.ndarray, step_mm: float = 10.0) -> np.ndarray:
    out: list[np.ndarray] = []
    for a, b in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        n = max(1, int(np.ceil(np.linalg.norm(b - a) / step_mm)))
        out.extend(a + (b - a) * t for t in np.arange(n) / n)
    return np.asarray(out, np.float64)


def _label(image: np.ndarray, text: str, at: tuple[int, int], scale: float, colour: tuple[int, int, int]) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    thickness = max(1, round(scale * 1.6))
    (w, h), base = cv2.getTextSize(text, font, scale, thickness)
    x, y = at[0] - w // 2, at[1] + h // 2
    cv2.rectangle(image, (x - 2, y - h - 2), (x + w + 2, y + base), (20, 20, 20), -1)
    cv2.putText(image, text, (x, y), font, scale, colour, thickness, cv2.LINE_AA)


def annotate_profile(
    image: np.ndarray,
    profile: TableProfile,
    layout: Layout | None = None,
    *,
    grid_mm: float = 100.0,
    label_scale: float = 0.4,
) -> np.ndarray:
    """The camera frame with the table grid, markers and zones projected onto it."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    w, h = profile.table_mm
    overlay = out.copy()
    # Table grid every `grid_mm`, and the table rectangle between marker centres.
    for x in np.arange(0.0, w + 1e-6, grid_mm):
        line = profile.table_to_image(np.column_stack([np.full(20, x), np.linspace(0, h, 20)]))
        cv2.polylines(overlay, [np.round(line).astype(np.int32)], False, (200, 200, 200), 1, cv2.LINE_AA)
    for y in np.arange(0.0, h + 1e-6, grid_mm):
        line = profile.table_to_image(np.column_stack([np.linspace(0, w, 20), np.full(20, y)]))
        cv2.polylines(overlay, [np.round(line).astype(np.int32)], False, (200, 200, 200), 1, cv2.LINE_AA)
    rect = profile.table_to_image(_densify(profile.geometry.table_corners(), 20.0))
    cv2.polylines(overlay, [np.round(rect).astype(np.int32)], True, (255, 255, 255), 2, cv2.LINE_AA)
    if layout is not None:
        for zone in layout.zones:
            poly = profile.table_to_image(_densify(np.asarray(zone.polygon)))
            cv2.fillPoly(overlay, [np.round(poly).astype(np.int32)], KIND_COLOURS[zone.kind], cv2.LINE_AA)
    out = cv2.addWeighted(overlay, 0.35, out, 0.65, 0.0)
    if layout is not None:
        for zone in layout.zones:
            colour = KIND_COLOURS[zone.kind]
            poly = profile.table_to_image(_densify(np.asarray(zone.polygon)))
            cv2.polylines(out, [np.round(poly).astype(np.int32)], True, colour, 2, cv2.LINE_AA)
        for zone in layout.zones:
            c = profile.table_to_image(np.asarray([zone.center]))[0]
            _label(out, zone.id, (int(c[0]), int(c[1])), label_scale, KIND_COLOURS[zone.kind])
    for marker_id, corners in profile.expected_marker_corners().items():
        pts = np.round(corners).astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 0, 255), 2, cv2.LINE_AA)
        c = corners.mean(axis=0)
        _label(out, f"{marker_id} {TableCorner(marker_id).label}", (int(c[0]), int(c[1] - 0.8 * np.ptp(corners[:, 1]) - 8)),
               label_scale, (0, 0, 255))
    for obs in profile.observations:
        for p in obs.corners_px:
            cv2.circle(out, (round(p[0]), round(p[1])), 3, (0, 255, 0), 1, cv2.LINE_AA)
    if profile.errors is not None:
        e = profile.errors
        text = (f"{profile.game} {profile.players}p  table {w:g}x{h:g} mm  "
                f"error rms {e.rms_px:.2f} px / {e.rms_mm:.2f} mm, max {e.max_mm:.2f} mm")
        cv2.putText(out, text, (10, out.shape[0] - 12), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, text, (10, out.shape[0] - 12), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def render_layout(layout: Layout, *, px_per_mm: float = 1.0, margin_mm: float = 50.0) -> np.ndarray:
    """A plan view of the layout: table rectangle, marker keep-outs, zones by kind, seats."""
    w, h = layout.table_mm
    s = px_per_mm
    title_px = round(22 * max(s, 1.0))
    size = (round((w + 2 * margin_mm) * s), round((h + 2 * margin_mm) * s) + title_px)
    img = np.full((size[1], size[0], 3), 245, np.uint8)

    def px(points: np.ndarray) -> np.ndarray:
        mapped = np.round((np.asarray(points, np.float64) + margin_mm) * s).astype(np.int32)
        return mapped + np.array([0, title_px], np.int32)

    cv2.rectangle(img, tuple(px(np.array([0.0, 0.0]))), tuple(px(np.array([w, h]))), (170, 200, 225), -1)
    for x in np.arange(0.0, w + 1e-6, 100.0):
        cv2.line(img, tuple(px(np.array([x, 0.0]))), tuple(px(np.array([x, h]))), (150, 180, 205), 1)
    for y in np.arange(0.0, h + 1e-6, 100.0):
        cv2.line(img, tuple(px(np.array([0.0, y]))), tuple(px(np.array([w, y]))), (150, 180, 205), 1)
    for corner, square in zip(TableCorner, layout.marker_keepouts(), strict=True):
        cv2.rectangle(img, tuple(px(np.array(square[0]))), tuple(px(np.array(square[2]))), (255, 255, 255), -1)
        c = px(np.array([np.mean([p[0] for p in square]), np.mean([p[1] for p in square])]))
        half = round((layout.keepout_mm / 2 - 10.0) * s)
        cv2.rectangle(img, (c[0] - half, c[1] - half), (c[0] + half, c[1] + half), (30, 30, 30), -1)
        _label(img, str(int(corner)), (int(c[0]), int(c[1])), 0.5 * s, (255, 255, 255))
    ordered = sorted(layout.zones, key=layout.depth)
    for zone in ordered:
        colour = KIND_COLOURS[zone.kind]
        poly = px(np.asarray(zone.polygon))
        fill = tuple(int(0.45 * c + 0.55 * 245) for c in colour)
        cv2.fillPoly(img, [poly], fill, cv2.LINE_AA)
        cv2.polylines(img, [poly], True, colour, max(1, round(2 * s)), cv2.LINE_AA)
    for zone in ordered:
        c = px(np.asarray(zone.center))
        _label(img, zone.id, (int(c[0]), int(c[1])), 0.36 * s, KIND_COLOURS[zone.kind])
    for seat in layout.seats:
        at = {
            "bottom": (seat.at * w, h + margin_mm * 0.5),
            "top": (seat.at * w, -margin_mm * 0.5),
            "left": (-margin_mm * 0.5, seat.at * h),
            "right": (w + margin_mm * 0.5, seat.at * h),
        }[str(seat.edge)]
        seat_px = px(np.asarray(at))
        _label(img, f"P{seat.player}", (int(seat_px[0]), int(seat_px[1])), 0.5 * s, (255, 255, 255))
    bar = px(np.array([w - 100.0, h + margin_mm * 0.85]))
    cv2.line(img, (bar[0], bar[1]), (bar[0] + round(100 * s), bar[1]), (0, 0, 0), 2)
    cv2.putText(img, "100 mm", (bar[0], bar[1] - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4 * s, (0, 0, 0), 1, cv2.LINE_AA)
    title = f"{layout.game}, {layout.players} players, table {w:g}x{h:g} mm (marker centres)"
    cv2.putText(img, title, (6, title_px - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.5 * max(s, 1.0), (0, 0, 0), 1, cv2.LINE_AA)
    return img
