"""`loader completion`: the scripts complete commands and options in a real shell."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loader.cli import COMMANDS

BASH = shutil.which("bash")


def _script(shell: str) -> str:
    done = subprocess.run([sys.executable, "-m", "loader", "completion", shell], capture_output=True, text=True,
                          check=True, timeout=60)
    return done.stdout


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_completes_commands_and_each_commands_options(tmp_path: Path) -> None:
    script = tmp_path / "loader.bash"
    script.write_text(_script("bash"), encoding="utf-8")
    probe = f"""source {script}
complete_words() {{
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _shtab_loader loader "${{@: -1}}" "${{@: -2:1}}"; echo "${{COMPREPLY[@]}}"
}}
complete_words loader pl
complete_words loader plan --det
complete_words loader completion ''
"""
    done = subprocess.run([BASH or "bash", "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "plan"
    assert lines[1] == "--detailed-exitcode"
    assert set(lines[2].split()) == {"bash", "zsh", "fish"}


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_every_command_is_in_the_script(shell: str) -> None:
    script = _script(shell)
    for command in COMMANDS:
        assert command in script
    assert "expect-digest" in script and "detailed-exitcode" in script  # fish names options without dashes
