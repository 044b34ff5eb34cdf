"""The one JSON document a command prints with `--format json`, checked against
schemas/output.schema.json."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from loader.files.package_data import schema

OUTPUT_VALIDATOR = jsonschema.Draft202012Validator(schema("output.schema.json"))


def output_document(stdout: str) -> dict[str, Any]:
    """stdout as one JSON document (the whole of it), asserted valid against the output schema."""
    document: dict[str, Any] = json.loads(stdout)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in OUTPUT_VALIDATOR.iter_errors(document)]
    assert errors == []
    return document
