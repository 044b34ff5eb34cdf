"""ApiClient: the loader's only door to the service.

Paths come from the entity profile; nothing here knows an entity. Every request goes through one
path: environment gate -> retries (loader.api.retry) -> pacing on 429s (loader.api.throttle) ->
concurrency slot -> httpx (with TokenAuth), over the transport of loader.api.transport -> envelope
decoding, where the service's errors become
the typed errors of loader.api.errors (loader.api.answers) and records are checked for shape
(loader.api.shapes).

The first response that names its `environment` is checked against `expect_environment`; until it
has been, requests wait, and a write first sends a read of its collection, so no write can reach
a service that reports the wrong environment.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from functools import partial
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx
import stamina

from loader import __version__
from loader.api.answers import answer_body, checked_answer
from loader.api.auth import TokenAuth
from loader.api.errors import EnvironmentMismatch, MalformedAnswer, NotFound, RateLimited
from loader.api.paging import (
    MALFORMED_HINT,
    Page,
    check_records,
    flattened,
    iter_batches,
    page_from_envelope,
    read_page,
)
from loader.api.requestlog import (
    ATTEMPT,
    HTTP_LOGGER,
    LibraryNoiseFilter,
    RequestObserver,
    RetryNoticeFilter,
)
from loader.api.retry import retry_hook
from loader.api.shapes import record_problem
from loader.api.throttle import Pacer
from loader.api.translate import translate_transport_error
from loader.api.transport import AiohttpTransport, environment_names_a_proxy
from loader.api.urls import fill_path, query_value
from loader.config import DEFAULT_CONCURRENCY, Environment, RetrySettings, is_loopback_host
from loader.errors import ConfigError, ProfileError
from loader.profile import EntityProfile, Profile

_LIBRARY_LOGGERS = ("httpx", "httpcore")
PROBE_ENTITY = "tag"  # few records, read-only on the real platform: the cheapest page to ask for
_READ = httpx.ByteStream(b"")  # the stream of an answer decoded already (see ApiClient._decode)


class ApiClient:
    """An async client for one environment. Use as `async with ApiClient(env, profile) as client`."""

    def __init__(
        self,
        env: Environment,
        profile: Profile,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        retry: RetrySettings | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._env = env
        self._profile = profile
        self._envelope = profile.service.envelope
        self._concurrency = concurrency
        self._retry_settings = retry or env.retry
        self._inner_transport = transport
        token_url = env.auth_url + profile.service.token_path.replace("{realm}", quote(env.realm, safe=""))
        self._auth = TokenAuth(
            token_url, env.client_id, env.client_secret, allowed_origins=(env.base_url, env.auth_url)
        )
        self._observer = RequestObserver(logging.getLogger(HTTP_LOGGER))
        self._quiet = LibraryNoiseFilter()
        self._retry_notice = RetryNoticeFilter()
        self._slots = asyncio.Semaphore(concurrency)
        self._pacer = Pacer()
        self._first_lock = asyncio.Lock()
        # With nothing to expect there is nothing to check before a write.
        self._checked = env.expect_environment is None
        self._mismatch: EnvironmentMismatch | None = None
        self._http: httpx.AsyncClient | None = None
        self.environment: str | None = None
        self.api_version: str | None = None

    async def __aenter__(self) -> ApiClient:
        verify: ssl.SSLContext | bool = True
        if self._env.ca_bundle is not None:
            try:
                verify = ssl.create_default_context(cafile=str(self._env.ca_bundle))
            except (ssl.SSLError, OSError) as error:
                raise ConfigError(
                    f"ca_bundle {self._env.ca_bundle} cannot be used: {error}",
                    hint="give a PEM file of CA certificates (-----BEGIN CERTIFICATE----- ...)",
                ) from None
        # No transport of our own unless a test passes one: httpx then builds its default transports,
        # which honour HTTPS_PROXY / NO_PROXY and SSL_CERT_FILE as a user's environment expects;
        # loopback traffic (the sandbox) never goes through a proxy.
        loopback = all(is_loopback_host(httpx.URL(url).host) for url in (self._env.base_url, self._env.auth_url))
        limits = httpx.Limits(max_connections=self._concurrency + 2, max_keepalive_connections=self._concurrency + 2)
        transport = self._inner_transport
        if transport is None and (loopback or not environment_names_a_proxy()):
            # Direct connections go through aiohttp's pool (a fraction of httpcore's CPU per request);
            # with a proxy configured, httpx's own transports apply it as before.
            transport = AiohttpTransport(verify=verify, trust_env=not loopback, limits=limits)
        self._http = httpx.AsyncClient(
            trust_env=not loopback,
            base_url=self._env.base_url,
            auth=self._auth,
            verify=verify,
            transport=transport,
            limits=limits,
            timeout=httpx.Timeout(self._env.timeout, connect=min(10.0, self._env.timeout)),
            headers={"Accept": "application/json", "User-Agent": f"loader/{__version__}"},
            follow_redirects=False,
            event_hooks={"request": [self._observer.on_request], "response": [self._observer.on_response]},
        )
        for name in _LIBRARY_LOGGERS:
            logging.getLogger(name).addFilter(self._quiet)
        # First, so it sees stamina's record before any other filter touches it.
        logging.getLogger("stamina").filters.insert(0, self._retry_notice)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self._http is not None:
                await self._http.aclose()
        finally:
            self._http = None
            for name in _LIBRARY_LOGGERS:
                logging.getLogger(name).removeFilter(self._quiet)
            logging.getLogger("stamina").removeFilter(self._retry_notice)

    # -- what the client has learnt ---------------------------------------------------------------

    @property
    def request_counts(self) -> dict[str, int]:
        """Requests actually sent (retries included): GET, POST, PATCH and token."""
        counts = {"GET": 0, "POST": 0, "PATCH": 0, "token": 0}
        counts.update(self._observer.counts)
        return counts

    @property
    def token_lifetime(self) -> float | None:
        """`expires_in` of the last token issued, in seconds."""
        return self._auth.lifetime_s

    @property
    def service_user(self) -> str | None:
        """The service user the token names, if it names one (never the token itself)."""
        return self._auth.service_user()

    @property
    def base_url(self) -> str:
        return self._env.base_url

    # -- reads ------------------------------------------------------------------------------------

    def iter_collection(
        self,
        entity: str,
        filters: Mapping[str, Any] | None = None,
        *,
        prefetch: int | None = None,
        on_total: Callable[[int], None] | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Every record of `entity`'s collection, all pages; `filters` are equality query parameters.
        `on_total` is told the collection's size each time a page gives it (a progress bar's total)."""
        return flattened(self.iter_collection_batches(entity, filters, prefetch=prefetch, on_total=on_total))

    def iter_collection_batches(
        self,
        entity: str,
        filters: Mapping[str, Any] | None = None,
        *,
        prefetch: int | None = None,
        on_total: Callable[[int], None] | None = None,
    ) -> AsyncIterator[tuple[dict[str, Any], ...]]:
        """`iter_collection`'s records a page at a time (those not seen on an earlier page)."""
        profile = self._profile.entity(entity)
        path = profile.path
        checked_fields = _matched_fields(profile)

        async def fetch_page(params: Mapping[str, str]) -> Page:
            body = await self._call("GET", path, params=params)
            page = read_page(body, self._envelope, path=path)
            if on_total is not None and page.total is not None:
                on_total(page.total)
            return page

        def check(page: Page) -> None:
            # Run by the traversal once the next page has been asked for: off the chain of round trips.
            check_records(page.records, path=path, checked_fields=checked_fields)

        return iter_batches(
            fetch_page,
            filters={name: query_value(value) for name, value in (filters or {}).items()},
            token_param=self._profile.service.page_token_param,
            page_size=self._profile.service.page_size,
            prefetch=prefetch,
            label=path,
            check=check,
        )

    async def first_page(self, entity: str, filters: Mapping[str, Any] | None = None) -> Page:
        """Only the first page of `entity`'s collection (with `total`): a cheap probe."""
        params = {name: query_value(value) for name, value in (filters or {}).items()}
        profile = self._profile.entity(entity)
        body = await self._call("GET", profile.path, params=params)
        return page_from_envelope(body, self._envelope, path=profile.path, checked_fields=_matched_fields(profile))

    async def probe_environment(self) -> str | None:
        """The environment the service reports, learnt (when no response has told it yet) from the
        first page of one small collection: tags when the profile has them, else the first entity
        in creation order. One GET, never a whole collection; None when the service names none."""
        if self.environment is None:
            entities = self._profile.entities
            entity = PROBE_ENTITY if PROBE_ENTITY in entities else next(
                name for name in self._profile.creation_order if name in entities
            )
            await self.first_page(entity)
        return self.environment

    async def fetch_collection(self, entity: str, filters: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        return [record async for record in self.iter_collection(entity, filters)]

    async def fetch_collections(self, entities: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Several collections fetched concurrently (within the client's concurrency limit)."""
        names = list(dict.fromkeys(entities))
        async with asyncio.TaskGroup() as group:
            tasks = {name: group.create_task(self.fetch_collection(name)) for name in names}
        return {name: task.result() for name, task in tasks.items()}

    async def get(self, entity: str, id_or_code: str) -> dict[str, Any] | None:
        """One record by id (or by code where the service allows it); None when there is none."""
        profile = self._profile.entity(entity)
        if not profile.item_path:
            raise ProfileError(f"entity {entity!r} has no item_path in the profile: single records cannot be read")
        path = fill_path(profile.item_path, id_or_code)
        try:
            body = await self._call("GET", path)
        except NotFound:
            return None
        return self._data(body, "GET", path)

    # -- writes -----------------------------------------------------------------------------------

    async def create(self, entity: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Create a record; the created record. A lost answer raises OutcomeUnknown (never re-sent)."""
        profile = self._profile.entity(entity)
        if profile.create is None:
            raise ProfileError(f"entity {entity!r} cannot be created (no `create` in the profile)")
        body = await self._call(profile.create.method, profile.create.path, json=dict(payload), probe=profile)
        return self._data(body, profile.create.method, profile.create.path, written=True)

    async def update(self, entity: str, record_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Update the fields in `payload` of one record; the updated record."""
        profile = self._profile.entity(entity)
        if profile.update is None:
            raise ProfileError(f"entity {entity!r} cannot be updated (no `update` in the profile)")
        path = fill_path(profile.update.path, record_id)
        body = await self._call(profile.update.method, path, json=dict(payload), probe=profile)
        return self._data(body, profile.update.method, path, written=True)

    # -- one request ------------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: dict[str, Any] | None = None,
        probe: EntityProfile | None = None,
    ) -> Awaitable[dict[str, Any]]:
        """The envelope of the answer to one request, retried as the policy says (awaited at once)."""
        if self._checked and self._mismatch is None:  # every request once the environment is checked
            return self._with_retries(method, path, params, json)
        return self._first_calls(method, path, params, json, probe)

    async def _first_calls(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        json: dict[str, Any] | None,
        probe: EntityProfile | None,
    ) -> dict[str, Any]:
        """A request before the environment is checked (or after it did not match)."""
        if self._mismatch is not None:
            raise self._mismatch
        if not self._checked:
            async with self._first_lock:
                if self._mismatch is not None:
                    raise self._mismatch
                if not self._checked:
                    if method == "GET":
                        return await self._with_retries(method, path, params, json)
                    # Learn the environment by a read before the first write can be sent.
                    await self._with_retries("GET", probe.path if probe else path, None, None)
                    if not self._checked:
                        raise EnvironmentMismatch(
                            f"the service at {self._env.base_url} did not report its environment, so "
                            f"expect_environment {self._env.expect_environment!r} cannot be checked; nothing sent",
                            hint="remove expect_environment from loader.yaml only if this service never reports one",
                        )
        return await self._with_retries(method, path, params, json)

    async def _with_retries(
        self, method: str, path: str, params: Mapping[str, str] | None, json: dict[str, Any] | None
    ) -> dict[str, Any]:
        # The first attempt goes out without the retry machinery: setting up stamina's context is paid
        # on every page's round trip. Its failure is handed to that context as
        # its first attempt, so what is retried, the waits and the logging are stamina's as before.
        # 429s are waited out by the pacer, on a budget of their own: they spend no attempt. The
        # pacer's loop (`Pacer.paced`) is entered at the first 429; until then the request is sent
        # from here, as that loop sends it (after the pacer's pause, if one is on).
        started = time.monotonic()
        pacer = self._pacer
        try:
            try:
                if pacer.holding():
                    await pacer.hold()
                return await self._send_once(method, path, params, json, 1)
            except RateLimited as limited:
                return await pacer.paced_after(limited, partial(self._send_once, method, path, params, json, 1))
        except Exception as error:
            first = error
        return await self._retry(first, time.monotonic() - started, method, path, params, json)

    async def _retry(
        self,
        first: Exception,
        elapsed: float,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        json: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """Attempts 2 onwards, stamina's: `first` (raised by attempt 1, `elapsed` s long) is replayed."""
        settings = self._retry_settings
        # The time budget counts from the first attempt, as when stamina timed it; stamina's testing
        # mode bounds attempts only, so there it goes on as it would have.
        timeout = settings.timeout - elapsed
        if timeout <= 0 and not stamina.is_testing():
            raise first
        async for attempt in stamina.retry_context(
            on=retry_hook(method),
            attempts=settings.attempts,
            timeout=timeout if timeout > 0 else settings.timeout,
            wait_initial=settings.wait_initial,
            wait_max=settings.wait_max,
            wait_jitter=settings.wait_jitter,
        ):
            with attempt:
                if attempt.num == 1:
                    raise first
                return await self._pacer.paced(partial(self._send_once, method, path, params, json, attempt.num))
        raise AssertionError("unreachable: stamina re-raises the last error")  # pragma: no cover

    async def _send_once(
        self, method: str, path: str, params: Mapping[str, str] | None, json: dict[str, Any] | None, attempt: int
    ) -> dict[str, Any]:
        if self._http is None:
            raise RuntimeError("ApiClient used outside `async with`")
        async with self._slots:
            request = self._http.build_request(method, path, params=params, json=json, extensions={ATTEMPT: attempt})
            try:
                response = await self._http.send(request)
            except httpx.TransportError as error:
                self._observer.on_failure(error)
                raise translate_transport_error(error, method, path, self._env) from None
        return self._decode(response, method, path)

    def _decode(self, response: httpx.Response, method: str, path: str) -> dict[str, Any]:
        body = answer_body(response)
        # httpx's response and its stream name each other: a cycle, freed only when the collector
        # next runs. Its body is read: without the stream, the answer is freed as soon as it is
        # decoded.
        response.stream = _READ
        if isinstance(body, dict) and (not self._checked or self.environment is None or self.api_version is None):
            self._observe(body)  # until the environment is checked and the version and environment known
        return checked_answer(response, body, method, path)

    def _data(self, body: Mapping[str, Any], method: str, path: str, *, written: bool = False) -> dict[str, Any]:
        """The record of a single-record answer ({} when it holds none); MalformedAnswer when its
        common fields have the wrong shapes (loader.api.shapes). A write's answer may lack the id."""
        data = body.get(self._envelope.data)
        if not isinstance(data, dict):
            return {}
        problem = record_problem(data, id_required=not written)
        if problem is not None:
            raise MalformedAnswer(
                f"the service answered a malformed record: {problem}",
                method=method,
                path=path,
                hint=MALFORMED_HINT,
            )
        return data

    def _observe(self, body: Mapping[str, Any]) -> None:
        """Capture `version` and `environment`; check the first environment seen."""
        reported = body.get(self._envelope.environment)
        version = body.get(self._envelope.version)
        if self.api_version is None and isinstance(version, str | int | float) and not isinstance(version, bool):
            self.api_version = str(version)
        if self.environment is None and isinstance(reported, str):
            self.environment = reported
        if self._checked:
            return
        expected = self._env.expect_environment
        if not isinstance(reported, str):
            return
        if reported != expected:
            self._mismatch = EnvironmentMismatch(
                f"the service at {self._env.base_url} reports environment {reported!r}, "
                f"but environment {self._env.name!r} expects {expected!r}; nothing was written",
                hint="check --env and base_url: Test and Dev share one identity realm, so the same "
                "credentials work on both and only this check tells them apart",
            )
            raise self._mismatch
        self._checked = True


def _matched_fields(profile: EntityProfile) -> tuple[str, ...]:
    """The fields live records are matched by (key and unique fields): checked in every list answer."""
    return tuple(dict.fromkeys((*profile.key, *sorted(profile.unique))))


