"""Helpers of the executor's tests: an Environment for a running sandbox, hand-built plans, and
reading the end state back through the API."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from loader.api.client import ApiClient
from loader.config import Environment, RetrySettings
from loader.environments import sandbox_environment
from loader.places import CellRef
from loader.plan.model import Action, BlockPlan, FieldChange, PendingId, Plan, RecordPlan
from loader.profile import Profile, load_profile

PROFILE: Profile = load_profile()
FAST_RETRY = RetrySettings(attempts=10, wait_initial=0.01, wait_max=0.5, wait_jitter=0.05, timeout=60.0)


def environment_for(sandbox: Any, *, name: str = "sandbox", retry: RetrySettings = FAST_RETRY) -> Environment:
    return sandbox_environment(sandbox, name=name, timeout=10.0, retry=retry)


def client_for(sandbox: Any, *, concurrency: int = 8, retry: RetrySettings = FAST_RETRY) -> ApiClient:
    return ApiClient(environment_for(sandbox, retry=retry), PROFILE, concurrency=concurrency, retry=retry)


def live_records(sandbox: Any, entity: str) -> list[dict[str, Any]]:
    """Every live record of `entity` in the sandbox, as the loader's client fetches them."""
    async def fetch() -> list[dict[str, Any]]:
        async with client_for(sandbox) as client:
            return list(await client.fetch_collection(entity))

    return asyncio.run(fetch())


def record(
    block: str,
    entity: str,
    code: str,
    payload: Mapping[str, Any],
    *,
    action: Action = Action.CREATE,
    row: int = 2,
    **values: Any,
) -> RecordPlan:
    return RecordPlan(
        ref=f"{block}/{code}",
        block=block,
        entity=entity,
        key=(code,),
        action=action,
        payload=dict(payload),
        source=CellRef("curriculum.xlsx", block, row=row),
        row=row,
        **values,
    )


def created_changes(payload: Mapping[str, Any]) -> tuple[FieldChange, ...]:
    """The changes of a record created with `payload`: each field from nothing to its value, then each
    custom attribute label."""
    labels = payload.get("custom_attributes") or {}
    return (*(FieldChange(name, None, value) for name, value in payload.items() if name != "custom_attributes"),
            *(FieldChange(f"custom_attributes.{label}", None, value) for label, value in labels.items()))


def make_plan(*blocks: tuple[str, str, Iterable[RecordPlan]], environment: str = "sandbox") -> Plan:
    return Plan(
        environment=environment,
        api_version=None,
        base_url="",
        fingerprints={},
        blocks=tuple(BlockPlan(name, entity, "curriculum.xlsx", name, tuple(recs)) for name, entity, recs in blocks),
    )


def school_course_plan(schools: int, courses_per_school: int, prefix: str = "") -> Plan:
    """Schools and their courses, all to create; each course's parent is its school's pending id."""
    school_records = [
        record("schools", "school", f"{prefix}S{i}", {"code": f"{prefix}S{i}", "name": f"School {i}"}, row=i + 2)
        for i in range(schools)
    ]
    course_records: list[RecordPlan] = []
    for i in range(schools):
        for j in range(courses_per_school):
            code = f"{prefix}C{i}-{j}"
            course_records.append(
                record(
                    "courses",
                    "course",
                    code,
                    {"code": code, "name": f"Course {i}.{j}", "parent": {"id": PendingId(f"schools/{prefix}S{i}")}},
                    row=len(course_records) + 2,
                    depends_on=(f"schools/{prefix}S{i}",),
                )
            )
    return make_plan(("schools", "school", school_records), ("courses", "course", course_records))


async def live_state(client: ApiClient, entities: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    return await client.fetch_collections(list(entities))


def duplicates(records: Iterable[Mapping[str, Any]], field: str = "code") -> list[Any]:
    counts = Counter(r.get(field) for r in records)
    return [value for value, n in counts.items() if n > 1]


def loader_yaml_for(sandbox: Any, secret_variable: str, *, top: str = "", settings: str = "") -> str:
    """loader.yaml text naming `sandbox` as environment `local`, its secret read from `secret_variable`."""
    return (
        f"{top}environments:\n"
        "  local:\n"
        f"    base_url: {sandbox.base_url}\n"
        f"    auth_url: {sandbox.auth_url}\n"
        "    realm: sandbox\n"
        "    expect_environment: sandbox\n"
        "    client_id: sandbox-client\n"
        f"    client_secret: {{env: {secret_variable}}}\n"
        f"{settings}"
    )


# ---- the write workload of the apply benchmarks: n creates of new schools and n updates of seeded ones


def existing_school_id(i: int) -> str:
    return f"00000000-0000-4000-8000-{i:012d}"


def existing_schools_seed(n: int) -> dict[str, Any]:
    """A sandbox seed with n schools the updates of `school_writes` change."""
    schools = [{"id": existing_school_id(i), "code": f"U{i}", "name": f"Existing {i}"} for i in range(n)]
    return {"institution-a": {"schools": schools}}


def school_writes(n: int, tag: str) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """n create bodies and n (id, update body) pairs; `tag` keeps codes unique across runs."""
    creates = [{"code": f"C{tag}-{i}", "name": f"Created {tag} {i}"} for i in range(n)]
    updates = [(existing_school_id(i), {"name": f"Updated {tag} {i}"}) for i in range(n)]
    return creates, updates


def school_writes_plan(n: int, tag: str) -> Plan:
    """The plan that sends exactly `school_writes(n, tag)`."""
    creates, updates = school_writes(n, tag)
    records = [record("creates", "school", c["code"], c, row=i + 2) for i, c in enumerate(creates)]
    records += [
        record("updates", "school", f"U{i}", payload, action=Action.UPDATE, live_id=rid, row=i + 2)
        for i, (rid, payload) in enumerate(updates)
    ]
    return make_plan(("schools", "school", records))
