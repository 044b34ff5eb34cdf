"""loader.yaml: environments, the default one, profile overrides; secrets only from the environment.

`load_config(path)` validates the file (schemas/loader.schema.json) and reports every problem at its
`file:line:col`. Environment variables named by `{env: NAME}` are read only when an environment is
used (`Config.environment(name)`), so a missing variable of an unused environment is no error.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from loader.errors import ConfigError, UsageError
from loader.files.package_data import schema as package_schema
from loader.profile import Profile, load_profile
from loader.project import bare_root, find_config
from loader.redaction import register_secret
from loader.yaml_files import MarkedDocument, YamlSyntaxError, load_marked, read_yaml_text

log = logging.getLogger("loader.config")
BUILTIN_SANDBOX = "sandbox"
DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 256  # for plan and apply, on the command line and in loader.yaml
DEFAULT_TIMEOUT_S = 30.0
SECRET_HINT = "write client_secret: {env: LOADER_TEST_CLIENT_SECRET} and export that variable"


class Secret:
    """A value that must never be shown: repr and str hide it; `reveal()` is the only way in."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value
        register_secret(value)  # from now on no output boundary lets it through

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


@dataclass(frozen=True)
class RetrySettings:
    """Retry bounds for one request: attempts, exponential backoff from `wait_initial` to `wait_max`."""

    attempts: int = 6
    wait_initial: float = 0.2
    wait_max: float = 10.0
    wait_jitter: float = 0.5
    timeout: float = 120.0


@dataclass(frozen=True)
class EnvRef:
    """`{env: NAME}` in loader.yaml: the value is read from that variable when needed."""

    name: str

    def read(self, what: str, where: str | None) -> str:
        value = os.environ.get(self.name)
        if not value:
            raise ConfigError(
                f"environment variable {self.name} (for {what}) is not set",
                where=where,
                hint=f"export {self.name}=... (ask the platform operator for the value)",
            )
        return value


@dataclass(frozen=True)
class Environment:
    """A resolved environment: where the service is and how to authenticate. Never shows the secret."""

    name: str
    base_url: str
    auth_url: str
    realm: str
    expect_environment: str | None
    client_id: str
    client_secret: Secret = field(repr=False)
    ca_bundle: Path | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    retry: RetrySettings = RetrySettings()
    is_builtin_sandbox: bool = False
    service_user_ids: tuple[str, ...] = ()  # the loader's own service users, besides those learned


@dataclass(frozen=True)
class EnvironmentSpec:
    """An environment as loader.yaml declares it; variables not read yet."""

    name: str
    base_url: str
    auth_url: str
    realm: str
    expect_environment: str | None
    client_id: str | EnvRef
    client_secret: EnvRef
    ca_bundle: Path | None
    timeout: float
    retry: RetrySettings
    where: str | None
    service_user_ids: tuple[str, ...] = ()

    def resolve(self) -> Environment:
        client_id = (
            self.client_id.read("client_id", self.where) if isinstance(self.client_id, EnvRef) else self.client_id
        )
        return Environment(
            name=self.name,
            base_url=self.base_url,
            auth_url=self.auth_url,
            realm=self.realm,
            expect_environment=self.expect_environment,
            client_id=client_id,
            client_secret=Secret(self.client_secret.read("client_secret", self.where)),
            ca_bundle=self.ca_bundle,
            timeout=self.timeout,
            retry=self.retry,
            service_user_ids=self.service_user_ids,
        )


@dataclass(frozen=True)
class SandboxFiles:
    """The built-in sandbox's files as loader.yaml names them (`sandbox: {data:, seed:}`), resolved
    against its folder; None for a file not named (the default is used)."""

    data: Path | None = None
    seed: Path | None = None


@dataclass(frozen=True)
class HistorySettings:
    """loader.yaml's `history:` when on: the folder (one sub-folder per environment, relative to
    loader.yaml) and the name of the variable holding the history key (None: no key named)."""

    path: str = "history"
    key_env: str | None = None

    def as_setting(self) -> dict[str, Any]:
        """The plain value loader.yaml gave (what loader.history.location reads)."""
        return {"path": self.path, **({"key": {"env": self.key_env}} if self.key_env else {})}


