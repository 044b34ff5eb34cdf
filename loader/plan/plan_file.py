"""plan.json: everything `loader apply --plan` needs, described by schemas/plan.schema.json.

Written with mode 0600 from the start (os.open), because payloads keep the values to send,
PII included; only `changes` (what reviewers read) are masked. Deterministic apart from the one
`created_at` line.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

from loader.errors import PlanError
from loader.files.inputs import decode_utf8, read_regular_file
from loader.files.package_data import schema as package_schema
from loader.files.private import write_private_text
from loader.plan.digest import shown_digest
from loader.plan.masking import masked_plan
from loader.plan.model import Plan, plan_from_dict, plan_to_dict

MAX_PLAN_BYTES = 1024 * 1024 * 1024  # plans of a million records stay well below


@cache
def plan_schema() -> dict[str, Any]:
    return package_schema("plan.schema.json")


def plan_json_text(plan: Plan) -> str:
    """The plan.json text: plan_to_dict of the plan with PII masked in `changes`, and its digest."""
    data = plan_to_dict(masked_plan(plan))
    data["digest"] = shown_digest(plan)  # computed before masking: every value counts
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_plan_json(plan: Plan, path: Path) -> None:
    """Write plan.json readable by its owner only (0600), replacing any file there."""
    write_private_text(path, plan_json_text(plan))


def validation_errors(data: Any) -> list[str]:
    """Every way `data` breaks plan.schema.json, as `path: message` lines."""
    validator = jsonschema.Draft202012Validator(plan_schema())
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    ]


def read_plan_json(path: Path) -> Plan:
    """A plan.json checked against its schema; PlanError naming every problem otherwise."""
    hint = "write it again with `loader plan ... --out plan.json`; do not edit it by hand"
    try:
        data = json.loads(decode_utf8(read_regular_file(path, limit=MAX_PLAN_BYTES)))
    except FileNotFoundError:
        raise PlanError("the plan file is not there", where=str(path), hint=hint) from None
    except RecursionError:
        raise PlanError("the plan file cannot be read: it is nested too deeply", where=str(path), hint=hint) from None
    except (OSError, ValueError) as exc:
        raise PlanError(f"the plan file cannot be read: {exc}", where=str(path), hint=hint) from None
    problems = validation_errors(data)
    if problems:
        listed = "\n  ".join(problems[:20])
        raise PlanError(f"the plan file is not a valid plan:\n  {listed}", where=str(path), hint=hint)
    return plan_from_dict(data)
