"""Every schema under schemas/ has its `$id` under one published base, versioned by the format of
the documents it describes (the output schema by `--format json`'s format number)."""

from __future__ import annotations

import json
from pathlib import Path

from loader.plan.plan_dict import PLAN_FORMAT_VERSION
from loader.report.machine import OUTPUT_FORMAT_VERSION

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
ID_BASE = "https://schemas.loader.dev/"
VERSIONS = {"output.schema.json": OUTPUT_FORMAT_VERSION, "plan.schema.json": PLAN_FORMAT_VERSION}


def test_every_schema_id_is_under_the_one_base_with_its_format_version() -> None:
    files = sorted(SCHEMAS.rglob("*.schema.json"))
    assert len(files) > 5
    for path in files:
        name = path.relative_to(SCHEMAS).as_posix()
        version = VERSIONS.get(name, 1)
        assert json.loads(path.read_text(encoding="utf-8"))["$id"] == f"{ID_BASE}v{version}/{name}", name


def test_the_output_schema_pins_the_format_number_the_documents_carry() -> None:
    schema = json.loads((SCHEMAS / "output.schema.json").read_text(encoding="utf-8"))
    assert schema["$defs"]["common"]["properties"]["format"] == {"const": OUTPUT_FORMAT_VERSION}
