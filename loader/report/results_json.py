"""results.json: every record's outcome, for scripts and CI (written with mode 0600: keys may be personal)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loader.apply.results import OUTCOMES, RecordResult, Results
from loader.files.safe_write import write_text

RESULTS_FORMAT_VERSION = 1


def _record(result: RecordResult) -> dict[str, Any]:
    return {
        "ref": result.ref,
        "block": result.block,
        "entity": result.entity,
        "key": list(result.key),
        "outcome": result.outcome.value,
        "id": result.id,
        "fields": list(result.fields),
        "status": result.status,
        "message": result.message,
        "attempts": result.attempts,
        "adopted": result.adopted,
        "record_status": result.record_status,
        "source": result.source,
        "row": result.row,
        "blocked": result.blocked,
    }


def results_to_dict(results: Results) -> dict[str, Any]:
    counts = results.counts()
    return {
        "format": RESULTS_FORMAT_VERSION,
        "environment": results.environment,
        "env_name": results.env_name,
        "started_at": results.started_at,
        "finished_at": results.finished_at,
        "ok": results.ok,
        "interrupted": results.interrupted,
        "refused": results.refused,
        "totals": {**{o.value: counts.get(o, 0) for o in OUTCOMES}, "blocked": len(results.blocked())},
        "blocks": [
            {"name": b.name, "entity": b.entity, **{o.value: b.count(o) for o in OUTCOMES}, "blocked": b.blocked}
            for b in results.blocks()
        ],
        "requests": dict(results.request_counts),
        "records": [_record(r) for r in results.records],
    }


def write_results_json(results: Results, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results_to_dict(results), indent=2, ensure_ascii=False, default=str) + "\n"
    write_text(path, text)
