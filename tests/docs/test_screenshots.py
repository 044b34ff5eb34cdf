"""docs/screenshots.py takes every picture the tutorial shows, a labelled placeholder where a tool is
missing; docs/hooks.py tells when they must be taken again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.docs_scripts import DOCS, docs_script

TUTORIAL = DOCS / "tutorial.md"


def test_the_tutorial_shows_the_pictures_the_script_takes() -> None:
    shown = {line.split("(screenshots/")[1].split(")")[0] for line in TUTORIAL.read_text(encoding="utf-8").splitlines()
             if line.startswith("![") and "(screenshots/" in line}
    assert shown == set(docs_script("screenshots").PICTURES)


def test_without_chromium_and_libreoffice_every_picture_is_written_and_says_what_was_missing(tmp_path: Path) -> None:
    python = Path(sys.executable).parent
    env = {**os.environ, "CHROMIUM": str(tmp_path / "no-chromium"), "PATH": f"{python}{os.pathsep}/nonexistent"}
    done = subprocess.run([sys.executable, str(DOCS / "screenshots.py"), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    for name in docs_script("screenshots").PICTURES:
        assert (out / name).is_file(), name
    assert "Chromium is not installed" in (out / "html-phone.svg").read_text(encoding="utf-8")
    assert "LibreOffice (soffice) is not installed" in (out / "review.svg").read_text(encoding="utf-8")
    terminal = (out / "terminal-80.txt").read_text(encoding="utf-8")
    assert "schools" in terminal and max(map(len, terminal.splitlines())) <= 80


def test_pictures_missing_or_older_than_the_code_are_stale(tmp_path: Path) -> None:
    hooks = docs_script("hooks")
    assert hooks.stale(tmp_path)  # none taken yet
    for name in docs_script("screenshots").PICTURES:
        (tmp_path / name).write_text("<svg/>", encoding="utf-8")
    assert not hooks.stale(tmp_path)  # taken after every input's last change
    os.utime(tmp_path / "review.svg", (0, 0))
    assert hooks.stale(tmp_path)  # one older than the code
