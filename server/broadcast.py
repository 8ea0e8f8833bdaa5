"""Fan-out of session changes to websocket viewers: one bounded queue per subscriber, latest wins.

The session calls `Broadcaster.on_change` from whatever thread made the change (the feed thread,
a request handler); the change is handed to the event loop and dispatched there without ever
awaiting a client. Each subscriber has a single slot for the newest `state` message (a slow
client skips intermediate states) and a bounded queue of `event` messages; when the events
overflow they are dropped, and the fresh `state` already in the slot brings the client up to
date before events resume. A writer task per subscriber does the sending, so one slow or stuck
client delays nobody else. The public audience receives everything `delay_s` late: changes are
kept in a short history and delivered on a timer, and a public viewer connecting mid-delay
starts from the state as it was `delay_s` ago.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import Audience
from server import viewmodel
from server.session import Change, ChangeKind, Session, Snapshot

log = logging.getLogger(__name__)

EVENT_QUEUE = 256
"""Events a subscriber may have waiting before they are dropped in favour of a fresh state."""

Send = Callable[[str], Awaitable[None]]
"""Sends one message, already encoded as JSON text (encoded once per audience, not per viewer)."""
Key = tuple[Audience, int | None]


@dataclass(eq=False, slots=True, kw_only=True)
class Subscriber:
    """One connected viewer and what is waiting to be sent to it."""

    id: int
    audience: Audience
    player: int | None
    send: Send
    max_events: int = EVENT_QUEUE
    state: str | None = None
    events: deque[str] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    seen_version: int = 0
    sent_states: int = 0
    sent_events: int = 0
    skipped_states: int = 0
    overflows: int = 0

    @property
    def key(self) -> Key:
        return (self.audience, self.player)

    @property
    def depth(self) -> int:
        return len(self.events) + (self.state is not None)

    def offer(self, state: str, events: list[str], version: int) -> None:
        """Queue one change without waiting (called on the event loop only)."""
        if version <= self.seen_version:
            return  # already covered by what this viewer was sent on connecting
        self.seen_version = version
        if self.state is not None:
            self.skipped_states += 1
        self.state = state
        self.events.extend(events)
        if len(self.events) > self.max_events:
            self.events.clear()
            self.overflows += 1
        self.wake.set()


def encode(message: Mapping[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


class Broadcaster:
    """Owns the subscribers; see the module docstring. Create it on the running event loop."""

    def __init__(
        self,
        session: Session,
        *,
        delay_s: float = 0.0,
        loop: asyncio.AbstractEventLoop | None = None,
        max_events: int = EVENT_QUEUE,
    ) -> None:
        self.session = session
        self.delay_s = float(delay_s)
        self.max_events = max_events
        self._loop = loop or asyncio.get_running_loop()
        self._subs: dict[int, Subscriber] = {}
        self._ids = itertools.count(1)
        self._base = session.snapshot
        self._history: deque[Change] = deque()
        self._timers: set[asyncio.TimerHandle] = set()
        self._unsubscribe = session.subscribe(self.on_change)
        self.changes = 0

    def close(self) -> None:
        self._unsubscribe()
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    # -- from the session (any thread) ------------------------------------------------------------

    def on_change(self, change: Change) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing: nobody is listening
            self._loop.call_soon_threadsafe(self._dispatch, change)

    # -- on the event loop ------------------------------------------------------------------------

    def _dispatch(self, change: Change) -> None:
        self.changes += 1
        self._remember(change)
        rendered: dict[Key, tuple[str, list[str]]] = {}
        for sub in list(self._subs.values()):
            if sub.audience is Audience.PUBLIC and self.delay_s > 0:
                self._later(change.snapshot.at + self.delay_s, sub, change)
            else:
                self._deliver(sub, change, rendered)

    def _later(self, when: float, sub: Subscriber, change: Change) -> None:
        delay = max(0.0, when - time.monotonic())
        handle: asyncio.TimerHandle

        def fire() -> None:
            self._timers.discard(handle)
            if sub.id in self._subs:
                self._deliver(sub, change, {})

        handle = self._loop.call_later(delay, fire)
        self._timers.add(handle)

    def _deliver(
        self,
        sub: Subscriber,
        change: Change,
        rendered: dict[Key, tuple[str, list[str]]],
    ) -> None:
        if sub.key not in rendered:
            rendered[sub.key] = self._render(change, sub.audience, sub.player)
        state, events = rendered[sub.key]
        sub.offer(state, events, change.snapshot.version)

    def _render(
        self, change: Change, audience: Audience, player: int | None
    ) -> tuple[str, list[str]]:
        snap = change.snapshot
        view = viewmodel.build_view(snap, audience, player, delay_s=self.delay_s)
        events = viewmodel.events(change.entries, snap, audience, player)
        if change.kind is ChangeKind.STATUS:
            events.append(viewmodel.status_event(snap, audience))
        elif change.kind is ChangeKind.GAME:
            events.append(viewmodel.status_event(snap, audience, game_changed=True))
        return encode(viewmodel.state_message(view)), [encode(e) for e in events]

    def _remember(self, change: Change) -> None:
        self._history.append(change)
        horizon = time.monotonic() - self.delay_s - 1.0
        while len(self._history) > 1 and self._history[1].snapshot.at < horizon:
            self._base = self._history.popleft().snapshot

    def snapshot_for(self, audience: Audience) -> Snapshot:
        """The snapshot an audience may see now: the public's is `delay_s` old."""
        if audience is not Audience.PUBLIC or self.delay_s <= 0:
            return self.session.snapshot
        cutoff = time.monotonic() - self.delay_s
        snap = self._base
        for change in self._history:
            if change.snapshot.at > cutoff:
                break
            snap = change.snapshot
        return snap

    async def serve(
        self,
        send: Send,
        *,
        audience: Audience,
        player: int | None = None,
        since: int | None = None,
    ) -> None:
        """Run one subscriber until `send` fails or the task is cancelled: the current state,
        the journal entries newer than `since`, then every change as it happens."""
        sub = Subscriber(
            id=next(self._ids), audience=audience, player=player, send=send,
            max_events=self.max_events,
        )
        delayed = audience is Audience.PUBLIC and self.delay_s > 0
        if delayed:
            snap = self.snapshot_for(audience)
            entries = self.session.entries_since(since or 0)[1] if since is not None else []
            entries = [e for e in entries if e.seq <= snap.seq]
        else:
            snap, entries = self.session.entries_since(since or 0)
            if since is None:
                entries = []
        sub.seen_version = snap.version
        self._subs[sub.id] = sub
        try:
            if delayed:  # changes already under way to the public reach this viewer too
                for change in self._history:
                    if change.snapshot.version > snap.version:
                        self._later(change.snapshot.at + self.delay_s, sub, change)
            view = viewmodel.build_view(snap, audience, player, delay_s=self.delay_s)
            await send(encode(viewmodel.state_message(view)))
            sub.sent_states += 1
            for message in viewmodel.events(entries, snap, audience, player):
                await send(encode(message))
                sub.sent_events += 1
            await self._write(sub)
        finally:
            self._subs.pop(sub.id, None)

    async def _write(self, sub: Subscriber) -> None:
        while True:
            await sub.wake.wait()
            sub.wake.clear()
            while sub.events or sub.state is not None:
                if sub.events:
                    await sub.send(sub.events.popleft())
                    sub.sent_events += 1
                    continue
                state, sub.state = sub.state, None
                if state is not None:
                    await sub.send(state)
                    sub.sent_states += 1

    # -- figures ----------------------------------------------------------------------------------

    def metrics(self) -> dict[str, Any]:
        subs = list(self._subs.values())
        depths = [s.depth for s in subs]
        return {
            "subscribers": len(subs),
            "by_audience": {
                a.value: sum(1 for s in subs if s.audience is a) for a in Audience
            },
            "queue_depth_max": max(depths, default=0),
            "queue_depth_total": sum(depths),
            "states_sent": sum(s.sent_states for s in subs),
            "events_sent": sum(s.sent_events for s in subs),
            "states_skipped": sum(s.skipped_states for s in subs),
            "event_overflows": sum(s.overflows for s in subs),
            "changes": self.changes,
            "delay_s": self.delay_s,
        }
