"""Interpretation: which legal move sequence best explains a settled table snapshot.

Vision reports candidates; the rules decide. From the current belief (a game state) the
`Interpreter` runs a short beam search over sequences of moves proposed by the game's
interpreter module (its legal moves, plus moves built from the observed difference: the real
payment of a craft, the cards kept from a TNT, the card that left each area after a creeper,
the faces seen turning up). Each resulting state is rendered as an expected appearance and
scored against the snapshot in the settled zones only: the log of each implied face's
candidate score relative to the best candidate, a penalty per zone that does not match, a small
penalty per move (the simplest explanation wins) and a penalty per rule warning (legal beats
illegal). A change that nothing explains is held as pending for a while, then written as
physical table changes that raise `desync`, for the operator to correct.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from engine.core import Ruleset
from engine.errors import EngineError
from engine.snapshot import ExpectedZone, SeenCard, TableSnapshot, ZoneKind

S = TypeVar("S")
M = TypeVar("M")
S_in = TypeVar("S_in", contravariant=True)
M_out = TypeVar("M_out", covariant=True)


class InterpretConfigError(EngineError):
    """An interpreter configuration value out of its meaningful range."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InterpretConfig:
    """Tuning of the search and of the pending / desync policy.

    - `max_depth`: free choices (actions, tool uses, ending a turn) one explanation may hold.
      Higher finds longer turns between two snapshots, at a search cost that grows fast.
      Forced answers (creeper discards, TNT keeps) do not count; `max_moves` bounds them all.
    - `beam_width`: partial explanations kept per depth. Wider is more robust, slower.
    - `move_penalty`: score cost of each move; the simplest explanation wins ties.
    - `warning_penalty`: score cost of each rule warning; legal explanations beat illegal ones
      unless the evidence for the illegal one is much stronger.
    - `zone_penalty`: cost of a zone whose expected cards are not all among the candidates.
    - `card_penalty`: cost of each expected card not seen or seen card not expected.
    - `count_penalty`: cost per card of difference between a zone's estimated count and the
      state's. Counts are estimates from stack height: keep it small.
    - `noise_rank`: a snapshot in which every expected face of the current belief is within the
      first `noise_rank` candidates is read as "nothing happened". 2 absorbs a single
      mis-ranked face; 1 trusts the identifier's first choice.
    - `pending_frames` / `pending_seconds`: how long an unexplained change is held before it is
      written as a desync (whichever is reached first). Longer lets a half-finished move
      complete and vision noise settle; shorter keeps the overlay in step with the table.
    - `alternatives`: how many runner-up explanations to report to the operator console.
    """

    max_depth: int = 4
    max_moves: int = 14
    beam_width: int = 24
    move_penalty: float = 0.25
    warning_penalty: float = 3.0
    zone_penalty: float = 4.0
    card_penalty: float = 4.0
    count_penalty: float = 0.5
    noise_rank: int = 2
    pending_frames: int = 30
    pending_seconds: float = 2.0
    alternatives: int = 3

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_moves", "beam_width", "noise_rank", "pending_frames"):
            if getattr(self, name) < 1:
                raise InterpretConfigError(f"interpret config: '{name}' must be at least 1")
        for name in ("move_penalty", "warning_penalty", "zone_penalty", "card_penalty",
                     "count_penalty", "pending_seconds"):
            if getattr(self, name) < 0:
                raise InterpretConfigError(f"interpret config: '{name}' must not be negative")
        if self.alternatives < 0:
            raise InterpretConfigError("interpret config: 'alternatives' must not be negative")


# --------------------------------------------------------------------------------------------
# Comparing an expected zone with what the camera saw


@dataclass(frozen=True, slots=True, kw_only=True)
class SpreadMatch:
    """Expected faces paired with seen cards: index pairs and what is left on each side."""

    pairs: tuple[tuple[int, int], ...]
    missing: tuple[int, ...]  # expected cards no seen card fits
    extra: tuple[int, ...]  # seen cards no expected card fits


