"""The sandbox's ASGI application: routes, bearer checks, faults, counters.

Every /institution route goes through `_api`: count the request, apply faults (latency, 429,
500/503 before anything happens), check the bearer token (401), run the handler (its ApiError
becomes the spec's error body), and for a successful write maybe lose the answer (500 after the
commit). The token endpoint gets latency only; /q/ routes get no faults and are not counted.

Status codes: GET 200, POST (create) 201, PATCH 200; 400/401/404/405/409 with the error body
`{environment, timestamp, message}`. A 401 carries `WWW-Authenticate: Bearer`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from loader.sandbox import docs, token_endpoint
from loader.sandbox.answer_time import AnswerOnTime, hold_answer
from loader.sandbox.entities import ENTITIES, Entity
from loader.sandbox.faults import FaultInjector, FaultOptions
from loader.sandbox.http import error_response, json_response, page_response, read_json, record_response
from loader.sandbox.options import API_VERSION, REALM, SandboxOptions
from loader.sandbox.service import ApiError, Service, invalid
from loader.sandbox.store import Filter, Store
from loader.sandbox.tokens import AccessTokens, Client, PageTokenError, PageTokens

log = logging.getLogger(__name__)
Handler = Callable[[Request, Client], Awaitable[Response]]


@dataclass
class SandboxState:
    """Everything one running sandbox holds; owned by its event loop thread."""

    options: SandboxOptions
    store: Store
    service: Service
    tokens: AccessTokens
    page_tokens: PageTokens
    faults: FaultInjector
    requests: dict[str, int] = field(default_factory=dict)

    @property
    def environment(self) -> str:
        return self.options.environment

    def count(self, key: str) -> None:
        self.requests[key] = self.requests.get(key, 0) + 1

    def stats(self) -> dict[str, Any]:
        return {
            "requests": dict(sorted(self.requests.items())),
            "faults": dict(sorted(self.faults.counts.items())),
            "total": sum(self.requests.values()),
        }

    def reset_stats(self) -> None:
        self.requests.clear()
        self.faults.counts.clear()

    def error(self, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        return error_response(self.environment, status, message, headers)

    def record(self, data: Any, status: int = 200) -> Response:
        return record_response(self.environment, API_VERSION, data, status)


def _bearer(state: SandboxState, request: Request) -> tuple[Client | None, str]:
    header = request.headers.get("authorization")
    if not header:
        return None, "missing access token (send Authorization: Bearer <access_token>)"
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None, "malformed Authorization header (expected: Bearer <access_token>)"
    if token.startswith("{"):
        return None, "malformed access token (send only the access_token value, not the whole JSON body)"
    return state.tokens.resolve(token)


def _api(state: SandboxState, method: str, template: str, handler: Handler, write: bool = False) -> Route:
    key = f"{method} {template}"

    async def endpoint(request: Request) -> Response:
        state.count(key)
        decision = state.faults.for_api_request()
        if not write and decision.status is None:
            return await _read(state, request, handler, decision.delay_s)
        if decision.delay_s:
            await asyncio.sleep(decision.delay_s)  # before anything is done: a client that gave up changed nothing
        if decision.status == 429:
            return state.error(
                429, "Too Many Requests: rate limit exceeded", {"Retry-After": str(decision.retry_after)}
            )
        if decision.status is not None:
            text = "Internal Server Error" if decision.status == 500 else "Service Unavailable"
            return state.error(decision.status, f"{text} (injected fault; nothing was done)")
        response = await _answered(state, request, handler)
        if write and response.status_code < 300 and state.faults.answer_lost():
            return state.error(500, "Internal Server Error (injected fault; the write was committed)")
        return response

    return Route(template, endpoint, methods=[method])


async def _read(state: SandboxState, request: Request, handler: Handler, delay_s: float) -> Response:
    """A read, answered `delay_s` after it arrived with its work done inside that time, as a service's
    response time includes its own work (`loader.sandbox.answer_time`): waiting first and working
    after would add the sandbox's own work to each page of a chain, which is no part of the client.
    A read changes nothing, so a client that gives up meanwhile cannot tell the order."""
    if delay_s:
        hold_answer(request.scope, delay_s)
    return await _answered(state, request, handler)


async def _answered(state: SandboxState, request: Request, handler: Handler) -> Response:
    """The bearer checked (401), then the handler's answer (its ApiError as the spec's error body)."""
    client, reason = _bearer(state, request)
    if client is None:
        return state.error(401, f"Unauthorized: {reason}", {"WWW-Authenticate": "Bearer"})
    try:
        return await handler(request, client)
    except ApiError as exc:
        return state.error(exc.status, exc.message)


def _list_handler(state: SandboxState, entity: Entity) -> Handler:
    async def handler(request: Request, client: Client) -> Response:
        base: list[Filter] = []
        scope = entity.collection
        if entity.collection == "comments":
            suggestion = state.service.find(client.institution, ENTITIES["suggestions"], request.path_params["id"])
            base.append(("ref", suggestion.body["id"]))
            scope = f"comments:{suggestion.body['id']}"
        return _page(state, entity, request, client, scope, base)

    return handler


def _page(
    state: SandboxState, entity: Entity, request: Request, client: Client, scope: str, base: Sequence[Filter]
) -> Response:
    token = request.query_params.get("page_token")
    if token is None:
        filters = state.service.filters(entity, request.query_params.multi_items())
        after, first = 0, True
    else:
        try:
            filters, after = state.page_tokens.read(token, scope, client.institution)
        except PageTokenError as exc:
            raise invalid(str(exc)) from None
        first = False
    rows, total = state.service.page(client.institution, entity, filters, after, base)
    next_token = state.page_tokens.make(scope, client.institution, filters, rows[-1][0]) if rows else None
    return page_response(state.environment if first else None, API_VERSION, [r[1] for r in rows], total, next_token)


def _routes_of(state: SandboxState, entity: Entity) -> list[Route]:
    service = state.service

    async def create(request: Request, client: Client) -> Response:
        extra: dict[str, Any] | None = None
        if entity.collection == "comments":
            suggestion = service.find(client.institution, ENTITIES["suggestions"], request.path_params["id"])
            extra = {"suggestion_id": suggestion.body["id"]}
        return state.record(service.create(client, entity, await read_json(request), extra), 201)

    async def get_one(request: Request, client: Client) -> Response:
        return state.record(service.get(client, entity, request.path_params["id"]))

    async def update(request: Request, client: Client) -> Response:
        return state.record(service.update(client, entity, request.path_params["id"], await read_json(request)))

    path = entity.path
    routes = [_api(state, "GET", path, _list_handler(state, entity))]
    if entity.creatable:
        routes.append(_api(state, "POST", path, create, write=True))
    if entity.collection == "comments":
        return routes
    routes.append(_api(state, "GET", f"{path}/{{id}}", get_one))
    if entity.updatable:
        routes.append(_api(state, "PATCH", f"{path}/{{id}}", update, write=True))
    return routes


def _institution_routes(state: SandboxState) -> list[Route]:
    apps = ENTITIES["applications"]

    async def outcome(request: Request, client: Client) -> Response:
        return state.record(state.service.outcome(client, apps, request.path_params["id"]))

    routes: list[Route] = [_api(state, "GET", f"{apps.path}/{{id}}/outcome", outcome)]
    # credentials before applicants, so /applicants/credentials is not read as an applicant id
    order = ("credentials", *(name for name in ENTITIES if name != "credentials"))
    for name in order:
        routes.extend(_routes_of(state, ENTITIES[name]))
    return routes


def _q_routes(state: SandboxState) -> list[Route]:
    async def stats(request: Request) -> Response:
        return json_response(state.stats())

    async def reset_stats(request: Request) -> Response:
        state.reset_stats()
        return json_response(state.stats())

    async def get_faults(request: Request) -> Response:
        return json_response(state.faults.options.to_dict())

    async def set_faults(request: Request) -> Response:
        try:
            body = await read_json(request)
            if not isinstance(body, dict):
                raise invalid("request body must be a JSON object")
            options = FaultOptions.from_dict(body)
        except ApiError as exc:
            return state.error(exc.status, exc.message)
        except (ValueError, TypeError) as exc:
            return state.error(400, f"ValidationError: {exc}")
        state.faults.reset(options)
        return json_response(options.to_dict())

    async def outbox(request: Request) -> Response:
        # E-mails hold applicants' addresses: only the caller's institution's, and only with a token.
        client, reason = _bearer(state, request)
        if client is None:
            return state.error(401, f"Unauthorized: {reason}", {"WWW-Authenticate": "Bearer"})
        return json_response({"messages": state.store.outbox(client.institution)})

    return [
        Route("/q/sandbox/stats", stats, methods=["GET"]),
        Route("/q/sandbox/stats/reset", reset_stats, methods=["POST"]),
        Route("/q/sandbox/faults", get_faults, methods=["GET"]),
        Route("/q/sandbox/faults", set_faults, methods=["POST"]),
        Route("/q/sandbox/outbox", outbox, methods=["GET"]),
    ]


def build_app(options: SandboxOptions, store: Store, service: Service) -> Starlette:
    """The ASGI app of one sandbox over an opened (and seeded) store."""
    state = SandboxState(
        options=options,
        store=store,
        service=service,
        tokens=AccessTokens(options.all_clients(), options.token_ttl),
        page_tokens=PageTokens(options.page_token_ttl),
        faults=FaultInjector(options.faults),
    )
    routes: list[BaseRoute] = [
        token_endpoint.route(state, REALM),
        *_institution_routes(state),
        *_q_routes(state),
        *docs.routes(),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "Internal Server Error"
        headers = exc.headers if isinstance(exc, HTTPException) else None
        return state.error(status, str(detail), dict(headers) if headers else None)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("sandbox bug while answering %s %s", request.method, request.url.path)
        return state.error(500, "Internal Server Error")

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: http_error, Exception: server_error},
        middleware=[Middleware(AnswerOnTime)],  # a read's answer leaves `latency` after it arrived
    )
    app.router.redirect_slashes = False  # an API answers 404 for a stray slash, it does not redirect
    app.state.sandbox = state
    return app
