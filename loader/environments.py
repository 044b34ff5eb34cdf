"""Resolve `--env` to a usable Environment; for the built-in `sandbox`, run the embedded service.

The built-in sandbox is a real HTTP server on loopback, started in-process for the duration of the
`with` block, with its data in `.loader/sandbox.sqlite3` (kept between runs) and seeded on first use
from `samples/sandbox-seed.json` when that file exists.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from loader.config import BUILTIN_SANDBOX, DEFAULT_TIMEOUT_S, Config, Environment, Secret
from loader.errors import ConfigError

SANDBOX_DATA = Path(".loader") / "sandbox.sqlite3"
SANDBOX_SEED = Path("samples") / "sandbox-seed.json"


@contextmanager
def open_environment(config: Config, env_name: str | None) -> Iterator[Environment]:
    """The environment `env_name` (default: `config.default_environment`), ready to use.

    Variables named by `{env: NAME}` are read here; a missing one is a ConfigError naming it.
    """
    name = env_name or config.default_environment
    spec = config.spec(name)
    if spec is not None:
        yield spec.resolve()
        return
    with _embedded_sandbox(config.root) as environment:
        yield environment


@contextmanager
def _embedded_sandbox(root: Path) -> Iterator[Environment]:
    # Imported here: only the built-in environment needs the server (and its web framework).
    from loader.sandbox.server import SandboxOptions, serve_in_thread

    data = root / SANDBOX_DATA
    try:
        data.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"cannot create {data.parent} for the built-in sandbox: {error.strerror or error}",
            hint="run loader from a writable project directory, or choose another environment with --env",
        ) from None
    seed = root / SANDBOX_SEED
    options = SandboxOptions(data=str(data), seed=seed if seed.is_file() else None, environment=BUILTIN_SANDBOX)
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
