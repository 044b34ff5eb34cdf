"""The folders are the pipeline: data flows one way, and no module imports in a cycle.

The rule the flow test enforces, for every module of `loader`:
- the stages, in order, are source < history < plan < apply < report < commands: a module of a stage
  imports from its own stage and earlier ones, never from a later one (the history is a store that
  plan reads and apply writes, so it knows neither);
- the neutral modules, the top level's (`loader/*.py`: errors, places, config, profile, findings …),
  `loader/files` and `loader/api`, import no stage at all, so every stage may use them;
- the wiring, `loader/cli.py`, `loader/library.py` (the Python API: the command line's twin for
  programs) and the `__main__` modules, may import anything;
- `loader/sandbox` imports nothing of the loader but itself (it shares no code with the client);
- a few parts have narrower rules on top (`NARROWER`): the source reads files, never the service.

Read from the source with `ast`, so lazy imports inside functions count as much as top-level ones;
for the flow, imports under `if TYPE_CHECKING:` count too (a type from a later stage is a dependency
on it all the same), while the cycle check leaves them out (they never run).
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "loader"
STAGES = ("source", "history", "plan", "apply", "report", "commands")
NEUTRAL = ("<top>", "files", "api")
# Top-level modules that wire the stages together.
WIRING = {"cli", "library", "__main__"}
# What a part may not import besides the later stages (by top-level folder of `loader`, or a module of the top level).
NARROWER = {
    "source": {"api", "sandbox", "cli", "environments"},
    "history": {"api", "sandbox", "cli"},
    "plan": {"cli", "sandbox"},
    "apply": {"cli", "sandbox"},
    "report": {"cli", "api", "sandbox"},
    "api": {"cli", "sandbox"},
    "sandbox": {"cli", "api", "config", "environments", "profile"},
    "files": {"api", "sandbox"},
}
FORBIDDEN = {
    **{stage: set(STAGES[at + 1:]) | NARROWER.get(stage, set()) for at, stage in enumerate(STAGES)},
    **{part: set(STAGES) | NARROWER.get(part, set()) for part in (*NEUTRAL, "sandbox")},
}
WEB_FRAMEWORKS = ("starlette", "uvicorn")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:` (for types only, never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            inside |= {id(n) for child in node.body for n in ast.walk(child)}
    return inside


def _imports(path: Path, *, types: bool) -> Iterator[str]:
    """What `path` imports; with `types`, its imports for types only (under TYPE_CHECKING) too."""
    tree = ast.parse(path.read_text("utf-8"))
    typing_only = set() if types else _type_checking_only(tree)
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parents, base] if base else parents)
            yield base
            for alias in node.names:  # `from loader.source import readers` imports a module too
                yield f"{base}.{alias.name}"


def _modules(*, types: bool = False) -> dict[str, set[str]]:
    found = {_module_name(p): set(_imports(p, types=types)) for p in PACKAGE.rglob("*.py")}
    return {name: {i for i in imports if i in found and i != name} | {i for i in imports if not i.startswith("loader")}
            for name, imports in found.items()}


MODULES = _modules()
WITH_TYPES = _modules(types=True)


def _part(module: str) -> str:
    parts = module.split(".")
    if parts[-1] == "__main__":
        return "__main__"  # `python -m loader.sandbox` wires a command, like cli
    if len(parts) == 2 and parts[1] not in (*STAGES, "api", "sandbox", "files"):
        return "<top>" if parts[1] not in WIRING else parts[1]
    return parts[1] if len(parts) > 1 else "<top>"


def _target(imported: str) -> str:
    parts = imported.split(".")
    return parts[1] if len(parts) > 1 else "<top>"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_against_the_flow(module: str) -> None:
    part = _part(module)
    forbidden = FORBIDDEN.get(part, set())
    wrong = sorted(i for i in WITH_TYPES[module] if i.startswith("loader.") and _target(i) in forbidden)
    assert not wrong, f"{module} ({part}) imports {wrong}"


def test_every_module_is_in_a_stage_a_neutral_part_the_wiring_or_the_sandbox() -> None:
    parts = {_part(module) for module in MODULES}
    assert parts <= {*STAGES, *NEUTRAL, *WIRING, "sandbox"}, parts - {*STAGES, *NEUTRAL, *WIRING, "sandbox"}


def test_only_the_client_uses_http_clients_and_only_the_sandbox_the_web_framework() -> None:
    def users(top_level: tuple[str, ...]) -> list[str]:
        return sorted(m for m, imports in MODULES.items() if any(i.split(".")[0] in top_level for i in imports))

    httpx_users, web_users = users(("httpx", "aiohttp")), users(WEB_FRAMEWORKS)
    assert all(m.startswith("loader.api") for m in httpx_users), httpx_users
    assert all(m.startswith("loader.sandbox") for m in web_users), web_users


def test_no_import_cycles() -> None:
    graph = {m: {i for i in imports if i in MODULES} for m, imports in MODULES.items()}
    # a package's __init__ importing its own modules is how a package exposes them, not a cycle
    for m in graph:
        graph[m] = {i for i in graph[m] if not (i.startswith(m + ".") and m != "loader")}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_every_package_is_in_the_built_distribution() -> None:
    """pyproject.toml lists the packages by name: a sub-package left out works in a checkout and is
    missing from a wheel."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    listed = set(tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(root).parts) for init in (root / "loader").rglob("__init__.py")}
    assert found - listed == set()


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: `loader/py.typed` ships, so users' type checkers read the Python API's hints."""
    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert (PACKAGE / "py.typed").is_file()
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["loader"]