@dataclass(frozen=True)
class Config:
    """The project configuration. `root` is where loader.yaml lives (else the working directory)."""

    path: Path | None
    root: Path
    default_environment: str
    environments: Mapping[str, EnvironmentSpec]
    profile: Profile
    concurrency: int = DEFAULT_CONCURRENCY
    sandbox: SandboxFiles | None = None  # loader.yaml `sandbox:`; None: the defaults under `root`
    history: HistorySettings | None = HistorySettings()  # None: `history: false`
    editors: str = "name"  # `report: {editors: name | email | id}`: how reports name who changed a record

    def environment_names(self) -> list[str]:
        names = set(self.environments) | {BUILTIN_SANDBOX}
        return sorted(names)

    def is_builtin_sandbox(self, name: str) -> bool:
        return name == BUILTIN_SANDBOX and name not in self.environments

    def spec(self, name: str | None) -> EnvironmentSpec | None:
        """The declared environment `name` (default when None); None for the built-in sandbox."""
        name = name or self.default_environment
        if self.is_builtin_sandbox(name):
            return None
        try:
            return self.environments[name]
        except KeyError:
            raise ConfigError(
                f"unknown environment {name!r}",
                where=str(self.path) if self.path else None,
                hint=f"use one of: {', '.join(self.environment_names())}",
            ) from None


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: str, what: str, where: str | None) -> str:
    """The URL without a trailing slash; https required unless the host is loopback."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        # The URL itself is not repeated: it holds a credential, and errors reach terminals and logs.
        raise ConfigError(
            f"{what} must not hold a user name or password",
            where=where,
            hint="remove the `user:password@` part; credentials come from client_id / client_secret",
        )
    # The URL is never repeated whole (a secret pasted into the wrong setting must not be echoed):
    # only its host, which the user needs to see.
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{what} is not an http(s) address", where=where, hint="e.g. https://host/institution")
    if parts.scheme != "https" and not is_loopback_host(parts.hostname):
        raise ConfigError(
            f"{what} must use https:// (host {parts.hostname})",
            where=where,
            hint="plain http:// is allowed only for loopback hosts (127.0.0.1, ::1, localhost)",
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"{what} must not carry a query (?...) or fragment (#...)", where=where)
    return url.rstrip("/")


def check_named(env: str | None, config: str | None) -> None:
    """`--env ""` or `--config ""` names nothing: a usage error, never the default in its place."""
    for flag, value, what in (("--env", env, "an environment of loader.yaml"), ("--config", config, "a file")):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} is empty", hint=f"give {what}, or leave {flag} out to use the default")


def load_config(path: Path | None) -> Config:
    """The configuration from `path`, else from the project's loader.yaml (`LOADER_CONFIG`, or the
    nearest one from the working directory up to the repository's root: `loader.project`), else
    only the built-in sandbox, its state under the project's root."""
    if path is None:
        path = find_config()
        if path is None:
            root = bare_root()
            log.info("configuration: no loader.yaml from %s up; the built-in sandbox, state under %s", Path.cwd(), root)
            return Config(None, root, BUILTIN_SANDBOX, {}, load_profile())
    path = Path(path)
    log.info("configuration: %s", path)
    try:
        text = read_yaml_text(path, str(path))
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}", where=str(path)) from None
    except YamlSyntaxError as error:
        raise ConfigError(error.message, where=error.place) from None
    return parse_config(text, path)


def parse_config(text: str, path: Path) -> Config:
    """Validate and build a Config from the text of a loader.yaml at `path` (the one YAML loader:
    loader.yaml_files, as for mapping files: duplicate keys, tags, deep nesting are errors)."""
    try:
        doc = load_marked(text, str(path))
    except YamlSyntaxError as error:
        raise ConfigError(error.message, where=error.place) from None
    if doc.problems:
        raise ConfigError(
            "loader.yaml is not valid:\n  " + "\n  ".join(f"{place}: {message}" for place, message in doc.problems),
            hint="write each setting once; YAML merge keys (<<) are not supported",
        )
    data = doc.data if doc.data is not None else {}
    locate = _Locator(doc)
    _refuse_literal_secrets(data, locate)
    _validate_schema(data, locate)
    environments = {
        name: _environment_spec(name, spec, path.parent, locate)
        for name, spec in (data.get("environments") or {}).items()
    }
    default = data.get("default_environment", BUILTIN_SANDBOX)
    if default not in environments and default != BUILTIN_SANDBOX:
        raise ConfigError(
            f"default_environment {default!r} is not defined under environments",
            where=locate(("default_environment",)),
            hint=f"define it, or use one of: {', '.join(sorted({*environments, BUILTIN_SANDBOX}))}",
        )
    profile = (
        load_profile(data["profile"], source=locate(("profile",)), locate=lambda keys: locate(("profile", *keys)))
        if data.get("profile")
        else load_profile()
    )
    return Config(
        path=path,
        root=path.parent.resolve(),
        default_environment=default,
        environments=environments,
        profile=profile,
        concurrency=data.get("concurrency", DEFAULT_CONCURRENCY),
        sandbox=_sandbox_files(data.get("sandbox"), path.parent.resolve()),
        history=_history_settings(data.get("history", {})),
        editors=(data.get("report") or {}).get("editors", "name"),
    )


def _history_settings(spec: Mapping[str, Any] | bool) -> HistorySettings | None:
    """`history:` (validated): false turns it off; absent or a mapping keeps it on."""
    if spec is False:
        return None
    spec = spec if isinstance(spec, Mapping) else {}
    key = spec.get("key")
    return HistorySettings(path=spec.get("path", HistorySettings.path), key_env=key["env"] if key else None)


