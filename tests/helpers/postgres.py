"""A throwaway PostgreSQL cluster for the SQL reader's tests: initdb into a temporary folder, the
server listening only on a unix socket there (no TCP), stopped and removed at the end.

The server refuses to run as root; run as root (CI), the cluster belongs to the `postgres` user
that Debian's package creates, and its commands run through `runuser`. Where no cluster can start
the SQL tests are skipped, saying why; under CI=true they fail instead, since `.ci/run` installs
PostgreSQL: a skip there would hide SQL tests that never ran.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest
import sqlalchemy

SERVER_USER = "postgres"


def server_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda f: int(Path(f).parent.name), reverse=True)
    return next((Path(f) for f in folders if (Path(f) / "initdb").exists()), None)


def why_not() -> str | None:
    """Why no cluster can be started here, or None."""
    if server_binaries() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql (.ci/run does)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return "running as root and no `postgres` user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and no runuser to run the server as `postgres`"
    return None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str, ci: bool) -> NoReturn:
    """Skip the test needing a cluster, saying why none can start; fail it under CI."""
    if ci:
        pytest.fail(f"CI runs the SQL tests against PostgreSQL, and none can start here: {reason}")
    pytest.skip(reason)


@contextmanager
def required_cluster() -> Iterator[str]:
    """A cluster's URL, as `cluster`; where none can start, the test is skipped (failed under CI)."""
    reason = why_not()
    if reason is not None:
        unavailable(reason, in_ci())
    with cluster() as url:
        yield url


@contextmanager
def cluster() -> Iterator[str]:
    """Start a cluster; yield a SQLAlchemy URL of its `postgres` database for the user `loader`."""
    binaries = server_binaries()
    assert binaries is not None
    root = Path(tempfile.mkdtemp(prefix="loader-pg-"))
    as_server: list[str] = []
    if os.geteuid() == 0:
        account = pwd.getpwnam(SERVER_USER)
        os.chown(root, account.pw_uid, account.pw_gid)
        as_server = ["runuser", "-u", SERVER_USER, "--"]
    root.chmod(0o755)
    data, log = root / "data", root / "server.log"
    try:
        _run([*as_server, str(binaries / "initdb"), "-D", str(data), "-U", "loader", "--auth=trust",
              "-E", "UTF8", "--locale=C", "--no-sync"])
        options = f"-k {root} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
        _run([*as_server, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w", "start"])
        try:
            yield f"postgresql+psycopg://loader@/postgres?host={root}"
        finally:
            _run([*as_server, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])} failed:\n{done.stdout}\n{done.stderr}")


def run_sql(url: str, *statements: str) -> None:
    """Run `statements` on the cluster of `url` in one transaction (to make a test's tables)."""
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.begin() as db:
            for statement in statements:
                db.exec_driver_sql(statement)
    finally:
        engine.dispose()
