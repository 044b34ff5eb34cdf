"""`ApiClient.probe_environment`: the reported environment from one page, never a whole collection."""

from __future__ import annotations

import asyncio

from helpers.plan import environment_for

from loader.api.client import ApiClient

TAGS = 250  # more than two pages of 100


def _tags_seed() -> dict:
    return {"institution-a": {"tags": [{"name": f"Tag {n:03d}"} for n in range(TAGS)]}}


def test_the_probe_reads_one_page_of_tags_and_returns_the_environment(start_sandbox, profile) -> None:
    sb = start_sandbox(seed=_tags_seed())
    sb.reset_stats()

    async def probe() -> tuple[str | None, str | None]:
        async with ApiClient(environment_for(sb), profile) as client:
            first = await client.probe_environment()
            again = await client.probe_environment()  # known now: no second request
            return first, again

    assert asyncio.run(probe()) == ("sandbox", "sandbox")
    requests = sb.stats()["requests"]
    assert requests["GET /institution/tags"] == 1, requests
    assert [k for k in requests if k.startswith("GET ")] == ["GET /institution/tags"]
