"""The web app (Starlette): the voting page, the ratings page and a small JSON API.

Routes: ``GET /`` (the voting page; a new session token in it), ``GET /ratings``,
``GET /api/next?session=&rater=`` (the pair to judge: ids and picture URLs, never a model's name),
``GET /media/{pair_id}/{side}.webp`` (``left``, ``right``, ``reference``: the frames of a pair
handed out, side by side in one still picture), ``POST /api/vote`` (JSON ``{session, pair_id,
choice}``), ``POST /api/undo`` (JSON ``{session}``: the session's last vote taken back, its pair
handed back), ``GET /api/ratings``. ``/api/next`` also says the rater's progress (pairs judged of
the pool's). No route takes a path: a picture is found from a pair id the
server made, through the given runs' records. A refused request gets a 4xx with ``{"error": why}``
and changes nothing. A vote's body is read only up to ``MAX_BODY`` bytes (a larger declared
``Content-Length`` is refused before reading). ``GET /`` sets the browser's client cookie
(``COOKIE``, HttpOnly, SameSite=Strict) when it has none: :func:`wfeval.arena.core.client_of`.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from wfeval.arena.core import Arena, ArenaError, client_of

MAX_BODY = 4096
COOKIE = "wfeval_arena_client"
COOKIE_AGE = 365 * 24 * 3600
HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; "
                                      "script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
SIDES = ("left", "right", "reference")
CACHE = 256  # pictures kept in memory


class Pictures:
    """The still WebP of each (run, sample, which) asked for, rendered once (an LRU of ``CACHE``)."""

    def __init__(self, arena: Arena):
        self.arena, self._lock, self._cache = arena, threading.Lock(), OrderedDict()

    def get(self, run_id: str, sample: str, which: str, size: tuple[int, int] | None) -> dict[str, Any] | None:
        from wfeval.report.html.media import sprite

        key = (run_id, sample, which, size)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        video = self.arena.pool.video(run_id, sample, which)
        if video is None:
            return None
        found = sprite(video, size=size)
        if found.data_uri is None:
            return None
        import base64

        item = {"bytes": base64.b64decode(found.data_uri.split(",", 1)[1]), "frames": found.frames,
                "width": found.width, "height": found.height}
        with self._lock:
            self._cache[key] = item
            while len(self._cache) > CACHE:
                self._cache.popitem(last=False)
        return item


async def bounded_body(request) -> bytes | None:
    """The request's body, read as it arrives; None as soon as it passes ``MAX_BODY`` bytes."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def build_app(arena: Arena):
    import jinja2
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    from wfeval.arena import page
    from wfeval.report.votes import section

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    vote_page, ratings_page = env.from_string(page.VOTE), env.from_string(page.RATINGS)
    pictures = Pictures(arena)

    def refuse(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status, headers=HEADERS)

    def index(request: Request) -> Response:
        client, cookie = client_of(request.client.host if request.client else None, request.cookies.get(COOKIE))
        token = arena.new_session(client)
        response = HTMLResponse(vote_page.render(token=token, style=page.STYLE, pool=arena.pool.describe()),
                                headers=HEADERS)
        if cookie is not None:
            response.set_cookie(COOKIE, cookie, max_age=COOKIE_AGE, path="/", httponly=True, samesite="strict")
        return response

    def ratings(request: Request) -> Response:
        return HTMLResponse(ratings_page.render(section=section(arena.summary()), style=page.STYLE,
                                                pool=arena.pool.describe()), headers=HEADERS)

    def api_ratings(request: Request) -> Response:
        s = arena.summary()
        return JSONResponse(section(s) or {"rows": []}, headers=HEADERS)

    def api_next(request: Request) -> Response:
        try:
            issued = arena.next_pair(request.query_params.get("session"), request.query_params.get("rater"))
        except ArenaError as exc:
            return refuse(exc.status, str(exc))
        progress = arena.progress(request.query_params.get("session"), request.query_params.get("rater"))
        if issued is None:
            return JSONResponse({"pair": None, "votes": len(arena.store), "progress": progress}, headers=HEADERS)
        c = issued.candidate
        left = pictures.get(issued.left, c.sample_id, "generated", None)
        size = (left["height"], left["width"]) if left else None
        sides = {"left": left, "right": pictures.get(issued.right, c.sample_id, "generated", size),
                 "reference": pictures.get(issued.left, c.sample_id, "reference", size)}
        shown = {k: None if v is None else {"url": f"media/{issued.pair_id}/{k}.webp", "frames": v["frames"],
                                            "width": v["width"], "height": v["height"]} for k, v in sides.items()}
        frames = max([v["frames"] for v in shown.values() if v] or [1])
        fps = arena.pool.shown[issued.left][c.sample_id].fps
        return JSONResponse({"pair": {"id": issued.pair_id, "sample": c.sample_id, "column": c.column,
                                      "frames": frames, "fps": fps, **shown}, "votes": len(arena.store),
                             "progress": progress}, headers=HEADERS)

    def media(request: Request) -> Response:
        side = request.path_params["side"]
        try:
            issued = arena.issued(request.path_params["pair_id"])
        except ArenaError as exc:
            return refuse(exc.status, str(exc))
        if side not in SIDES:
            return refuse(404, "no such picture")
        c = issued.candidate
        run = issued.right if side == "right" else issued.left
        left = pictures.get(issued.left, c.sample_id, "generated", None)
        size = None if side == "left" or left is None else (left["height"], left["width"])
        item = pictures.get(run, c.sample_id, "reference" if side == "reference" else "generated", size)
        if item is None:
            return refuse(404, "no such picture")
        return Response(item["bytes"], media_type="image/webp", headers=HEADERS)

    async def json_body(request: Request, what: str, keys: tuple[str, ...]) -> dict[str, Any] | JSONResponse:
        """The request's small JSON object with exactly ``keys``, or the refusal to send."""
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return refuse(415, f"{what} is a JSON body (Content-Type: application/json)")
        length = request.headers.get("content-length")
        if length is not None and not length.isdigit():
            return refuse(400, "Content-Length is not a number")
        if length is not None and int(length) > MAX_BODY:  # refused before a byte of it is read
            return refuse(413, f"{what} is a small JSON object")
        body = await bounded_body(request)
        if body is None:
            return refuse(413, f"{what} is a small JSON object")
        try:
            data = json.loads(body)
        except ValueError:
            return refuse(400, "the body is not JSON")
        if not isinstance(data, dict) or set(data) != set(keys):
            return refuse(400, f"{what} is exactly {{{', '.join(keys)}}}")
        return data

    async def api_vote(request: Request) -> Response:
        data = await json_body(request, "a vote", ("session", "pair_id", "choice"))
        if isinstance(data, Response):
            return data
        try:
            from starlette.concurrency import run_in_threadpool

            vote = await run_in_threadpool(arena.vote, data["session"], data["pair_id"], data["choice"])
        except ArenaError as exc:
            return refuse(exc.status, str(exc))
        return JSONResponse({"ok": True, "vote_id": vote.vote_id, "votes": len(arena.store)}, headers=HEADERS)

    async def api_undo(request: Request) -> Response:
        data = await json_body(request, "an undo", ("session",))
        if isinstance(data, Response):
            return data
        try:
            from starlette.concurrency import run_in_threadpool

            vote = await run_in_threadpool(arena.undo, data["session"])
        except ArenaError as exc:
            return refuse(exc.status, str(exc))
        return JSONResponse({"ok": True, "undone": vote.vote_id, "votes": len(arena.store)}, headers=HEADERS)

    routes = [Route("/", index), Route("/ratings", ratings), Route("/api/ratings", api_ratings),
              Route("/api/next", api_next), Route("/api/vote", api_vote, methods=["POST"]),
              Route("/api/undo", api_undo, methods=["POST"]),
              Route("/media/{pair_id}/{side}.webp", media)]
    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        return refuse(status, {404: "not found", 405: "method not allowed"}.get(status, "refused"))

    return Starlette(routes=routes, exception_handlers={404: http_error, 405: http_error})
