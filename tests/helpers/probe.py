"""Hostile input run through the real `loader` command in a child process, with its wall time and
peak memory (the child's own rusage, from wait4), so a test can hold every probe to the bounds:
no traceback (exit 3), no native crash, no hang past 30 s, no more than 1.5 GB."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SECONDS = 30.0
PEAK_BYTES = 1536 * 1024 * 1024


@dataclass(frozen=True)
class Probe:
    exit_code: int  # negative: killed by that signal
    stderr: str
    stdout: str
    seconds: float
    peak_bytes: int

    def assert_refused_cleanly(self, *, exit_code: int = 1) -> None:
        """One `loader: error:`, the expected exit code, within the time and memory bounds."""
        assert self.exit_code == exit_code, self.stderr[-2000:]
        assert "Traceback" not in self.stderr and "this is a bug" not in self.stderr, self.stderr[-2000:]
        assert "loader: error:" in self.stderr, self.stderr[-2000:]
        assert self.seconds < SECONDS, f"{self.seconds:.1f} s"
        assert self.peak_bytes < PEAK_BYTES, f"{self.peak_bytes / 2**20:.0f} MiB"


def run_loader(args: list[str], cwd: Path, *, timeout: float = SECONDS, env: dict[str, str] | None = None) -> Probe:
    """`python -m loader ARGS` in `cwd` (with `env` added to a clean environment); killed (and
    reported as such) after `timeout` seconds."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LOADER_")}, **(env or {})}
    env["PYTHONFAULTHANDLER"] = "1"
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, "-m", "loader", *args], cwd=cwd, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.05)
        seconds = time.monotonic() - started
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
        out.seek(0)
        stdout = out.read(1 << 20).decode("utf-8", "replace")
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return Probe(child.returncode, stderr, stdout, seconds, peak)
