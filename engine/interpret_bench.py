"""Whole games read back from camera-like snapshots: how well the interpreter follows a table.

A simulated game (`engine.simulate`) is played on a virtual table. After each free move and the
forced answers that follow it the table goes quiet (unless the next move follows without a
pause, `merge`), and the quiet table is read one or more times (`rereads`), each read rendered
as the camera would give it: every card with ranked face candidates, with a `wrong_top` chance
that the first candidate is a wrong face and the right one second, and a `missing` chance that
a card is left out of one read; with `hands`, a read also names the zones a hand reached. The
reader starts from the opening deal as the camera sees it (pile tops known, the cards under
them not) and feeds every read to an `Interpreter`; the moves
it writes are compared with the truth in order (longest common subsequence of moves without
their `reveal`, card lists as sets), and the final scores with the truth's. Nothing here is
used in play: it measures (`cardtrack bench interpret`) and tests.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.core import Ruleset
from engine.errors import EngineError
from engine.interpret import InterpretConfig, Interpreter, touched_zones
from engine.interpreters import interpreter_for
from engine.simulate import SimulatedGame, simulate_game
from engine.snapshot import Candidate, SeenCard, TableSnapshot, ZoneKind

FPS = 10.0  # frames per second of the virtual camera (pending times are counted in frames)
RECHECK_FRAMES = 3  # frames between reads of a quiet table while a change is pending
QUIET_READS = (1, 2, 3, 4, 6, 8)  # reads a quiet moment allows at most (the next move comes)


class BenchConfigError(EngineError, ValueError):
    """A reading-bench parameter out of its meaningful range."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CameraNoise:
    """How imperfectly the virtual camera reads the table.

    - `wrong_top`: chance that a card's first candidate is a wrong face (the right face second).
    - `missing`: chance that a card is missing from one read (a glare, a finder miss).
    - `rereads`: a quiet table is read 1..`rereads` times, and again while a change is
      pending (as the pipeline does) until the next move comes.
    - `merge`: chance that the next move follows without a quiet moment in between, so that
      one read shows both.
    - `counts`: whether reads carry pile heights (the live pipeline gives none).
    - `hands`: whether reads say which zones a hand reached since the last read
      (`TableSnapshot.reached`, as the live pipeline's do): every zone the moves changed,
      a pile whose height changed under the same top card included.
    """

    wrong_top: float = 0.0
    missing: float = 0.0
    rereads: int = 2
    merge: float = 0.0
    counts: bool = False
    hands: bool = False

    def __post_init__(self) -> None:
        for name in ("wrong_top", "missing", "merge"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise BenchConfigError(f"camera noise: '{name}' must lie in [0, 1], got {value}")
        if self.rereads < 1:
            raise BenchConfigError("camera noise: 'rereads' must be at least 1")


def render_snapshot(
    ruleset: Ruleset[Any, Any],
    state: Any,
    *,
    frame: int,
    rng: random.Random | None = None,
    noise: CameraNoise | None = None,
    settled: frozenset[str] | None = None,
    game: Any = None,
    reached: frozenset[str] | None = None,
) -> TableSnapshot:
    """The snapshot a camera would give of `state` (every zone settled unless `settled`): the
    game interpreter's `table_look` when it has one (the appearance with the cards it does not
    compare as they lie), else its appearance; `reached`: the zones a hand reached (None: hands
    not watched)."""
    noise = noise or CameraNoise()
    look = game if game is not None else interpreter_for(ruleset)
    faces = _faces(ruleset)
    rng = rng or random.Random(frame)
    zones: dict[str, tuple[SeenCard, ...]] = {}
    counts: dict[str, int] = {}
    for zone, expected in getattr(look, "table_look", look.appearance)(state).items():
        cards: list[SeenCard] = []
        shown = expected.faces[:1] if expected.kind is ZoneKind.PILE else expected.faces
        for face in shown:
            if face is None:
                # A face the state does not compare; the camera sees some card there.
                face = _faces(ruleset)[0] if expected.kind is ZoneKind.SPREAD else _back(ruleset)
            if noise.missing and rng.random() < noise.missing:
                continue
            others = rng.sample(faces, 3)
            wrong = [f for f in others if f != face][:2]
            if noise.wrong_top and rng.random() < noise.wrong_top:
                cands = (
                    Candidate(face=wrong[0], score=0.55),
                    Candidate(face=face, score=0.35),
                    Candidate(face=wrong[1], score=0.05),
                )
            else:
                cands = (
                    Candidate(face=face, score=0.9),
                    Candidate(face=wrong[0], score=0.05),
                    Candidate(face=wrong[1], score=0.02),
                )
            cards.append(SeenCard(candidates=cands))
        zones[zone] = tuple(cards)
        if noise.counts and expected.kind is ZoneKind.PILE:
            counts[zone] = expected.count
    return TableSnapshot(
        frame=frame,
        time=frame / FPS,
        zones=zones,
        counts=counts,
        settled=frozenset(zones) if settled is None else settled,
        reached=reached,
    )


_FACES: dict[str, list[str]] = {}


def _faces(ruleset: Ruleset[Any, Any]) -> list[str]:
    if ruleset.id not in _FACES:
        _FACES[ruleset.id] = sorted(ruleset.catalog.faces)
    return _FACES[ruleset.id]


def _back(ruleset: Ruleset[Any, Any]) -> str:
    faces = _faces(ruleset)
    backs = [f for f in faces if f.endswith("-back")]
    return backs[0] if backs else faces[0]


def camera_setup(ruleset: Ruleset[Any, Any], state: Any) -> dict[str, list[str | None]]:
    """The opening table as the camera sees it: spreads whole, each pile's top card only."""
    out: dict[str, list[str | None]] = {}
    for zone, cards in ruleset.zones(state).items():
        if not cards or zone == "tnt":
            continue
        if zone.startswith(("resource-pile-", "craft-pile-")):
            out[zone] = [cards[0], *([None] * (len(cards) - 1))]
        else:
            out[zone] = list(cards)
    return out


def move_key(ruleset: Ruleset[Any, Any], move: Any) -> str:
    """A move in comparable form: `reveal` left out, card lists sorted, empty fields dropped."""
    d = ruleset.move_to_dict(move)
    d.pop("reveal", None)
    clean = {
        k: sorted(v) if isinstance(v, list | tuple) else v
        for k, v in d.items()
        if v not in (None, (), [])
    }
    return repr(sorted(clean.items()))


def canonical_order(ruleset: Ruleset[Any, Any], moves: Sequence[Any]) -> list[str]:
    """Move keys in order, each run of simultaneous answers (moves of the same name that the
    rules force, e.g. every player's creeper discard) sorted: the table does not show who
    answered first."""
    out: list[str] = []
    run: list[str] = []
    run_name = ""
    for move in moves:
        name = str(getattr(type(move), "NAME", ""))
        key = move_key(ruleset, move)
        if name in SIMULTANEOUS and name == run_name:
            run.append(key)
            continue
        out.extend(sorted(run))
        run, run_name = [key], name
    out.extend(sorted(run))
    return out


SIMULTANEOUS = frozenset({"creeper-discard"})


def matched_in_order(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two key lists."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def free_chains(ruleset: Ruleset[Any, Any], game: Any, initial: Any, moves: Sequence[Any]) -> Iterator[tuple[list[Any], Any]]:
    """Each free move with the forced answers that follow it, and the true state after them."""
    state, chain = initial, []
    for move in moves:
        state = ruleset.apply(state, move).state
        chain.append(move)
        if not game.is_forced(state):
            yield chain, state
            chain = []
    if chain:
        yield chain, state


@dataclass(frozen=True, slots=True, kw_only=True)
class GameReading:
    """One game read back: moves (true, written, matched), scores, and time per read."""

    seed: int
    players: int
    truth: int
    written: int
    matched: int
    desyncs: int
    scores_truth: tuple[int, ...]
    scores_read: tuple[int, ...]
    ms: tuple[float, ...]

    @property
    def scores_match(self) -> bool:
        return self.scores_truth == self.scores_read


def read_game(
    ruleset: Ruleset[Any, Any],
    simulated: SimulatedGame,
    *,
    noise: CameraNoise,
    config: InterpretConfig | None = None,
    rng_seed: int | None = None,
) -> GameReading:
    """Play `simulated` on the virtual table and read it back from snapshots, with `config`
    (None: the game's own, `InterpretConfig.for_game`, as the pipeline reads it)."""
    game = interpreter_for(ruleset)
    interp: Interpreter[Any, Any] = Interpreter(ruleset, config or InterpretConfig.for_game(ruleset.id), game)
    truth_initial = ruleset.initial_state(
        players=simulated.players, options=simulated.options, seed=simulated.seed
    )
    belief = ruleset.initial_state(
        players=simulated.players,
        options=simulated.options,
        seed=simulated.seed + 7919,
        setup=camera_setup(ruleset, truth_initial),
    )
    rng = random.Random(f"read:{simulated.seed if rng_seed is None else rng_seed}")
    written: list[Any] = []
    ms: list[float] = []
    desyncs = 0
    frame = 0
    chains = list(free_chains(ruleset, game, truth_initial, simulated.moves))
    shown = truth_initial  # the table as last read
    for k, (_, after) in enumerate(chains):
        last = k == len(chains) - 1
        if not last and rng.random() < noise.merge:
            continue  # the next move follows before the table goes quiet
        frame += 15
        # The table stays quiet for a few reads; while a change is pending the pipeline reads
        # it again every `RECHECK_FRAMES` (the last quiet moment lasts until nothing pends).
        reads = rng.randint(1, noise.rereads)
        quiet = 40 if last else rng.choice(QUIET_READS)
        for n in range(quiet):
            reached = (touched_zones(game, shown, after) if n == 0 else frozenset()) if noise.hands else None
            snap = render_snapshot(ruleset, after, frame=frame, rng=rng, noise=noise, game=game,
                                   reached=reached)
            start = time.perf_counter()
            result = interp.observe(belief, snap)
            ms.append((time.perf_counter() - start) * 1000.0)
            if result.amends:  # a move read in two parts, set right: the parts are withdrawn
                del written[len(written) - result.amends:]
            written.extend(result.moves)
            desyncs += int(result.desync)
            if not result.pending:
                belief = result.state
            frame += RECHECK_FRAMES
            if n + 1 >= reads and not result.pending:
                break
        shown = after
    truth_keys = canonical_order(ruleset, simulated.moves)
    read_keys = canonical_order(ruleset, written)
    return GameReading(
        seed=simulated.seed,
        players=simulated.players,
        truth=len(truth_keys),
        written=len(read_keys),
        matched=matched_in_order(read_keys, truth_keys),
        desyncs=desyncs,
        scores_truth=tuple(simulated.scores),
        scores_read=tuple(ruleset.scores(belief)),
        ms=tuple(ms),
    )


def summarize_readings(readings: Sequence[GameReading]) -> dict[str, Any]:
    """Precision, recall, score matches and milliseconds per read over `readings`."""
    if not readings:
        raise BenchConfigError("no games were read")
    truth = sum(r.truth for r in readings)
    written = sum(r.written for r in readings)
    matched = sum(r.matched for r in readings)
    ms = sorted(m for r in readings for m in r.ms)
    return {
        "games": len(readings),
        "moves": {
            "truth": truth,
            "written": written,
            "matched": matched,
            "precision": round(matched / written, 4) if written else 1.0,
            "recall": round(matched / truth, 4) if truth else 1.0,
        },
        "desyncs": sum(r.desyncs for r in readings),
        "final_scores_match": sum(r.scores_match for r in readings),
        "mismatched_seeds": [r.seed for r in readings if not r.scores_match],
        "ms_per_snapshot": {
            "p50": round(statistics.median(ms), 2) if ms else None,
            "p95": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 2) if ms else None,
            "max": round(ms[-1], 2) if ms else None,
            "snapshots": len(ms),
        },
    }


def read_games(
    ruleset: Ruleset[Any, Any],
    *,
    players: int,
    games: int,
    seed: int,
    noise: CameraNoise,
    config: InterpretConfig | None = None,
    options: Mapping[str, Any] | None = None,
) -> Iterator[GameReading]:
    """Simulate and read back `games` games from seed `seed` on."""
    if games < 1:
        raise BenchConfigError(f"games must be at least 1, got {games}")
    for i in range(games):
        simulated = simulate_game(ruleset, players=players, seed=seed + i, options=options)
        yield read_game(ruleset, simulated, noise=noise, config=config)
