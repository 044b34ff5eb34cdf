"""Resolve `--env` to a usable Environment; for the built-in `sandbox`, run the embedded service.

The built-in sandbox is a real HTTP server on loopback, started in-process for the duration of the
`with` block, with its data in `.loader/sandbox.sqlite3` (kept between runs), unless loader.yaml
names its files (`sandbox: {data: FILE, seed: FILE}`, relative to loader.yaml).

Where it is seeded from on first use: a project of one's own (a folder with a loader.yaml) starts
empty, seeded only from a seed file loader.yaml names; a folder without loader.yaml (the loader's
own checkout, where the Quick start runs) from `samples/sandbox-seed.json` when that file exists,
so the sample mappings plan against "last cycle's" sample records. When it would start with no
records, a note on stderr says which data file it uses and that it is empty.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from loader.config import BUILTIN_SANDBOX, DEFAULT_TIMEOUT_S, Config, Environment, SandboxFiles, Secret, check_named
from loader.errors import ConfigError

SANDBOX_DATA = Path(".loader") / "sandbox.sqlite3"
SANDBOX_SEED = Path("samples") / "sandbox-seed.json"


@contextmanager
def open_environment(config: Config, env_name: str | None) -> Iterator[Environment]:
    """The environment `env_name` (default: `config.default_environment`), ready to use.

    Variables named by `{env: NAME}` are read here; a missing one is a ConfigError naming it. An
    empty `env_name` is a UsageError (it names nothing), never the default.
    """
    check_named(env_name, None)
    name = config.default_environment if env_name is None else env_name
    spec = config.spec(name)
    if spec is not None:
        yield spec.resolve()
        return
    with _embedded_sandbox(config) as environment:
        yield environment


def sandbox_files(config: Config) -> tuple[Path, Path | None]:
    """The built-in sandbox's data file, and its seed file (None when there is none to use).

    A seed loader.yaml names must exist (ConfigError). Without loader.yaml, the default seed is used
    when it is there; a project's loader.yaml that names no seed means an empty sandbox.
    """
    named = config.sandbox or SandboxFiles()
    data = named.data or config.root / SANDBOX_DATA
    if named.seed is not None:
        if not named.seed.is_file():
            raise ConfigError(
                f"the sandbox seed file {named.seed} is not there",
                where=str(config.path) if config.path else None,
                hint="fix `sandbox: {seed: ...}` in loader.yaml (relative to loader.yaml), or remove it",
            )
        return data, named.seed
    seed = default_seed(config)
    return data, seed if seed is not None and seed.is_file() else None


def default_seed(config: Config) -> Path | None:
    """The seed a sandbox is given unless loader.yaml names one: the sample seed in a folder without
    loader.yaml (the checkout), none in a project of one's own (whose records are not the samples')."""
    return config.root / SANDBOX_SEED if config.path is None else None


@contextmanager
def _embedded_sandbox(config: Config) -> Iterator[Environment]:
    # Imported here: only the built-in environment needs the server (and its web framework).
    from loader.sandbox.server import SandboxOptions, serve_in_thread

    data, seed = sandbox_files(config)
    try:
        data.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"cannot create {data.parent} for the built-in sandbox: {error.strerror or error}",
            hint="run loader from a writable project directory, or choose another environment with --env",
        ) from None
    if seed is None and _holds_no_records(data):
        print(_empty_note(config, data), file=sys.stderr)
    options = SandboxOptions(data=str(data), seed=seed, environment=BUILTIN_SANDBOX)
    with ExitStack() as stack:
        try:
            server = stack.enter_context(serve_in_thread(options))
        except RuntimeError as error:
            raise ConfigError(
                f"the built-in sandbox did not start: {error}",
                where=str(data),
                hint=f"delete {data} to start from the seed again",
            ) from None
        yield sandbox_environment(server, is_builtin_sandbox=True)


def _empty_note(config: Config, data: Path) -> str:
    if config.path is not None:
        return (f"note: the built-in sandbox uses {data}, which is empty: a project's sandbox starts with no "
                "records (loader.yaml can name a seed file: sandbox: {seed: FILE})")
    return (f"note: the built-in sandbox uses {data}, which is empty (no seed: {config.root / SANDBOX_SEED} "
            "is not there); to start a project of your own, add a loader.yaml to this folder (it may be empty), "
            "or name the sandbox's files in one (sandbox: {data: FILE, seed: FILE})")


def _holds_no_records(data: Path) -> bool:
    """True for a data file that is missing or holds no records but the defaults every sandbox has."""
    from loader.sandbox.store import holds_only_defaults

    return not data.is_file() or holds_only_defaults(data)


def sandbox_environment(server: Any, *, name: str = BUILTIN_SANDBOX, **changes: Any) -> Environment:
    """An Environment for a running sandbox (`loader.sandbox.server.RunningSandbox`): the embedded
    one, or one a test or benchmark started; `changes` override any other Environment field."""
    values: dict[str, Any] = {
        "name": name,
        "base_url": server.base_url,
        "auth_url": server.auth_url,
        "realm": server.realm,
        "expect_environment": BUILTIN_SANDBOX,
        "client_id": server.client_id,
        "client_secret": Secret(server.client_secret),
        "timeout": DEFAULT_TIMEOUT_S,
    }
    values.update(changes)
    return Environment(**values)
