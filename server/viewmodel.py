"""The view model: what each audience is shown, built in this one place from the engine's view.

Every page (overlay, console, spectator) renders the JSON built here and nothing else, so hidden
information is removed once: zones come from `ruleset.view(state, audience, player)`, which
puts `null` where the viewer may not know a card, and the per-player panels, pile tops and
counts are all derived from that redacted view, never from the raw state. Journal entries
become wire events here too; evidence (what the camera saw, candidate scores) is for the
operator only, and a ruleset that knows which move fields are secret can provide
`view_move(move, audience, player)` to strip them for other viewers.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine import Audience, Catalog, GameWarning
from server.journal import Entry, EntryKind
from server.session import Snapshot

RECENT = 20
"""How many recent moves and warnings the view model carries."""

PLAYER_ZONE_PREFIXES: tuple[str, ...] = (
    "player", "reserve", "hand", "hotbar", "health", "hunger", "battle", "structure",
)
"""Zone id prefixes `<prefix>-N` that belong to player N (GAMES.md layouts); a ruleset may
declare its own as `player_zone_prefixes`."""

_VIEW_KEYS = {"game", "players", "current", "actions", "allowed", "turn", "scores", "target",
              "winner", "over", "zones"}


def build_view(
    snap: Snapshot, audience: Audience, player: int | None = None, *, delay_s: float = 0.0
) -> dict[str, Any]:
    """The view model of `snap` for one audience (see the server contract for its fields)."""
    ruleset = snap.ruleset
    raw = ruleset.view(snap.state, audience, player)
    zones: dict[str, list[str | None]] = {z: list(cards) for z, cards in raw.get("zones", {}).items()}
    scores = list(ruleset.scores(snap.state))
    prefixes = tuple(getattr(ruleset, "player_zone_prefixes", PLAYER_ZONE_PREFIXES))
    players = []
    for n in range(1, snap.players + 1):
        own = {
            z: cards for z, cards in zones.items()
            if z.rsplit("-", 1)[0] in prefixes and z.rsplit("-", 1)[-1] == str(n)
        }
        players.append({
            "n": n,
            "name": snap.names[n - 1],
            "score": scores[n - 1] if n - 1 < len(scores) else 0,
            "zones": own,
        })
    winner = ruleset.winner(snap.state)
    over = bool(ruleset.is_over(snap.state))
    current, actions, allowed = raw.get("current"), raw.get("actions"), raw.get("allowed")
    active = getattr(ruleset, "active_player", None)
    if active is not None and not over:
        # The engine passes the turn lazily (on the next player's first action); viewers want
        # to see whose turn it is as soon as the last action is spent.
        nxt, left = active(snap.state)
        if nxt != current:
            current, actions, allowed = nxt, 0, left
    return {
        "seq": snap.seq,
        "game": snap.game,
        "game_name": ruleset.name,
        "game_no": snap.game_no,
        "players": players,
        "target": raw.get("target"),
        "current": current,
        "actions": actions,
        "allowed": allowed,
        "actions_left": max(0, allowed - actions)
        if isinstance(allowed, int) and isinstance(actions, int) else None,
        "turn": raw.get("turn"),
        "zones": zones,
        "tops": {z: (cards[0] if cards else None) for z, cards in zones.items()},
        "counts": {z: len(cards) for z, cards in zones.items()},
        "warnings": [warning_dict(seq, w) for seq, w in snap.warnings[-RECENT:]],
        "moves": [
            move_dict(m.seq, m.move, snap, audience, player, source=m.source, replaced=m.replaced)
            for m in snap.moves[-RECENT:]
        ],
        "move_count": len(snap.moves),
        "winner": winner,
        "winner_name": snap.names[winner - 1] if winner and 0 < winner <= snap.players else None,
        "over": over,
        "status": status_dict(snap, audience),
        "audience": audience.value,
        "player": player if audience is Audience.PLAYER else None,
        "delay_s": delay_s if audience is Audience.PUBLIC else 0.0,
        "details": {k: v for k, v in raw.items() if k not in _VIEW_KEYS},
    }


def warning_dict(seq: int, w: GameWarning | Mapping[str, Any]) -> dict[str, Any]:
    d = w.to_dict() if isinstance(w, GameWarning) else dict(w)
    return {
        "seq": seq,
        "code": d.get("code"),
        "message": d.get("message"),
        "rule": d.get("rule"),
        "players": list(d.get("players") or ()),
        "move_index": d.get("move_index"),
    }


def status_dict(snap: Snapshot, audience: Audience) -> dict[str, Any]:
    s = snap.status
    operator = audience is Audience.OPERATOR
    return {
        "feed": s.feed.value,
        "feed_name": s.feed_name,
        "camera": s.camera.value,
        "fps": s.fps,
        "stage_ms": dict(s.stage_ms) if operator else {},
        # Uncertain reads carry candidate identities: only where they were read is public.
        "pending": [dict(p) for p in s.pending] if operator
        else [{"zone": p.get("zone")} for p in s.pending],
        "message": s.message,
    }


def visible_move(
    snap: Snapshot, move: Mapping[str, Any], audience: Audience, player: int | None
) -> dict[str, Any]:
    hook = getattr(snap.ruleset, "view_move", None)
    if hook is not None and audience is not Audience.OPERATOR:
        return dict(hook(move, audience, player))
    return dict(move)


def move_dict(
    seq: int,
    move: Mapping[str, Any],
    snap: Snapshot,
    audience: Audience,
    player: int | None,
    *,
    source: str,
    replaced: bool = False,
) -> dict[str, Any]:
    shown = visible_move(snap, move, audience, player)
    return {
        "seq": seq,
        "player": shown.get("player"),
        "move": shown,
        "text": move_text(shown, snap.names, snap.ruleset.catalog),
        "source": source,
        "replaced": replaced,
    }


def events(
    entries: Iterable[Entry], snap: Snapshot, audience: Audience, player: int | None = None
) -> list[dict[str, Any]]:
    """Wire `event` messages for journal entries: a move, then one per warning it raised;
    an undo or a replace. Evidence and frame numbers go to the operator only."""
    out: list[dict[str, Any]] = []
    operator = audience is Audience.OPERATOR
    for e in entries:
        extra: dict[str, Any] = {"source": e.source, "time": e.time}
        if operator:
            extra |= {"evidence": dict(e.evidence), "frame": e.frame}
        if e.kind is EntryKind.MOVE and e.move is not None:
            shown = visible_move(snap, e.move, audience, player)
            out.append(_event(e.seq, {
                "kind": "move", "player": shown.get("player"), "move": shown,
                "text": move_text(shown, snap.names, snap.ruleset.catalog), **extra,
            }))
            out.extend(
                _event(e.seq, {"kind": "warning", **warning_dict(e.seq, w)}) for w in e.warnings
            )
        elif e.kind is EntryKind.UNDO:
            out.append(_event(e.seq, {"kind": "undo", "target": e.target, **extra}))
        elif e.kind is EntryKind.REPLACE and e.move is not None:
            shown = visible_move(snap, e.move, audience, player)
            out.append(_event(e.seq, {
                "kind": "replace", "target": e.target, "move": shown,
                "text": move_text(shown, snap.names, snap.ruleset.catalog), **extra,
            }))
    return out


def status_event(snap: Snapshot, audience: Audience, **fields: Any) -> dict[str, Any]:
    return _event(snap.seq, {"kind": "status", **status_dict(snap, audience), **fields})


def _event(seq: int, event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "event", "seq": seq, "event": event}


def state_message(view: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "state", "seq": view["seq"], "view": view}


# -- plain words --------------------------------------------------------------------------------


def _card(catalog: Catalog, card: object) -> str:
    if isinstance(card, str) and card in catalog.cards:
        return catalog.cards[card].name
    return "a face-down card" if card is None else str(card)


def _cards(catalog: Catalog, cards: object) -> str:
    if isinstance(cards, Sequence) and not isinstance(cards, str):
        return ", ".join(_card(catalog, c) for c in cards) or "nothing"
    return _card(catalog, cards)


def _who(names: Sequence[str], n: object) -> str:
    if isinstance(n, int) and 0 < n <= len(names):
        return names[n - 1]
    return f"player {n}"


def move_text(move: Mapping[str, Any], names: Sequence[str], catalog: Catalog) -> str:
    """One English sentence for a move (the pages translate the rest of the interface)."""
    name = move.get("move")
    who = _who(names, move.get("player"))
    card = move.get("card")
    if name == "mine":
        taken = f" ({_card(catalog, card)})" if card else ""
        return f"{who} mines resource pile {move.get('pile')}{taken}"
    if name == "craft":
        axes = f" and {_cards(catalog, move['axes'])}" if move.get("axes") else ""
        return (f"{who} crafts {_card(catalog, card)} from {move.get('from')}, paying "
                f"{_cards(catalog, move.get('pay', ()))}{axes}")
    if name == "reserve":
        return f"{who} reserves the top of craft pile {move.get('pile')}"
    if name == "tnt-keep":
        return f"{who} keeps {_cards(catalog, move.get('cards', ()))} from the TNT blast"
    if name == "creeper-discard":
        if move.get("sword"):
            return f"{who} stops the creeper with {_card(catalog, move['sword'])}"
        return f"{who} discards {_card(catalog, card)} to the creeper"
    if name == "use-tool":
        target = f" on {_who(names, move['target'])}" if move.get("target") else ""
        return f"{who} uses {_card(catalog, card)}{target}"
    if name == "end-turn":
        return f"{who} ends the turn"
    if name == "table-change":
        return f"{move.get('zone')} set by hand to {_cards(catalog, move.get('cards', ()))}"
    rest = ", ".join(f"{k} {v}" for k, v in move.items() if k not in ("player", "move"))
    return f"{who}: {name}" + (f" ({rest})" if rest else "")


# -- game and catalog descriptions ----------------------------------------------------------------


def game_info(snap: Snapshot) -> dict[str, Any]:
    """`GET /api/game`: the game, its players and names, its options with their specs."""
    ruleset = snap.ruleset
    return {
        "game": snap.game,
        "game_name": ruleset.name,
        "game_no": snap.game_no,
        "players": snap.players,
        "min_players": ruleset.min_players,
        "max_players": ruleset.max_players,
        "names": list(snap.names),
        "seed": snap.seed,
        "journal": snap.journal,
        "options": [
            {
                "name": o.name,
                "value": snap.options.get(o.name, o.default),
                "default": o.default,
                "choices": list(o.choices),
                "help": o.help,
            }
            for o in ruleset.options
        ],
        "moves": move_specs(ruleset),
    }


def move_specs(ruleset: Any) -> list[dict[str, Any]]:
    """The game's move types and their fields, for the console's insert-move form."""
    out = []
    for cls in getattr(ruleset, "move_types", ()):
        hints = typing.get_type_hints(cls)
        fields = []
        for f in dataclasses.fields(cls):
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            fields.append({
                "name": f.metadata.get("key", f.name),
                "type": _type_name(hints.get(f.name)),
                "required": required,
            })
        out.append({"name": cls.NAME, "doc": (cls.__doc__ or "").strip(), "fields": fields})
    return out


def _type_name(hint: Any) -> str:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        inner = [_type_name(a) for a in args if a is not type(None)]
        return " | ".join(inner) + (" | null" if type(None) in args else "")
    if origin is tuple:
        if args and typing.get_origin(args[0]) is tuple:
            return "map"
        return f"list[{_type_name(args[0])}]" if args else "list"
    return {int: "int", str: "str", bool: "bool"}.get(hint, str(hint))


def catalog_info(catalog: Catalog) -> dict[str, Any]:
    """`GET /api/catalog/{game}`: every card with its name, kind, attributes and faces."""
    return {
        "game": catalog.game,
        "name": catalog.name,
        "publisher": catalog.publisher,
        "card_size_mm": list(catalog.card_size_mm),
        "total": catalog.total,
        "placeholder": catalog.placeholder,
        "cards": {
            c.id: {
                "id": c.id, "name": c.name, "kind": c.kind, "count": c.count,
                "front": c.front, "back": c.back, "attrs": _plain(c.attrs),
            }
            for c in catalog.cards.values()
        },
        "faces": {
            f.id: {"id": f.id, "name": f.name, "side": str(f.side), "attrs": _plain(f.attrs)}
            for f in catalog.faces.values()
        },
    }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
