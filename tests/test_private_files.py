"""Files with values to send or personal data are readable by their owner only, from the first byte."""

from __future__ import annotations

import stat

from loader.files.private import open_private, write_private_text


def test_a_new_file_is_created_owner_only(tmp_path):
    path = tmp_path / "plan.json"
    write_private_text(path, "{}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="utf-8") == "{}"


def test_an_existing_readable_file_is_made_owner_only_before_it_is_written(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old and longer content", encoding="utf-8")
    path.chmod(0o644)
    with open_private(path) as handle:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600  # before any byte of the new content
        handle.write(b"new")
    assert path.read_bytes() == b"new"
