"""The actions of `loader history` (loader/commands/history.py parses; these print and act).

Library code lives in loader/history/: listing (the applies, one record's loads), baseline (its
recording; loader/plan/baseline.py works out what it records), maintenance (reset), store.rekey,
opening (where a history is and its key).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from loader import event_loop
from loader.actor import acting
from loader.commands.history_identity import RecordIdentity, ReferenceKeys, editor_names, record_identity
from loader.console import ask_yes
from loader.errors import EXIT_OK, ConfigError, LoaderError, UsageError
from loader.report import machine
from loader.report.view import clean
from loader.words import plural

if TYPE_CHECKING:
    from loader.commands.history import HistoryRequest
    from loader.config import Config
    from loader.history.baseline import BlockBaseline
    from loader.history.listing import ApplyRow, RecordLoads
    from loader.history.store import History
    from loader.plan.run import PlanRun


def _env_name(request: HistoryRequest, config: Config) -> str:
    return config.default_environment if request.env is None else request.env


def _history_off(config: Config) -> ConfigError:
    return ConfigError("the history is off in loader.yaml (`history: false`)",
                       where=str(config.path) if config.path else None,
                       hint="remove `history: false` (or write `history: {path: history}`) to keep one")


def _open(request: HistoryRequest, config: Config, personal: Sequence[str] = ()) -> History:
    from loader.history.opening import open_history

    history = open_history(config, _env_name(request, config), personal)
    if history is None:
        raise _history_off(config)
    return history


def show_applies(request: HistoryRequest, config: Config) -> None:
    from loader.history.listing import applies

    history = _open(request, config)
    rows = applies(history)
    head = history.head
    if request.output == "json":
        head_json = {"lineage": head.lineage if history.started else None, "serial": head.serial,
                     "last_apply": head.last_apply}
        print(machine.dumps(machine.history_document(_env_name(request, config), str(history.folder),
                                                     history.started, head_json, [row.as_json() for row in rows])))
        return
    name = _env_name(request, config)
    if not history.started:
        print(f"no history of {name} yet ({history.folder}): it starts with the first apply that writes "
              "something, or with `loader history baseline`")
        return
    print(f"history of {name} ({history.folder}): lineage {head.lineage}, serial {head.serial}, "
          f"last apply {head.last_apply or '-'}; {len(rows)} journals, newest first")
    for row in rows:
        print(clean(_apply_line(row)))  # the journals' headers: text anyone can edit


def _apply_line(row: ApplyRow) -> str:
    counts = ", ".join(f"{kind} {count}" for kind, count in row.counts.items()) or "nothing"
    state = "" if row.finished else "  (interrupted; its journal was folded in)"
    what = "baseline" if row.kind == "baseline" else f"plan {row.plan_digest or '-'}"
    return f"  {row.apply_id}  {row.time}  by {row.by or '-'}  {what}  {counts}{state}"


def show_record(request: HistoryRequest, config: Config) -> int:
    from loader.history.listing import record_loads

    assert request.entity is not None
    key = _record_key(request, config)
    history = _open(request, config)
    loads = _with_live(request, config, record_loads(history, request.entity, key))
    identity = record_identity(history, request.entity, loads.key or key, loads.personal)
    if request.env is not None:  # offline the editors are ids; with --env, named as `report: {editors}` says
        identity = identity.named(editor_names(config, request.env, identity.editor_ids()))
    given = clean(" ".join(f"{name}={value}" for name, value in request.key))
    if request.output == "json":
        print(machine.dumps(_record_json(request, config, loads, identity)))
        return EXIT_OK
    if not loads.loads and not loads.in_snapshot:
        print(f"the history of {_env_name(request, config)} holds no load of {clean(request.entity)} {given}")
        return EXIT_OK
    note = " (personal fields: only whether they changed is kept)" if loads.personal else ""
    # Keys, values, owners and who applied come from sheets and journals anyone can edit: every
    # control character is shown escaped, never sent to the terminal (`loader.report.view.clean`).
    print(f"{clean(request.entity)} {given}: {plural(len(loads.loads), 'load')}{note}")
    keys = ReferenceKeys(history, config.profile.entity(request.entity))
    if identity.former_keys:
        print(clean(f"  former keys: {', '.join(identity.former_keys)}"))
    for load in loads.loads:
        print(clean(f"  {load.apply.apply_id}  {load.apply.time}  by {load.apply.by or '-'}  {load.kind}"))
        for field in load.fields:
            print(clean(f"    {field.field}: {_field_text(field, loads.personal, load.kind, keys)}  ({field.owner})"))
    for edit in identity.edits:
        print(f"  {edit.text()}")
    return EXIT_OK


def _with_live(request: HistoryRequest, config: Config, loads: RecordLoads) -> RecordLoads:
    """The loads with the values after that only live can tell (still what the loader left);
    unchanged when the record cannot be read (said on stderr)."""
    from loader.history.comparable import comparable
    from loader.history.listing import with_live

    if not loads.unknown_after or loads.live_id is None:
        return loads
    from loader.environments import open_environment

    entity = config.profile.entity(loads.entity)
    try:
        with open_environment(config, request.env) as env:
            live = event_loop.run(_fetch_one(config, env, loads.entity, loads.live_id))
    except LoaderError as error:
        print(f"note: the values after are kept only as digests; reading the record live failed: {error.message}",
              file=sys.stderr)
        return loads
    if live is None:
        return loads
    return with_live(loads, live, lambda name, value: comparable(name, value, entity))


async def _fetch_one(config: Config, env: Any, entity: str, live_id: str) -> Mapping[str, Any] | None:
    from loader.api.client import ApiClient

    async with ApiClient(env, config.profile, concurrency=1) as client:
        return await client.get(entity, live_id)


def _field_text(field: Any, personal: bool, kind: str, keys: ReferenceKeys) -> str:
    def shown(value: Any) -> str:  # a reference by its target's key
        return keys.shown(field.field, value) or json.dumps(value, ensure_ascii=False, default=str)

    if kind == "confirm":
        return "recorded as loaded" + (f" {shown(field.after)}" if field.known_after and not personal else "")
    if personal:
        return "changed" if field.changed else "unchanged"
    after = shown(field.after) if field.known_after else "(kept only as a digest)"
    after += " (live now)" if field.live_now else ""
    return f"{shown(field.before)} → {after}" if field.changed else f"unchanged {after}"


def _record_key(request: HistoryRequest, config: Config) -> tuple[Any, ...]:
    assert request.entity is not None
    profile_key = config.profile.entity(request.entity).key
    given = dict(request.key)
    if len(given) != len(request.key):
        raise UsageError("--key names a field twice")
    if set(given) == set(profile_key):
        return tuple(given[name] for name in profile_key)
    return tuple(value for _, value in request.key)  # a mapping's own key, in the order given


def _record_json(request: HistoryRequest, config: Config, loads: RecordLoads,
                 identity: RecordIdentity) -> dict[str, Any]:
    assert request.entity is not None
    return machine.history_record_document(
        _env_name(request, config), request.entity, dict(request.key), loads.personal, loads.in_snapshot,
        [{**load.apply.as_json(), "entry": load.kind, "fields": [f.as_json(loads.personal) for f in load.fields]}
         for load in loads.loads], list(identity.former_keys), [edit.as_json() for edit in identity.edits])


def reset(request: HistoryRequest, config: Config) -> int:
    from loader.history.maintenance import history_files, remove_history
    from loader.history.opening import history_place

    place = history_place(config, _env_name(request, config))
    if place is None:
        raise _history_off(config)
    files = history_files(place[0])
    if files.empty:
        print(f"no history to reset in {files.folder}")
        return EXIT_OK
    records = ", ".join(f"{entity} {count}" for entity, count in sorted(files.records.items())) or "none"
    print(f"reset removes the history of {_env_name(request, config)} in {files.folder}: lineage {files.lineage} "
          f"(serial {files.serial}), {files.journals} journals, records: {records}", file=sys.stderr)
    _confirm(request, "Remove this history?", "nothing was removed")
    remove_history(files.folder)
    print(f"removed the history in {files.folder}; the next apply starts a new one "
          "(commit the removal; `loader history baseline` records the live state now)")
    return EXIT_OK


def rekey(request: HistoryRequest, config: Config) -> int:
    from loader.history.opening import history_place
    from loader.history.store import rekey as move_to
    from loader.redaction import register_secret

    name = _env_name(request, config)
    if config.is_builtin_sandbox(name):
        raise ConfigError("the built-in sandbox's history has a fixed key of its own: it cannot be rekeyed",
                          hint="to start it afresh, delete .loader (the sandbox's data and history)")
    place = history_place(config, name)
    if place is None:
        raise _history_off(config)
    folder, old_key, variable = place
    assert request.new_key_env is not None
    new = os.environ.get(request.new_key_env)
    if not new:
        raise ConfigError(f"the new key's variable {request.new_key_env} is not set",
                          hint=f"set {request.new_key_env} to the new history key (a long random text)")
    register_secret(new)
    head = move_to(folder, old_key, new.encode())
    target = variable or "the variable `history: {key: {env: NAME}}` names"
    print(f"the history in {folder} now opens with the key in {request.new_key_env} (fingerprint "
          f"{head.key_fingerprint}); put that key in {target} wherever loader runs, and commit {folder / 'head.json'}")
    return EXIT_OK


def _confirm(request: HistoryRequest, question: str, nothing_done: str) -> None:
    if request.yes:
        return
    answer = ask_yes(question)
    if answer is None:
        raise LoaderError(f"not asking for confirmation: stdin is not a terminal; {nothing_done}",
                          hint="pass --yes to go ahead without asking")
    if not answer:
        raise LoaderError(f"the answer was not yes; {nothing_done}")


def baseline(request: HistoryRequest, config: Config) -> int:
    from loader.environments import open_environment
    from loader.history.baseline import record_baseline
    from loader.history.personal import personal_entities
    from loader.history.shape_store import record_shapes, shapes_path
    from loader.plan.baseline import baseline_of
    from loader.source.drift import shapes_of
    from loader.source.sources import load_mappings

    personal = personal_entities(load_mappings(request.mappings, config.profile), config.profile)
    history = _open(request, config, sorted(personal))  # a missing or wrong key: refused before planning
    with open_environment(config, request.env) as env:
        planned, live = event_loop.run(_plan_and_fetch(request, config, env))
    blocks = baseline_of(planned.plan, planned.sources, live, config.profile)
    _describe_baseline(request, config, history, blocks)
    if not any(block.records for block in blocks):
        print("nothing to record: no record of these mappings is live yet")
        return EXIT_OK
    _confirm(request, "Record this baseline?", "nothing was recorded")
    recorded = record_baseline(history, blocks, _env_name(request, config), by=request.by or who())
    record_shapes(shapes_path(config, _env_name(request, config)), shapes_of(planned.sources.blocks))
    print(f"recorded {plural(recorded, 'record')} in {history.folder}; commit it (git add {history.folder})")
    return EXIT_OK


async def _plan_and_fetch(request: HistoryRequest, config: Config,
                          env: Any) -> tuple[PlanRun, Mapping[str, Sequence[Mapping[str, Any]]]]:
    from loader.api.client import ApiClient
    from loader.plan.run import run_plan

    async with ApiClient(env, config.profile, concurrency=config.concurrency) as client:
        planned = await run_plan(list(request.mappings), config=config, env=env, client=client, progress=False)
        entities = sorted({b.entity for b in planned.plan.blocks if any(r.live_id for r in b.records)})
        return planned, await client.fetch_collections(entities)


def _describe_baseline(request: HistoryRequest, config: Config, history: History,
                       blocks: Sequence[BlockBaseline]) -> None:
    out = sys.stderr
    print(f"baseline of {_env_name(request, config)} ({history.folder}): records the live value of every field "
          "these mappings manage, for every record they match, as if the loader had last written it", file=out)
    for block in blocks:
        left = f" ({block.left_out} left out: blocked by errors)" if block.left_out else ""
        print(f"  {block.mapping_file} › {block.block}: {plural(len(block.records), f'{block.entity} record')}, "
              f"{plural(block.fields, 'field')}{left}", file=out)
    total = sum(len(b.records) for b in blocks)
    print(f"  total: {plural(total, 'record')}, {plural(sum(b.fields for b in blocks), 'field')}", file=out)
    if history.started and history.snapshot.count():
        print(f"note: the history already holds {plural(history.snapshot.count(), 'record')}; the baseline replaces "
              "the last-loaded values of the fields it records (a platform edit not yet loaded stops being one)",
              file=out)


def who() -> str | None:
    """Who records a baseline: the CI actor, else git's user name, else the OS user."""
    return acting(None, os.environ)
