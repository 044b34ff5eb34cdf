"""Files with values to send or personal data are readable by their owner only, from the first byte."""

from __future__ import annotations

import os
import stat
import tempfile

import pytest

from loader.cli import write_crash_log
from loader.files.private import create_private, open_private, write_private_text


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


def test_a_crash_log_is_owner_only_whatever_the_umask_and_through_a_symlinked_temp_directory(tmp_path, monkeypatch):
    real = tmp_path / "real-tmp"
    real.mkdir()
    link = tmp_path / "tmp-link"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.setattr(tempfile, "tempdir", str(link))
    old = os.umask(0o277)  # open(..., 0o600) alone would make it 0400, mkdtemp's folder 0500
    try:
        log = write_crash_log(RuntimeError("boom"))
    finally:
        os.umask(old)
    assert log.parent.parent == real  # the real path is reported, not the link's
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert "RuntimeError" in log.read_text(encoding="utf-8")


def test_create_private_never_opens_an_existing_file_nor_follows_a_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    (tmp_path / "planted").symlink_to(victim)
    for path in (victim, tmp_path / "planted"):
        with pytest.raises(OSError):
            create_private(path)
    assert victim.read_text(encoding="utf-8") == "precious"
