"""The labelling page and its JSON API, every path behind a random token.

The page is static (``static/``): the server never writes a row's text into HTML. The script
fetches the row as JSON and renders every text with ``textContent``; the Content-Security-Policy
allows no script but the page's own file, so text that looks like markup stays text. Every
request whose path does not begin with ``/TOKEN/`` gets 403.
"""

from __future__ import annotations

import secrets
from importlib.resources import files
from types import MappingProxyType
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rag_judge.calibration.label_log import ClaimLabel
from rag_judge.labelling.store import LabelStore, Refused

STATIC = files("rag_judge.labelling") / "static"
ASSETS = MappingProxyType(
    {
        "": ("label.html", "text/html"),
        "label.js": ("label.js", "text/javascript"),
        "label.css": ("label.css", "text/css"),
    }
)
"""Path under the token → (file in ``static/``, media type)."""
HEADERS = MappingProxyType(
    {
        "Content-Security-Policy": (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
    }
)
"""Sent with every response, the 403s included."""
NOTE_LIMIT = 10_000
"""Characters a note may hold."""


def new_token() -> str:
    """A fresh token for the page's URL."""
    return secrets.token_urlsafe(24)


def label_app(store: LabelStore, token: str) -> Starlette:
    """The page, its assets and its API (``api/state``, ``api/label``, ``api/undo``)."""

    async def asset(request: Request) -> Response:
        name, media = ASSETS[request.url.path.removeprefix(f"/{token}/")]
        return Response((STATIC / name).read_bytes(), media_type=media)

    async def state(request: Request) -> Response:
        return JSONResponse(state_of(store))

    async def label(request: Request) -> Response:
        try:
            body = await request.json()
            id_, value, note, claims = _label_request(body)
            store.label(id_, value, note=note, claims=claims)
        except Refused as refused:
            return JSONResponse({"error": refused.message, "state": state_of(store)}, 409)
        except ValueError as error:
            return JSONResponse({"error": str(error)}, 400)
        except OSError as error:  # a full disk: the page must not move on as if kept
            return JSONResponse({"error": f"the label was not saved: {error}"}, 500)
        return JSONResponse(state_of(store))

    async def undo(request: Request) -> Response:
        try:
            store.undo()
        except Refused as refused:
            return JSONResponse({"error": refused.message, "state": state_of(store)}, 409)
        except OSError as error:
            return JSONResponse({"error": f"the undo was not saved: {error}"}, 500)
        return JSONResponse(state_of(store))

    routes = [Route(f"/{token}/{path}", asset) for path in ASSETS]
    routes += [
        Route(f"/{token}/api/state", state),
        Route(f"/{token}/api/label", label, methods=["POST"]),
        Route(f"/{token}/api/undo", undo, methods=["POST"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(TokenGuard, token=token)])


def state_of(store: LabelStore) -> dict[str, Any]:
    """What the page shows: the progress, and the next row (None when every row is done)."""
    log, plan = store.log, store.plan
    next_id = store.next_id
    return {
        "metric": plan.metric,
        "annotator": store.annotator,
        "labels_file": str(store.path),
        "scores_file": plan.sampling.scores,
        "total": len(plan.ids),
        "labelled": sum(1 for id_ in log.labels if id_ in plan.rows),
        "skipped": sum(1 for id_ in log.skipped if id_ in plan.rows),
        "position": None if next_id is None else plan.ids.index(next_id) + 1,
        "can_undo": bool(log.order),
        "row": None if next_id is None else plan.rows[next_id],
        "taken_back": None if next_id is None else _taken_back(store, next_id),
    }


def _taken_back(store: LabelStore, id_: str) -> dict[str, Any] | None:
    """The label of this row undone in this session (its note and claim labels), to offer
    again; None when there is none."""
    row = store.undone.get(id_)
    if row is None:
        return None
    claims = [{"claim": c.claim, "label": c.label} for c in row.claims]
    return {"label": row.label, "note": row.note, "claims": claims}


def _label_request(body: Any) -> tuple[str, int | None, str, list[ClaimLabel]]:
    """``{"id", "label": 1|0|null, "note", "claims": [{"claim", "label"}]}``, checked.

    Raises:
        ValueError: a malformed request.
    """
    if not isinstance(body, dict) or not isinstance(body.get("id"), str):
        raise ValueError("expected {'id': ..., 'label': 1, 0 or null}")
    value = body.get("label")
    if isinstance(value, bool) or value not in (0, 1, None):
        raise ValueError(f"label must be 1, 0 or null, got {value!r}")
    note = body.get("note", "")
    if not isinstance(note, str) or len(note) > NOTE_LIMIT:
        raise ValueError(f"note must be text of at most {NOTE_LIMIT} characters")
    claims = body.get("claims", [])
    if not isinstance(claims, list):
        raise ValueError("claims must be a list")
    return body["id"], value, note, [_claim(c) for c in claims]


def _claim(value: Any) -> ClaimLabel:
    if not isinstance(value, dict):
        raise ValueError("a claim label is {'claim': position, 'label': 1 or 0}")
    claim, label, text = value.get("claim"), value.get("label"), value.get("claim_text")
    if type(claim) is not int or claim < 0 or type(label) is not int or label not in (0, 1):
        raise ValueError("a claim label is {'claim': position, 'label': 1 or 0}")
    return ClaimLabel(claim, label, text if isinstance(text, str) else None)


class TokenGuard:
    """ASGI middleware: 403 unless the path begins with ``/TOKEN/`` (or is ``/TOKEN``, which
    the router redirects); every response gets :data:`HEADERS`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.prefix = f"/{token}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan: no request
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    *((k.lower().encode(), v.encode()) for k, v in HEADERS.items()),
                ]
            await send(message)

        path: str = scope.get("path", "")
        head, _, _ = path.removeprefix("/").partition("/")
        if not secrets.compare_digest(f"/{head}".encode(), self.prefix.encode()):
            if scope["type"] == "websocket":  # the page opens none; refused all the same
                await send({"type": "websocket.close", "code": 1008})
                return
            forbidden = PlainTextResponse(
                "forbidden: open the address rag-judge label printed (it holds a token)", 403
            )
            await forbidden(scope, receive, with_headers)
            return
        await self.app(scope, receive, with_headers)
