"""Plain HTTP callers of a running sandbox, for the sandbox tests (no loader client code)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from loader.sandbox.server import RunningSandbox

TOKEN_PATH = "/realms/sandbox/protocol/openid-connect/token"
def fetch_token(base_url: str, client_id: str, secret: str) -> str:
    answer = httpx.post(
        base_url + TOKEN_PATH,
        data={"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret},
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


@dataclass
class Caller:
    """Plain HTTP against the sandbox with one client's bearer token."""

    http: httpx.Client
    token: str

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params=params or None, headers=self._headers())

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.http.post(path, json=body, headers=self._headers())

    def patch(self, path: str, body: Any) -> httpx.Response:
        return self.http.patch(path, json=body, headers=self._headers())

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.post(path, body)
        assert answer.status_code == 201, answer.text
        return answer.json()["data"]

    def all_pages(self, path: str, **params: Any) -> list[dict[str, Any]]:
        first = self.get(path, **params).json()
        records, token = list(first["data"]), first["page_token"]
        while token:
            page = self.get(path, page_token=token).json()
            records.extend(page["data"])
            token = page["page_token"]
        return records


def caller_for(sandbox: RunningSandbox, http: httpx.Client, other: bool = False) -> Caller:
    client_id = sandbox.other_client_id if other else sandbox.client_id
    secret = sandbox.other_client_secret if other else sandbox.client_secret
    return Caller(http, fetch_token(sandbox.base_url, client_id, secret))


