"""A saved plan edited by hand with its seal left is refused on every read: `show` (read whole) and
`apply --plan` (read as sealed); a gzip plan is bounded before it is unpacked."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.report import small_plan

from loader.errors import PlanError
from loader.plan.plan_file import read_plan_json, write_plan_json
from loader.plan.plan_stream import open_saved_plan


def _payload_value(text: bytes) -> bytes:
    assert b'"Law"' in text
    return text.replace(b'"Law"', b'"Lax"', 1)


def _digest_field(text: bytes) -> bytes:
    at = text.index(b'"digest": "sha256:') + len(b'"digest": "sha256:')
    return text[:at] + (b"0" if text[at:at + 1] != b"0" else b"1") + text[at + 1:]


EDITS: dict[str, Callable[[bytes], bytes]] = {
    "a payload value": _payload_value, "the digest field": _digest_field}
READS: dict[str, Callable[[Path], object]] = {"show": read_plan_json, "apply --plan": open_saved_plan}


@pytest.mark.parametrize("read", READS, ids=list(READS))
@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
@pytest.mark.parametrize("name", ["plan.json", "plan.json.gz"])
def test_a_plan_edited_with_its_seal_left_is_refused_on_every_read(
    tmp_path: Path, edit: str, read: str, name: str
) -> None:
    path = tmp_path / name
    write_plan_json(small_plan(), path)
    READS[read](path)  # as written: read without a word
    text = path.read_bytes()
    plain = gzip.decompress(text) if name.endswith(".gz") else text
    edited = EDITS[edit](plain)
    path.write_bytes(gzip.compress(edited) if name.endswith(".gz") else edited)
    with pytest.raises(PlanError, match="changed after `loader plan` wrote it: its seal does not match"):
        READS[read](path)


def test_a_gzip_plan_is_refused_once_it_unpacks_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "plan.json.gz"
    with gzip.open(path, "wb") as packed:
        for _ in range(64):
            packed.write(b" " * (1 << 20))
    for read in (read_plan_json, open_saved_plan):
        with pytest.raises(PlanError, match="unpacks to more than the 1,048,576 bytes allowed"):
            read(path, limit=1 << 20)