def _log_ratio(card: SeenCard, face: str) -> float | None:
    s = card.score_of(face)
    return None if s is None else math.log(s / card.best.score)


def match_spread(faces: Sequence[str | None], seen: Sequence[SeenCard]) -> SpreadMatch:
    """Pair expected faces with seen cards, strongest evidence first (greedy).

    A known face pairs only with a card listing it among its candidates; an unknown face
    (`None`) pairs with any card left over.
    """
    options: list[tuple[float, int, int]] = []
    for i, face in enumerate(faces):
        if face is None:
            continue
        for j, card in enumerate(seen):
            r = _log_ratio(card, face)
            if r is not None:
                options.append((r, i, j))
    options.sort(key=lambda t: (-t[0], t[1], t[2]))
    used_i: set[int] = set()
    used_j: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, i, j in options:
        if i in used_i or j in used_j:
            continue
        used_i.add(i)
        used_j.add(j)
        pairs.append((i, j))
    for i, face in enumerate(faces):
        if face is None:
            for j in range(len(seen)):
                if j not in used_j:
                    used_i.add(i)
                    used_j.add(j)
                    pairs.append((i, j))
                    break
    return SpreadMatch(
        pairs=tuple(sorted(pairs)),
        missing=tuple(i for i in range(len(faces)) if i not in used_i),
        extra=tuple(j for j in range(len(seen)) if j not in used_j),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ZoneFit:
    """How well one expected zone fits the snapshot."""

    score: float
    matches: bool  # every expected card is among the candidates, nothing missing or extra
    exact: bool  # matches with every face the first candidate
    within_noise: bool  # matches with every face within the first `noise_rank` candidates


def fit_zone(
    expected: ExpectedZone, seen: Sequence[SeenCard], count: int | None, config: InterpretConfig
) -> ZoneFit:
    """Score an expected zone against the seen cards (0 is a perfect fit)."""
    faces = expected.faces[:1] if expected.kind is ZoneKind.PILE else expected.faces
    shown = tuple(seen[:1]) if expected.kind is ZoneKind.PILE else tuple(seen)
    m = match_spread(faces, shown)
    score = 0.0
    within = True
    exact = True
    for i, j in m.pairs:
        face = faces[i]
        if face is None:
            continue
        r = _log_ratio(shown[j], face)
        assert r is not None
        score += r
        rank = shown[j].rank_of(face)
        if rank is None or rank >= config.noise_rank:
            within = False
        if rank != 0:
            exact = False
    unmatched = len(m.missing) + len(m.extra)
    matches = unmatched == 0
    if not matches:
        score -= config.zone_penalty + config.card_penalty * unmatched
        within = False
    if count is not None:
        diff = abs(count - expected.count)
        score -= config.count_penalty * diff
        if diff > 1:
            within = False
        if diff:
            exact = False
    return ZoneFit(score=score, matches=matches, exact=exact and matches, within_noise=within)


# --------------------------------------------------------------------------------------------
# What a game contributes


class GameInterpreter(Protocol[S_in, M_out]):
    """The per-game part: how a state looks, which moves may explain a difference."""

    def appearance(self, state: S_in) -> dict[str, ExpectedZone]:
        """Expected appearance of every zone of `state`."""
        ...

    def is_forced(self, state: S_in) -> bool:
        """Whether `state` waits for an answer the rules force (it costs no search depth)."""
        ...

    def proposals(
        self,
        state: S_in,
        snapshot: TableSnapshot,
        unexplained: frozenset[str],
        appearance: Mapping[str, ExpectedZone],
    ) -> Iterable[M_out]:
        """Moves worth trying next from `state`; `unexplained`: the settled zones that do not
        show exactly (first candidates, counts) what `state` expects."""
        ...

    def corrections(self, state: S_in, snapshot: TableSnapshot, zones: Iterable[str]) -> tuple[M_out, ...]:
        """Physical table changes that make `zones` of `state` look like the snapshot."""
        ...


# --------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation(Generic[S, M]):
    """One candidate explanation: the moves, the state they lead to and its score."""

    moves: tuple[M, ...]
    state: S
    score: float
    warnings: int
    explains: bool  # every settled zone matches
    unexplained: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class Interpretation(Generic[S, M]):
    """What `Interpreter.observe` decided for one snapshot.

    `moves` are to be applied (and journaled) in order; `state` is the belief after them.
    `pending` says a change is seen but not explained yet (nothing applied); `desync` says the
    moves end with physical table changes no legal move explained.
    """

    moves: tuple[M, ...]
    score: float
    state: S
    pending: bool = False
    desync: bool = False
    alternatives: tuple[Explanation[S, M], ...] = field(default=())
    frame: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pending:
    frame: int
    time: float


@dataclass(slots=True)
class _Node(Generic[S, M]):
    moves: tuple[M, ...]
    state: S
    warnings: int
    depth: int
    score: float
    explains: bool
    within_noise: bool
    unexplained: frozenset[str]
    differs: frozenset[str]
    appearance: dict[str, ExpectedZone]


class Interpreter(Generic[S, M]):
    """Turns settled snapshots into moves for one ruleset.

    It remembers one thing between calls: since when an unexplained change has been pending
    (frame and time of the snapshot that first showed it), so that it can turn it into a
    desync after `pending_frames` / `pending_seconds`. `reset()` forgets it (e.g. after an
    operator correction).
    """

    def __init__(
        self,
        ruleset: Ruleset[S, M],
        config: InterpretConfig | None = None,
        game: GameInterpreter[S, M] | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.config = config or InterpretConfig()
        if game is None:
            from engine.interpreters import interpreter_for

            game = interpreter_for(ruleset)
        self.game: GameInterpreter[S, M] = game
        self._pending: _Pending | None = None

    def reset(self) -> None:
        self._pending = None

    # -- scoring ------------------------------------------------------------------------------

    def _evaluate(
        self,
        state: S,
        moves: tuple[M, ...],
        warnings: int,
        depth: int,
        snapshot: TableSnapshot,
        cache: dict[tuple[str, ExpectedZone], ZoneFit],
    ) -> _Node[S, M]:
        cfg = self.config
        look = self.game.appearance(state)
        total = 0.0
        within = True
        unexplained: set[str] = set()
        differs: set[str] = set()
        for zone in snapshot.settled:
            expected = look.get(zone)
            if expected is None:
                if snapshot.cards(zone):
                    unexplained.add(zone)
                    differs.add(zone)
                    within = False
                    total -= cfg.zone_penalty + cfg.card_penalty * len(snapshot.cards(zone))
                continue
            key = (zone, expected)
            fit = cache.get(key)
            if fit is None:
                fit = fit_zone(expected, snapshot.cards(zone), snapshot.counts.get(zone), cfg)
                cache[key] = fit
            total += fit.score
            within = within and fit.within_noise
            if not fit.matches:
                unexplained.add(zone)
            if not fit.exact:
                differs.add(zone)
        total -= cfg.move_penalty * len(moves) + cfg.warning_penalty * warnings
        return _Node(
            moves=moves,
            state=state,
            warnings=warnings,
            depth=depth,
            score=total,
            explains=not unexplained,
            within_noise=within,
            unexplained=frozenset(unexplained),
            differs=frozenset(differs),
            appearance=look,
        )

    # -- search -------------------------------------------------------------------------------

    def explain(self, belief: S, snapshot: TableSnapshot) -> list[Explanation[S, M]]:
        """Every explanation the search kept, best first (the empty one included)."""
        return [_explanation(n) for n in self._search(belief, snapshot)]

    def _search(self, belief: S, snapshot: TableSnapshot) -> list[_Node[S, M]]:
        cfg = self.config
        cache: dict[tuple[str, ExpectedZone], ZoneFit] = {}
        root = self._evaluate(belief, (), 0, 0, snapshot, cache)
        if root.within_noise:
            return [root]
        best_of: dict[Any, _Node[S, M]] = {_key(belief): root}
        frontier = [root]
        for _ in range(cfg.max_moves):
            children: list[_Node[S, M]] = []
            for node in frontier:
                if node.explains:
                    continue
                forced = self.game.is_forced(node.state)
                if not forced and node.depth >= cfg.max_depth:
                    continue
                depth = node.depth + (0 if forced else 1)
                for move in self.game.proposals(
                    node.state, snapshot, node.differs, node.appearance
                ):
                    try:
                        step = self.ruleset.apply(node.state, move)
                    except EngineError:
                        continue  # a constructed move the rules cannot even read
                    child = self._evaluate(
                        step.state,
                        (*node.moves, move),
                        node.warnings + len(step.warnings),
                        depth,
                        snapshot,
                        cache,
                    )
                    key = _key(step.state)
                    old = best_of.get(key)
                    if old is not None and old.score >= child.score:
                        continue
                    best_of[key] = child
                    children.append(child)
            if not children:
                break
            children.sort(key=lambda n: -n.score)
            frontier = children[: cfg.beam_width]
        return sorted(best_of.values(), key=lambda n: (-n.score, len(n.moves)))

    # -- deciding -----------------------------------------------------------------------------

    def observe(self, belief: S, snapshot: TableSnapshot) -> Interpretation[S, M]:
        """Explain `snapshot` from `belief`: moves to apply, or pending, or a desync."""
        cfg = self.config
        nodes = self._search(belief, snapshot)
        root = next(n for n in nodes if not n.moves)
        best = nodes[0]
        alternatives = tuple(
            Explanation(
                moves=n.moves,
                state=n.state,
                score=n.score,
                warnings=n.warnings,
                explains=n.explains,
                unexplained=n.unexplained,
            )
            for n in nodes[1 : 1 + cfg.alternatives]
        )
        if root.within_noise:
            # Consistent with the belief at the identifier's second choice: vision noise.
            self._pending = None
            return Interpretation(
                moves=(), score=root.score, state=belief, alternatives=(), frame=snapshot.frame
            )
        if best.explains:
            self._pending = None
            return Interpretation(
                moves=best.moves,
                score=best.score,
                state=best.state,
                alternatives=alternatives,
                frame=snapshot.frame,
            )
        if self._pending is None:
            self._pending = _Pending(frame=snapshot.frame, time=snapshot.time)
        waited_frames = snapshot.frame - self._pending.frame
        waited_seconds = snapshot.time - self._pending.time
        if waited_frames < cfg.pending_frames and waited_seconds < cfg.pending_seconds:
            return Interpretation(
                moves=(),
                score=best.score,
                state=belief,
                pending=True,
                alternatives=_as_explanations((best,), alternatives, cfg.alternatives),
                frame=snapshot.frame,
            )
        # Held long enough: keep the best legal part, then make the belief match the table.
        self._pending = None
        fixes = self.game.corrections(best.state, snapshot, sorted(best.unexplained))
        state = best.state
        for move in fixes:
            state = self.ruleset.apply(state, move).state
        return Interpretation(
            moves=(*best.moves, *fixes),
            score=best.score,
            state=state,
            desync=True,
            alternatives=alternatives,
            frame=snapshot.frame,
        )


def _as_explanations(
    first: tuple[_Node[S, M], ...], rest: tuple[Explanation[S, M], ...], limit: int
) -> tuple[Explanation[S, M], ...]:
    return (*(_explanation(n) for n in first), *rest)[:limit]


def _explanation(node: _Node[S, M]) -> Explanation[S, M]:
    return Explanation(
        moves=node.moves,
        state=node.state,
        score=node.score,
        warnings=node.warnings,
        explains=node.explains,
        unexplained=node.unexplained,
    )


def _key(state: object) -> object:
    """States are frozen values: equal states reached by different orders are one."""
    try:
        hash(state)
    except TypeError:
        return id(state)
    return state
