"""The FastAPI application: pages, the JSON API, the websocket, and the resources they share.

`create_app(settings)` builds the app; its lifespan opens the session (resuming the journal
when the file exists), attaches the broadcaster to the event loop, and starts the feed thread;
on shutdown it stops the feed (within a second), detaches the broadcaster and closes the
journal. Writes go through `Session` (blocking SQLite commits run in the thread pool); reads
of what the public may see go through the broadcaster, which knows the broadcast delay.
With a token configured, writing endpoints, the console page, the raw journal and the
operator and player audiences need it (`Authorization: Bearer T` or `?token=T`). The table
profile (`/api/calibration`) is kept by a `server.table_profile.ProfileStore`: uploaded or
fitted from four clicked corners, saved to the settings' calibration file and handed to the
camera feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.websockets import WebSocketDisconnect

from engine import Audience, EngineError, game_ids, get_game, load_catalog
from server import schemas, viewmodel
from server.broadcast import Broadcaster
from server.feeds import FeedRunner
from server.journal import JournalError
from server.session import (
    ConflictError,
    FeedState,
    MoveRejectedError,
    Session,
    SessionError,
    Snapshot,
    UnknownEntryError,
)
from server.settings import LANGUAGE_PATTERN, ServerSettings
from server.table_profile import (
    CalibrationInputError,
    ProfileSource,
    ProfileStore,
    describe,
    profile_from_corners,
    profile_from_upload,
)

log = logging.getLogger(__name__)

SERVER_DIR = Path(__file__).resolve().parent
STATIC_DIR = SERVER_DIR / "static"
I18N_DIR = SERVER_DIR / "i18n"
PAGES = ("overlay", "console", "spectator")

WS_POLICY_VIOLATION = 1008

_INDEX = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cardtrack</title></head>
<body><h1>cardtrack</h1><ul>
<li><a href="/overlay">overlay</a> (OBS browser source)</li>
<li><a href="/console">operator console</a></li>
<li><a href="/spectator">spectator</a></li>
<li><a href="/docs">API</a></li></ul></body></html>
"""


def session_of(request: Request) -> Session:
    s: Session = request.app.state.session
    return s


def profiles_of(request: Request) -> ProfileStore:
    p: ProfileStore = request.app.state.profiles
    return p


def broadcaster_of(request: Request) -> Broadcaster:
    b: Broadcaster = request.app.state.broadcaster
    return b


def token_ok(settings: ServerSettings, given: str | None) -> bool:
    """Whether `given` is the configured token (always true when none is configured)."""
    if not settings.token:
        return True
    return given is not None and secrets.compare_digest(given.encode(), settings.token.encode())


def given_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token")


def authorized(request: Request) -> bool:
    return token_ok(request.app.state.settings, given_token(request))


def require_token(request: Request) -> None:
    if not authorized(request):
        raise HTTPException(
            status_code=401,
            detail="this needs the access token: send `Authorization: Bearer TOKEN` "
            "or add ?token=TOKEN",
            headers={"WWW-Authenticate": "Bearer"},
        )


def audience_of(
    request: Request, audience: schemas.AudienceParam, player: int | None, players: int
) -> tuple[Audience, int | None]:
    """The audience asked for, checked: operator and player views need the token."""
    aud = Audience(audience.value)
    if aud is not Audience.PUBLIC and not authorized(request):
        raise HTTPException(401, f"the {aud.value} audience needs the access token")
    if aud is Audience.PLAYER:
        if player is None or not 1 <= player <= players:
            raise HTTPException(422, f"player: give a seat from 1 to {players} for audience=player")
        return aud, player
    return aud, None


Writer = Annotated[None, Depends(require_token)]
SessionDep = Annotated[Session, Depends(session_of)]
BroadcasterDep = Annotated[Broadcaster, Depends(broadcaster_of)]
ProfilesDep = Annotated[ProfileStore, Depends(profiles_of)]
AudienceQ = Annotated[
    schemas.AudienceParam, Query(description="public (delayed), operator or player")
]
PlayerQ = Annotated[int | None, Query(ge=1, le=16, description="seat, for audience=player")]
SinceQ = Annotated[int, Query(ge=0, le=2**62, description="only entries after this seq")]


