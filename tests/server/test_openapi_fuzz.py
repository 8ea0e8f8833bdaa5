"""Fuzzing every documented endpoint from the app's own OpenAPI spec: no input yields a 5xx.

Schemathesis generates requests (valid and invalid) from `/openapi.json` and sends them to the
ASGI app in-process (no network). Bounded and derandomized, so a run is reproducible.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from server.app import create_app
from server.settings import ServerSettings

_TMP = Path(tempfile.mkdtemp(prefix="cardtrack-fuzz-"))
APP = create_app(ServerSettings(players=3, seed=4, journal_path=_TMP / "fuzz.sqlite"))
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP)


@SCHEMA.parametrize()
@settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_no_input_makes_the_server_fail(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=[not_a_server_error])


def test_the_spec_documents_every_api_route() -> None:
    paths = set(APP.openapi()["paths"])
    assert {
        "/api/state", "/api/moves", "/api/moves/{seq}/undo", "/api/moves/{seq}", "/api/warnings",
        "/api/journal", "/api/game", "/api/game/options", "/api/game/names", "/api/game/new",
        "/api/feed/start", "/api/feed/stop", "/health", "/api/metrics", "/api/i18n/{lang}",
        "/api/catalog/{game}", "/api/calibration", "/api/calibration/corners",
    } <= paths
