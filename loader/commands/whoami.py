"""`loader whoami [--env NAME]`: which service, which API version, how long a token lives.

Gets a token and makes one read (the first page of the first collection in the profile's creation
order). Prints the environment the service reports, the API version, the token lifetime and the
addresses; never the token or the secret. The service has no "who am I" endpoint: the service user
is shown only when the token itself names it (a JWT's `preferred_username`, as Keycloak issues).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from loader import event_loop
from loader.api.client import ApiClient
from loader.config import Config, Environment
from loader.environments import open_environment


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", metavar="NAME", help="environment of loader.yaml (default: default_environment)")


@dataclass(frozen=True)
class WhoamiRequest:
    env: str | None


def request_from(args: argparse.Namespace) -> WhoamiRequest:
    return WhoamiRequest(getattr(args, "env", None))


def run(request: WhoamiRequest, config: Config) -> int:
    with open_environment(config, request.env) as env:
        lines = event_loop.run(_whoami(config, env))
    sys.stdout.write("".join(f"{label + ':':<20}{value}\n" for label, value in lines))
    return 0


async def _whoami(config: Config, env: Environment) -> list[tuple[str, str]]:
    entity = next(name for name in config.profile.creation_order if name in config.profile.entities)
    async with ApiClient(env, config.profile, concurrency=1) as client:
        page = await client.first_page(entity)
        lifetime = client.token_lifetime
        lines = [
            ("environment", client.environment or "(not reported)"),
            ("expected", env.expect_environment or "(not checked: no expect_environment)"),
            ("api version", client.api_version or "(not reported)"),
            ("token lifetime", f"{lifetime:g} s" if lifetime is not None else "(expires_in not given)"),
            ("service user", client.service_user or "(not visible through the API)"),
            ("client id", env.client_id),
            (f"{entity} records", str(page.total) if page.total is not None else str(len(page.records))),
            ("base url", env.base_url),
            ("auth url", f"{env.auth_url} (realm {env.realm})"),
        ]
        if env.is_builtin_sandbox:
            lines.append(("note", "built-in sandbox (data in .loader/sandbox.sqlite3)"))
        return lines