def _sandbox_files(spec: Mapping[str, Any] | None, base_dir: Path) -> SandboxFiles | None:
    if not spec:
        return None
    named = {key: base_dir / spec[key] for key in ("data", "seed") if key in spec}
    return SandboxFiles(**named)


class _Locator:
    """Maps a path of keys/indexes in the loaded data to `file:line:col` of its YAML node."""

    def __init__(self, doc: MarkedDocument):
        self._doc = doc

    def __call__(self, keys: tuple[Any, ...] | list[Any], *, key: bool = False) -> str:
        """The place of the value at `keys` (with `key=True`: of the last key itself)."""
        return str(self._doc.place(tuple(str(k) if not isinstance(k, int) else k for k in keys), key=key))


HISTORY_KEY_HINT = "write history: {key: {env: LOADER_HISTORY_KEY}} and export that variable"


def _refuse_literal_secrets(data: Any, locate: _Locator) -> None:
    history = data.get("history") if isinstance(data, dict) else None
    if isinstance(history, dict) and "key" in history and not isinstance(history["key"], dict):
        # Never echo the value: the history key is a secret.
        raise ConfigError(
            "history: key is written in the file; the history key is a secret, read only from an "
            "environment variable",
            where=locate(("history", "key")),
            hint=HISTORY_KEY_HINT,
        )
    environments = data.get("environments") if isinstance(data, dict) else None
    if not isinstance(environments, dict):
        return
    for name, spec in environments.items():
        if isinstance(spec, dict) and "client_secret" in spec and not isinstance(spec["client_secret"], dict):
            # Never echo the value: it may be a real secret pasted into the file.
            raise ConfigError(
                f"environment {name!r}: client_secret is written in the file; secrets are read only from "
                "environment variables",
                where=locate(("environments", name, "client_secret")),
                hint=SECRET_HINT,
            )


def loader_schema() -> dict[str, Any]:
    return package_schema("loader.schema.json")


def _validate_schema(data: Any, locate: _Locator) -> None:
    validator = jsonschema.Draft202012Validator(loader_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    lines = []
    for error in errors:
        path = list(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            for extra in (k for k in error.instance if k not in allowed):
                place = ".".join(str(p) for p in [*path, extra])
                lines.append(f"{locate([*path, extra], key=True)}: {place}: unknown setting {extra!r}")
            continue
        lines.append(f"{locate(path)}: {_describe(error)}")
    raise ConfigError(
        "loader.yaml is not valid:\n  " + "\n  ".join(lines),
        hint="see schemas/loader.schema.json for what each setting may hold",
    )


def _describe(error: jsonschema.ValidationError) -> str:
    place = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    if error.validator == "oneOf" and error.absolute_path and error.absolute_path[-1] == "client_id":
        return f"{place}: must be a string or {{env: NAME}}"
    message = error.message
    if isinstance(error.instance, str | int | float) and not isinstance(error.instance, bool):
        # Never repeat a value: a secret pasted into the wrong setting would reach terminals and CI logs.
        message = message.replace(repr(error.instance), "the value")
        if error.validator == "pattern":
            message = "the value is not in the expected form"
            if error.absolute_path and str(error.absolute_path[-1]).endswith("_url"):
                message = "the value is not an http(s) address (https://host/path)"
    return f"{place}: {message}"


def _environment_spec(name: str, spec: Mapping[str, Any], base_dir: Path, locate: _Locator) -> EnvironmentSpec:
    here = ("environments", name)
    ca_bundle = None
    if "ca_bundle" in spec:
        ca_bundle = (base_dir / spec["ca_bundle"]).resolve()
        if not ca_bundle.is_file():
            raise ConfigError(
                f"ca_bundle {spec['ca_bundle']!r} does not name a file",
                where=locate((*here, "ca_bundle")),
                hint="give the path of a PEM file of CA certificates, relative to loader.yaml",
            )
    client_id = spec["client_id"]
    retry = RetrySettings(**spec.get("retry", {}))
    if retry.wait_max < retry.wait_initial:
        raise ConfigError("retry.wait_max is below retry.wait_initial", where=locate((*here, "retry")))
    return EnvironmentSpec(
        name=name,
        base_url=check_url(spec["base_url"], "base_url", locate((*here, "base_url"))),
        auth_url=check_url(spec["auth_url"], "auth_url", locate((*here, "auth_url"))),
        realm=spec["realm"],
        expect_environment=spec.get("expect_environment"),
        client_id=EnvRef(client_id["env"]) if isinstance(client_id, dict) else client_id,
        client_secret=EnvRef(spec["client_secret"]["env"]),
        ca_bundle=ca_bundle,
        timeout=float(spec.get("timeout", DEFAULT_TIMEOUT_S)),
        retry=retry,
        where=locate(here),
        service_user_ids=tuple(spec.get("service_user_ids", ())),
    )
