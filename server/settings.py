"""How one server is set up: the game, its journal, the move feed, where it binds and who may write.

`ServerSettings` is a frozen value handed to `server.app.create_app`. It is checked on
construction: binding anywhere other than the loopback interface without an access token is
refused, because every writing endpoint (and the operator console, which sees face-down cards)
would then be open to the whole network.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from server.feeds import Feed

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
LANGUAGES = ("en", "fr", "fa", "pl", "nl")
LANGUAGE_PATTERN = re.compile(r"^[a-z]{2}$")


class SettingsError(ValueError):
    """Server settings that cannot work together; the message says which field and what to do."""


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSettings:
    """Everything `create_app` needs.

    `feed` is a feed object or a zero-argument factory returning one (the app calls it at
    start-up); None serves the game with moves entered by the operator only. `journal_path`
    None keeps the journal in a fresh temporary folder (nothing to resume later). `token` is
    required when `host` is not a loopback address. `broadcast_delay_s` delays everything the
    public audience receives (against stream sniping); operators are never delayed.
    `calibration_path` is the table profile file (`cardtrack calibrate table`): read at start-up
    when it exists, and where a calibration made through the API is saved.
    """

    game: str = "minecraft-card-game"
    players: int = 2
    names: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    seed: int | None = None
    journal_path: Path | None = None
    calibration_path: Path | None = None
    feed: Feed | Callable[[], Feed] | None = None
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = None
    broadcast_delay_s: float = 0.0
    language: str = "en"
    feed_autostart: bool = True

    def __post_init__(self) -> None:
        # Accept lists and plain dicts from callers; store read-only copies.
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        if self.journal_path is not None:
            object.__setattr__(self, "journal_path", Path(self.journal_path))
        if self.calibration_path is not None:
            object.__setattr__(self, "calibration_path", Path(self.calibration_path))
            if self.calibration_path.is_dir():
                raise SettingsError(
                    f"calibration_path: {self.calibration_path} is a folder; name the profile "
                    "file (e.g. table.json)"
                )
        if not isinstance(self.players, int) or self.players < 1:
            raise SettingsError(f"players: must be a whole number of at least 1, got {self.players!r}")
        if not 0 <= self.port <= 65535:
            raise SettingsError(f"port: {self.port} is not a TCP port (0-65535)")
        if self.token is not None and (len(self.token) < 8 or not self.token.isprintable()):
            raise SettingsError(
                "token: use at least 8 printable characters (e.g. from `python -c "
                "'import secrets; print(secrets.token_urlsafe())'`)"
            )
        if not is_loopback(self.host) and not self.token:
            raise SettingsError(
                f"host {self.host!r} is reachable from other machines: give an access token "
                "(--token T) so that only you can write moves and open the console, or bind "
                f"{DEFAULT_HOST}"
            )
        if not 0 <= self.broadcast_delay_s <= 3600:
            raise SettingsError(
                f"broadcast_delay_s: {self.broadcast_delay_s} is out of range (0 to 3600 seconds)"
            )
        if not LANGUAGE_PATTERN.fullmatch(self.language):
            raise SettingsError(
                f"language: {self.language!r} is not a language code; use one of "
                + ", ".join(LANGUAGES)
            )
        if any(not isinstance(n, str) for n in self.names):
            raise SettingsError("names: every player name must be text")

    def make_feed(self) -> Feed | None:
        """The feed object, calling the factory when `feed` is one."""
        feed = self.feed
        if feed is None:
            return None
        if hasattr(feed, "run"):
            return cast("Feed", feed)
        if callable(feed):
            made: Feed = feed()
            return made
        raise SettingsError(f"feed: {feed!r} is neither a feed nor a factory of one")