def create_app(settings: ServerSettings) -> FastAPI:
    """The cardtrack web app for one game session (see the module docstring)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        session = await asyncio.to_thread(
            Session.start,
            journal_path=settings.journal_path,
            game=settings.game,
            players=settings.players,
            options=settings.options,
            names=settings.names,
            seed=settings.seed,
        )
        broadcaster = Broadcaster(session, delay_s=settings.broadcast_delay_s)
        feed = settings.make_feed()
        runner = FeedRunner(session, feed) if feed is not None else None
        app.state.profiles = await asyncio.to_thread(ProfileStore, settings.calibration_path, feed)
        app.state.session = session
        app.state.broadcaster = broadcaster
        app.state.runner = runner
        if session.resumed:
            log.info("resumed %s at seq %d", session.journal_path, session.snapshot.seq)
        if runner is not None and settings.feed_autostart:
            runner.start()
        try:
            yield
        finally:
            if runner is not None:
                await asyncio.to_thread(runner.stop)
            broadcaster.close()
            session.close()

    app = FastAPI(
        title="cardtrack",
        summary="Live state of a real card game tracked by a camera, with rule warnings.",
        version="1",
        lifespan=lifespan,
    )
    app.state.settings = settings
    _install_error_handlers(app)

    def game_out(snap: Snapshot) -> dict[str, Any]:
        return {**viewmodel.game_info(snap), "language": settings.language}

    # -- pages ------------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        page = STATIC_DIR / "index.html"
        if page.is_file():
            return FileResponse(page)
        return HTMLResponse(_INDEX)

    def page(name: str) -> Response:
        path = STATIC_DIR / f"{name}.html"
        if not path.is_file():
            raise HTTPException(404, f"the {name} page is not installed ({path} is missing)")
        return FileResponse(path, headers={"Cache-Control": "no-cache"})

    @app.get("/overlay", include_in_schema=False)
    async def overlay() -> Response:
        return page("overlay")

    @app.get("/spectator", include_in_schema=False)
    async def spectator() -> Response:
        return page("spectator")

    @app.get("/console", include_in_schema=False)
    async def console(request: Request) -> Response:
        if not authorized(request):
            return HTMLResponse(
                "<!doctype html><title>cardtrack</title><p>The operator console needs the access "
                "token: open <code>/console?token=YOUR_TOKEN</code>.</p>",
                status_code=401,
            )
        return page("console")

    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")

    # -- reading ----------------------------------------------------------------------------------

    @app.get("/health", response_model=schemas.HealthOut, tags=["status"])
    async def health(session: SessionDep) -> dict[str, Any]:
        snap = session.snapshot
        return {"status": "ok", "feed": snap.status.feed.value, "seq": snap.seq}

    @app.get("/api/metrics", response_model=schemas.MetricsOut, tags=["status"])
    async def metrics(session: SessionDep, broadcaster: BroadcasterDep) -> dict[str, Any]:
        snap = session.snapshot
        b = broadcaster.metrics()
        return {
            "fps": snap.status.fps,
            "stage_ms": dict(snap.status.stage_ms),
            "queues": {**dict(snap.status.queues), "subscriber_max": b["queue_depth_max"],
                       "subscriber_total": b["queue_depth_total"]},
            "subscribers": b["subscribers"],
            "moves": len(snap.moves),
            "seq": snap.seq,
            "feed": snap.status.feed.value,
            "broadcast": b,
        }

    @app.get("/api/state", response_model=schemas.ViewModelOut, tags=["game"])
    async def state(
        request: Request, broadcaster: BroadcasterDep,
        audience: AudienceQ = schemas.AudienceParam.public, player: PlayerQ = None,
    ) -> dict[str, Any]:
        """The view model for one audience (the public's is `broadcast_delay_s` old)."""
        snap = broadcaster.snapshot_for(Audience(audience.value))
        aud, seat = audience_of(request, audience, player, snap.players)
        return viewmodel.build_view(snap, aud, seat, delay_s=broadcaster.delay_s)

    @app.get("/api/moves", response_model=schemas.MovesOut, tags=["game"])
    async def moves(
        request: Request, broadcaster: BroadcasterDep, since: SinceQ = 0,
        audience: AudienceQ = schemas.AudienceParam.public, player: PlayerQ = None,
    ) -> dict[str, Any]:
        """The moves that stand (after undos and replacements) newer than `since`."""
        snap = broadcaster.snapshot_for(Audience(audience.value))
        aud, seat = audience_of(request, audience, player, snap.players)
        return {
            "seq": snap.seq,
            "moves": [
                viewmodel.move_dict(m.seq, m.move, snap, aud, seat, source=m.source,
                                    replaced=m.replaced)
                for m in snap.moves if m.seq > since
            ],
        }

    @app.get("/api/warnings", response_model=schemas.WarningsOut, tags=["game"])
    async def warnings(
        request: Request, broadcaster: BroadcasterDep, since: SinceQ = 0,
        audience: AudienceQ = schemas.AudienceParam.public, player: PlayerQ = None,
    ) -> dict[str, Any]:
        """Every warning raised by the moves that stand, newer than `since`."""
        snap = broadcaster.snapshot_for(Audience(audience.value))
        audience_of(request, audience, player, snap.players)
        return {
            "seq": snap.seq,
            "warnings": [viewmodel.warning_dict(s, w) for s, w in snap.warnings if s > since],
        }

    @app.get(
        "/api/camera.jpg", tags=["game"], response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}}, 404: {"description": "no camera view yet"}},
    )
    def camera_view(session: SessionDep, _: Writer) -> Response:
        """The newest camera frame with the zones and the cards found drawn on it (operator)."""
        jpeg = session.camera_jpeg
        if jpeg is None:
            raise HTTPException(404, "no camera view yet: the camera feed has not produced a frame")
        return Response(content=jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})

    @app.get("/api/journal", response_model=schemas.JournalOut, tags=["game"])
    def journal(session: SessionDep, _: Writer, since: SinceQ = 0) -> dict[str, Any]:
        """Raw journal entries newer than `since`, with their evidence (operator data)."""
        snap, entries = session.entries_since(since)
        return {
            "path": snap.journal,
            "game_no": snap.game_no,
            "entries": [
                {
                    "seq": e.seq, "kind": e.kind.value, "time": e.time,
                    "move": dict(e.move) if e.move is not None else None, "target": e.target,
                    "frame": e.frame, "source": e.source, "evidence": dict(e.evidence),
                    "warnings": [dict(w) for w in e.warnings],
                }
                for e in entries
            ],
        }

    @app.get("/api/game", response_model=schemas.GameOut, tags=["game"])
    async def game(session: SessionDep) -> dict[str, Any]:
        """The game, its players and names, rule options with their specs, and its moves."""
        return game_out(session.snapshot)

    @app.get("/api/games", response_model=schemas.GamesOut, tags=["game"])
    async def games() -> dict[str, Any]:
        """The games this server can referee."""
        out = []
        for gid in game_ids():
            r = get_game(gid)
            out.append({"game": gid, "name": r.name, "min_players": r.min_players,
                        "max_players": r.max_players})
        return {"games": out}

    @app.get("/api/catalog/{game}", tags=["game"])
    async def catalog(game: str) -> dict[str, Any]:
        """Every card of a game with its name, kind, attributes and faces."""
        try:
            return viewmodel.catalog_info(load_catalog(game))
        except EngineError as exc:
            raise HTTPException(404, str(exc)) from None

    @app.get("/api/i18n/{lang}", tags=["pages"])
    async def i18n(lang: str) -> dict[str, Any]:
        """Interface texts in one language, English filling any key it lacks."""
        if not LANGUAGE_PATTERN.fullmatch(lang):
            raise HTTPException(404, f"{lang!r} is not a language code such as en, fr, fa, pl, nl")
        path = I18N_DIR / f"{lang}.json"
        if not path.is_file():
            known = ", ".join(sorted(p.stem for p in I18N_DIR.glob("*.json")))
            raise HTTPException(404, f"no translation {lang!r}; available: {known}")
        return {**_load_json(I18N_DIR / "en.json"), **_load_json(path)}

    # -- writing ----------------------------------------------------------------------------------

    def _submit_out(result: Any) -> dict[str, Any]:
        return {
            "seq": result.seq,
            "move": dict(result.move),
            "warnings": [viewmodel.warning_dict(result.seq, w) for w in result.warnings],
        }

    @app.post("/api/moves", response_model=schemas.SubmitOut, status_code=201, tags=["operator"],
              responses={400: {"model": schemas.ErrorOut}, 401: {"model": schemas.ErrorOut}})
    def insert_move(body: schemas.MoveBody, session: SessionDep, _: Writer) -> dict[str, Any]:
        """Record a move typed by the operator; returns its seq and the warnings it raised."""
        return _submit_out(session.submit(body.move, source="operator"))

    @app.post("/api/moves/{seq}/undo", response_model=schemas.SubmitOut, tags=["operator"],
              responses={404: {"model": schemas.ErrorOut}, 409: {"model": schemas.ErrorOut}})
    def undo_move(seq: int, session: SessionDep, _: Writer) -> dict[str, Any]:
        """Cancel a recorded move (an `undo` journal entry; the move stays in the record)."""
        return {"seq": session.undo(seq), "move": None, "warnings": []}

    @app.put("/api/moves/{seq}", response_model=schemas.SubmitOut, tags=["operator"],
             responses={400: {"model": schemas.ErrorOut}, 404: {"model": schemas.ErrorOut}})
    def replace_move(
        seq: int, body: schemas.MoveBody, session: SessionDep, _: Writer
    ) -> dict[str, Any]:
        """Substitute a recorded move (a `replace` journal entry)."""
        return _submit_out(session.replace(seq, body.move))

    @app.put("/api/game/options", response_model=schemas.GameOut, tags=["operator"])
    def set_options(body: schemas.OptionsBody, session: SessionDep, _: Writer) -> dict[str, Any]:
        """Change rule options; the game is folded again under them."""
        return game_out(session.set_options(body.options))

    @app.put("/api/game/names", response_model=schemas.GameOut, tags=["operator"])
    def set_names(body: schemas.NamesBody, session: SessionDep, _: Writer) -> dict[str, Any]:
        return game_out(session.set_names(body.names))

    @app.post("/api/game/new", response_model=schemas.GameOut, status_code=201, tags=["operator"])
    def new_game(body: schemas.NewGameBody, session: SessionDep, _: Writer) -> dict[str, Any]:
        """Start a new game (a new journal file next to the current one)."""
        snap = session.new_game(
            game=body.game, players=body.players, options=body.options, names=body.names,
            seed=body.seed,
        )
        return game_out(snap)

    def _feed_out(request: Request, changed: bool) -> dict[str, Any]:
        runner: FeedRunner | None = request.app.state.runner
        return {
            "feed": FeedState.RUNNING.value if runner and runner.running else "stopped",
            "name": runner.feed.name if runner else None,
            "changed": changed,
        }

    @app.post("/api/feed/start", response_model=schemas.FeedOut, tags=["operator"],
              responses={409: {"model": schemas.ErrorOut}})
    def feed_start(request: Request, _: Writer) -> dict[str, Any]:
        runner: FeedRunner | None = request.app.state.runner
        if runner is None:
            raise HTTPException(409, "no feed is configured; start the server with --feed simulated")
        return _feed_out(request, runner.start())

    @app.post("/api/feed/stop", response_model=schemas.FeedOut, tags=["operator"])
    def feed_stop(request: Request, _: Writer) -> dict[str, Any]:
        runner: FeedRunner | None = request.app.state.runner
        changed = runner is not None and runner.running
        if runner is not None:
            runner.stop()
        return _feed_out(request, changed)

    # -- calibration ----------------------------------------------------------------------------------

    def calibration_out(session: Session, profiles: ProfileStore) -> dict[str, Any]:
        snap = session.snapshot
        return describe(profiles.active(), game=snap.game, players=snap.players)

    def now() -> str:
        return datetime.now(UTC).isoformat(timespec="seconds")

    def use_profile(profiles: ProfileStore, profile: Any, source: ProfileSource) -> None:
        try:
            profiles.set(profile, source)
        except OSError as exc:
            raise HTTPException(
                500, f"{profiles.path}: the calibration file cannot be written ({exc.strerror}); "
                "nothing was changed: check the folder exists and may be written",
            ) from None

    @app.get("/api/calibration", response_model=schemas.CalibrationOut, tags=["calibration"])
    def calibration(session: SessionDep, profiles: ProfilesDep) -> dict[str, Any]:
        """The active table profile (size, homography, fit error, source, when it was made) and
        the game's zones in table mm and, with a profile, in camera-frame pixels."""
        return calibration_out(session, profiles)

    @app.put("/api/calibration", response_model=schemas.CalibrationOut, tags=["calibration"],
             responses={401: {"model": schemas.ErrorOut}, 422: {"model": schemas.ErrorOut}})
    def upload_calibration(
        body: schemas.ProfileBody, session: SessionDep, profiles: ProfilesDep, _: Writer
    ) -> dict[str, Any]:
        """Use a profile file's JSON (as `cardtrack calibrate table` writes it): checked against
        the game being played, saved to the calibration file, applied by the camera feed."""
        snap = session.snapshot
        profile = profile_from_upload(body.to_file_dict(), snap.game, snap.players)
        use_profile(profiles, profile, ProfileSource.UPLOAD)
        return calibration_out(session, profiles)

    @app.post("/api/calibration/corners", response_model=schemas.CalibrationOut,
              tags=["calibration"],
              responses={401: {"model": schemas.ErrorOut}, 422: {"model": schemas.ErrorOut}})
    def calibrate_corners(
        body: schemas.CornersBody, session: SessionDep, profiles: ProfilesDep, _: Writer
    ) -> dict[str, Any]:
        """Fit the table from its four corners clicked on the camera picture (top-left,
        top-right, bottom-right, bottom-left, in camera-frame pixels); saved to the calibration
        file and used by the camera feed from its next frame."""
        snap = session.snapshot
        active = profiles.active()
        image_size = body.image_size or (tuple(active.camera_size) if active.camera_size else None)
        profile = profile_from_corners(
            body.corners, game=snap.game, players=snap.players,
            image_size=image_size,  # type: ignore[arg-type]
            table_mm=body.table_mm, base=active.profile, created=now(),
        )
        use_profile(profiles, profile, ProfileSource.CORNERS)
        return calibration_out(session, profiles)

    # -- live ---------------------------------------------------------------------------------------

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        """`state` on connect, `event`s newer than `since=`, then every change (contract)."""
        session: Session = websocket.app.state.session
        broadcaster: Broadcaster = websocket.app.state.broadcaster
        q = websocket.query_params
        try:
            audience = Audience(q.get("audience", "public"))
            player = int(q["player"]) if q.get("player") else None
            since = int(q["since"]) if q.get("since") else None
        except ValueError:
            await websocket.close(WS_POLICY_VIOLATION, "bad audience, player or since")
            return
        players = session.snapshot.players
        header = websocket.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else q.get("token")
        if audience is not Audience.PUBLIC and not token_ok(settings, token):
            await websocket.close(WS_POLICY_VIOLATION, f"the {audience.value} audience needs the token")
            return
        if audience is Audience.PLAYER and (player is None or not 1 <= player <= players):
            await websocket.close(WS_POLICY_VIOLATION, f"player: give a seat from 1 to {players}")
            return
        await websocket.accept()

        async def drain() -> None:
            while True:
                msg = await websocket.receive()
                if msg["type"] == "websocket.disconnect":
                    return

        writer = asyncio.create_task(broadcaster.serve(
            websocket.send_text, audience=audience, player=player if audience is Audience.PLAYER else None,
            since=since,
        ))
        reader = asyncio.create_task(drain())
        try:
            await asyncio.wait({writer, reader}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (writer, reader):
                task.cancel()
            for task in (writer, reader):
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect, RuntimeError,
                                         OSError):
                    await task

    return app


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HTTPException(500, f"{path.name}: cannot be read ({exc})") from None
    if not isinstance(data, dict):
        raise HTTPException(500, f"{path.name}: must hold one JSON object")
    return data


def _install_error_handlers(app: FastAPI) -> None:
    # Domain errors map to a status by kind; each carries a message that says what to fix.
    statuses: tuple[tuple[type[Exception], int], ...] = (
        (MoveRejectedError, 400),
        (UnknownEntryError, 404),
        (ConflictError, 409),
        (SessionError, 400),
        (EngineError, 400),
        (JournalError, 400),
        (CalibrationInputError, 422),
    )
    for kind, status in statuses:

        async def handler(_: Request, exc: Exception, status: int = status) -> JSONResponse:
            return JSONResponse(status_code=status, content={"detail": str(exc)})

        app.add_exception_handler(kind, handler)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")),
             "type": str(e.get("type", ""))}
            for e in exc.errors()
        ]
        readable = "; ".join(f"{'.'.join(e['loc'])}: {e['msg']}" for e in errors)
        return JSONResponse(status_code=422, content={"detail": readable, "errors": errors})

