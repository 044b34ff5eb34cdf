"""The CI recipes under examples/: linted as the CI systems read them, and every loader command in
them accepted by loader's own parser; the GitLab notes script run against a small fake GitLab API."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from helpers.plan import REPO
from helpers.report import small_plan

from loader.cli import build_parser
from loader.plan.digest import plan_digest
from loader.report.markdown import render

EXAMPLES = REPO / "examples"
WORKFLOWS = sorted((EXAMPLES / "github-actions").glob("*.yml"))
GITLAB = EXAMPLES / "gitlab-ci.yml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found, f"{name} is not installed: pip install -e '.[test]'"
    return found


def test_there_are_the_two_github_workflows() -> None:
    assert [p.name for p in WORKFLOWS] == ["apply.yml", "plan.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_with_shellcheck_finds_nothing_in_the_workflow(workflow: Path) -> None:
    done = subprocess.run(
        [_tool("actionlint"), "-shellcheck", _tool("shellcheck"), "-verbose", str(workflow)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'Rule "shellcheck" was disabled' not in done.stderr


def test_the_workflows_and_the_gitlab_pipeline_match_their_ci_systems_schemas() -> None:
    for schema, files in (("vendor.github-workflows", WORKFLOWS), ("vendor.gitlab-ci", [GITLAB])):
        done = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", schema, *map(str, files)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def _loader_commands() -> list[list[str]]:
    """Every `loader ...` command line of the recipes, shell variables filled in."""
    texts: list[str] = []
    for workflow in WORKFLOWS:
        for job in yaml.safe_load(workflow.read_text(encoding="utf-8"))["jobs"].values():
            texts += [step["run"] for step in job["steps"] if "run" in step]
    for job in yaml.safe_load(GITLAB.read_text(encoding="utf-8")).values():
        if isinstance(job, dict) and "script" in job:
            texts += job["script"]
    commands = []
    for text in texts:
        for line in re.split(r"[;\n]", text.replace("\\\n", " ")):
            line = line.strip()
            if line.startswith("loader "):
                filled = re.sub(r'"\$[A-Z_]+"', "VALUE", line).replace("mappings/*.yaml", "mappings/a.yaml")
                commands.append(shlex.split(filled)[1:])
    return commands


def test_every_loader_command_in_the_recipes_is_accepted_by_loaders_parser() -> None:
    commands = _loader_commands()
    assert {c[0] for c in commands} == {"validate", "test", "plan", "apply"}
    parser = build_parser()
    for argv in commands:
        argv = [("sha256:" + "0" * 64) if a == "VALUE" and argv[argv.index(a) - 1] == "--expect-digest" else a
                for a in argv]
        parser.parse_args(argv)  # a UsageError fails the test
    assert any("--expect-digest" in c for c in commands)


def test_the_recipes_digest_pattern_finds_the_digest_in_the_markdown_report() -> None:
    pattern = re.compile(r"Plan digest: `(sha256:[0-9a-f]{64})`")
    for recipe in (EXAMPLES / "github-actions" / "apply.yml", EXAMPLES / "gitlab_notes.py"):
        assert "Plan digest: `(sha256:[0-9a-f]{64})`" in recipe.read_text(encoding="utf-8")
    plan = small_plan()
    found = pattern.search(render(plan))
    assert found and found[1] == plan_digest(plan)


# ---- examples/gitlab_notes.py against a fake GitLab API --------------------------------------


class _FakeGitLab:
    def __init__(self) -> None:
        self.notes: dict[int, dict[str, Any]] = {}
        self.next_id = 1
        self.tokens: set[str] = set()


def _handler(state: _FakeGitLab) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length", 0))
            return {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}

        def do_GET(self) -> None:
            state.tokens.add(self.headers["PRIVATE-TOKEN"])
            path = urlparse(self.path).path
            if path == "/api/v4/projects/7/repository/commits/abc123/merge_requests":
                self._reply([{"iid": 5, "state": "merged"}])
            elif path == "/api/v4/projects/7/merge_requests/5/notes":
                page = int(parse_qs(urlparse(self.path).query)["page"][0])
                self._reply(list(state.notes.values()) if page == 1 else [])

        def do_POST(self) -> None:
            note = {"id": state.next_id, "body": self._form()["body"]}
            state.notes[state.next_id] = note
            state.next_id += 1
            self._reply(note)

        def do_PUT(self) -> None:
            note_id = int(self.path.rsplit("/", 1)[1])
            state.notes[note_id]["body"] = self._form()["body"]
            self._reply(state.notes[note_id])

        def do_DELETE(self) -> None:
            del state.notes[int(self.path.rsplit("/", 1)[1])]
            self._reply(None)

    return Handler


@pytest.fixture
def gitlab() -> Iterator[tuple[_FakeGitLab, dict[str, str]]]:
    state = _FakeGitLab()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    env = {**os.environ, "CI_API_V4_URL": f"http://127.0.0.1:{server.server_port}/api/v4", "CI_PROJECT_ID": "7",
           "CI_MERGE_REQUEST_IID": "5", "CI_COMMIT_SHA": "abc123", "LOADER_GITLAB_TOKEN": "glpat-test-token"}
    yield state, env
    server.shutdown()
    server.server_close()


def _notes_script(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(EXAMPLES / "gitlab_notes.py"), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_gitlab_notes_posts_each_part_updates_them_in_place_and_finds_the_digest(
    gitlab: tuple[_FakeGitLab, dict[str, str]], tmp_path: Path
) -> None:
    state, env = gitlab
    plan = small_plan()
    (tmp_path / "plan.md").write_text(render(plan), encoding="utf-8")
    (tmp_path / "plan.part2.md").write_text("# part 2\n", encoding="utf-8")
    assert _notes_script(env, tmp_path, "post", "plan.md").returncode == 0
    assert sorted(n["body"].splitlines()[0] for n in state.notes.values()) == [
        "<!-- loader-plan-report part 1 -->", "<!-- loader-plan-report part 2 -->"]
    (tmp_path / "plan.part2.md").unlink()
    assert _notes_script(env, tmp_path, "post", "plan.md").returncode == 0
    assert [n["id"] for n in state.notes.values()] == [1]  # updated in place; the stale part 2 removed
    done = _notes_script(env, tmp_path, "digest")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == plan_digest(plan)
    assert "glpat-test-token" not in done.stdout + done.stderr and state.tokens == {"glpat-test-token"}


# ---- the github-script steps, run by node against a stand-in for GitHub's API -----------------


def _github_script(workflow: str) -> str:
    data = yaml.safe_load((EXAMPLES / "github-actions" / workflow).read_text(encoding="utf-8"))
    (script,) = [s["with"]["script"] for job in data["jobs"].values() for s in job["steps"]
                 if s.get("uses", "").startswith("actions/github-script@")]
    return str(script)


def _run_github_script(workflow: str, state: dict[str, Any], cwd: Path) -> dict[str, Any]:
    (cwd / "script.js").write_text(_github_script(workflow), encoding="utf-8")
    (cwd / "state.json").write_text(json.dumps(state), encoding="utf-8")
    done = subprocess.run([_tool("node"), str(Path(__file__).parent / "github_script_harness.js"), "script.js",
                           "state.json"], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads((cwd / "state.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_pull_request_comments_are_one_per_part_updated_in_place_and_apply_reads_their_digest(
    tmp_path: Path,
) -> None:
    plan = small_plan()
    (tmp_path / "plan.md").write_text(render(plan), encoding="utf-8")
    (tmp_path / "plan.part2.md").write_text("# part 2\n", encoding="utf-8")
    someone = {"id": 100, "body": "LGTM", "user": {"type": "User"}}
    state = _run_github_script("plan.yml", {"comments": [someone], "nextId": 1, "outputs": {}}, tmp_path)
    assert [c["body"].splitlines()[0] for c in state["comments"]] == [
        "LGTM", "<!-- loader-plan-report part 1 -->", "<!-- loader-plan-report part 2 -->"]
    (tmp_path / "plan.part2.md").unlink()
    state = _run_github_script("plan.yml", state, tmp_path)
    assert [c["id"] for c in state["comments"]] == [100, 1]  # part 1 updated in place, part 2 removed
    state = _run_github_script("apply.yml", state, tmp_path)
    assert "failed" not in state and state["outputs"] == {"digest": plan_digest(plan), "pull": "5"}


def test_apply_fails_when_the_pull_request_has_no_report(tmp_path: Path) -> None:
    state = _run_github_script("apply.yml", {"comments": [], "nextId": 1, "outputs": {}}, tmp_path)
    assert state["outputs"] == {} and "has no loader plan report" in state["failed"]


def test_the_first_comment_links_the_uploaded_html_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plan.md").write_text(render(small_plan()), encoding="utf-8")
    (tmp_path / "plan.part2.md").write_text("# part 2\n", encoding="utf-8")
    monkeypatch.setenv("HTML_URL", "https://ci.invalid/artifacts/42")  # upload-artifact's artifact-url
    state = _run_github_script("plan.yml", {"comments": [], "nextId": 1, "outputs": {}}, tmp_path)
    first, second = (c["body"] for c in state["comments"])
    assert first.endswith("**Every record** (filters by block, action and mapping line): "
                          "[plan.html](https://ci.invalid/artifacts/42)\n")
    assert "plan.html" not in second
    steps = yaml.safe_load((EXAMPLES / "github-actions" / "plan.yml").read_text(encoding="utf-8"))["jobs"]["plan"]
    upload = next(s for s in steps["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "plan.html" and "--html plan.html" in GITLAB.read_text(encoding="utf-8")


def test_the_first_comment_links_the_review_workbook_and_decisions_run_the_plan_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "plan.md").write_text(render(small_plan()), encoding="utf-8")
    monkeypatch.setenv("REVIEW_URL", "https://ci.invalid/artifacts/43")
    state = _run_github_script("plan.yml", {"comments": [], "nextId": 1, "outputs": {}}, tmp_path)
    (first,) = (c["body"] for c in state["comments"])
    assert "[review.xlsx](https://ci.invalid/artifacts/43), then `loader decide review.xlsx`" in first
    workflow = _workflow("plan.yml")
    steps = workflow["jobs"]["plan"]["steps"]
    uploads = {s["with"]["path"]: s["with"]["retention-days"] for s in steps
               if s.get("uses", "").startswith("actions/upload-artifact@")}
    assert uploads["review.xlsx"] <= 7 and "--review review.xlsx" in _step_run(steps, "loader plan")
    triggers: Any = next(value for key, value in workflow.items() if key in ("on", True))  # YAML 1.1: `on` is True
    assert "decisions.yaml" in triggers["pull_request"]["paths"]
    gitlab = GITLAB.read_text(encoding="utf-8")
    assert "--review review.xlsx" in gitlab and '"decisions.yaml"' in gitlab and '"review.xlsx"]' in gitlab


def _step_run(steps: list[dict[str, Any]], needle: str) -> str:
    return str(next(s["run"] for s in steps if needle in s.get("run", "")))


# ---- the history: fetched before planning, committed and pushed after the apply ---------------


def _workflow(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / "github-actions" / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _step_index(steps: list[dict[str, Any]], needle: str) -> int:
    return next(i for i, s in enumerate(steps) if needle in s.get("run", ""))


def test_the_github_jobs_take_the_newest_history_before_planning_and_apply_pushes_it_always() -> None:
    apply, plan = _workflow("apply.yml"), _workflow("plan.yml")
    assert apply["permissions"]["contents"] == "write" and plan["permissions"]["contents"] == "read"
    assert apply["concurrency"]["group"] == f"loader-apply-{apply['env']['LOADER_ENV']}"
    assert apply["concurrency"]["cancel-in-progress"] is False
    steps = apply["jobs"]["apply"]["steps"]
    fetched = _step_index(steps, 'git checkout FETCH_HEAD -- "$LOADER_HISTORY"')
    applied = _step_index(steps, "loader apply")
    pushed = _step_index(steps, "git push")
    assert fetched < applied < pushed and steps[pushed]["if"] == "always()"
    assert "git commit-tree" in steps[pushed]["run"] and "for attempt in" in steps[pushed]["run"]
    assert "LOADER_HISTORY_KEY" in steps[applied]["env"]
    steps = plan["jobs"]["plan"]["steps"]
    assert _step_index(steps, 'git checkout FETCH_HEAD -- "$LOADER_HISTORY"') < _step_index(steps, "loader plan")
    assert '"$GITHUB_BASE_REF"' in steps[_step_index(steps, "git fetch")]["run"]


def test_the_gitlab_jobs_take_the_newest_history_and_apply_pushes_it_after_the_script() -> None:
    pipeline = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    fetch = pipeline[".loader"]["before_script"]
    assert any('git checkout FETCH_HEAD -- "$LOADER_HISTORY"' in line for line in fetch)
    apply = pipeline["apply"]
    assert apply["resource_group"] == f"loader-apply-{pipeline['variables']['LOADER_ENV']}"
    pushing = " ".join(apply["after_script"])
    assert "git commit-tree" in pushing and "-o ci.skip" in pushing and "for attempt in" in pushing


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


@pytest.fixture
def moved_branch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A runner's clone of a repository whose main moved on (another merge) after it was cloned,
    with a history the apply wrote in its working tree. (remote, runner)"""
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "home" / ".gitconfig"))
    for key, value in (("user.name", "t"), ("user.email", "t@example.invalid"), ("init.defaultBranch", "main")):
        _git(tmp_path, "config", "--global", key, value)
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "--bare", "--quiet", str(remote))
    _git(remote, "config", "receive.advertisePushOptions", "true")
    for name in ("runner", "someone"):
        _git(tmp_path, "clone", "--quiet", str(remote), name)
    someone = tmp_path / "someone"
    (someone / "mappings").mkdir()
    (someone / "mappings" / "a.yaml").write_text("version: 1\n")
    _git(someone, "add", ".")
    _git(someone, "commit", "--quiet", "-m", "mappings")
    _git(someone, "push", "--quiet", "origin", "HEAD:main")
    runner = tmp_path / "runner"
    _git(runner, "pull", "--quiet", "origin", "main")
    (someone / "history" / "test").mkdir(parents=True)
    (someone / "history" / "test" / "head.json").write_text('{"serial": 1}\n')
    _git(someone, "add", ".")
    _git(someone, "commit", "--quiet", "-m", "loader history: an earlier apply")
    (someone / "mappings" / "b.yaml").write_text("version: 1\n")
    _git(someone, "add", ".")
    _git(someone, "commit", "--quiet", "-m", "another merge")
    _git(someone, "push", "--quiet", "origin", "HEAD:main")
    return remote, runner


def _apply_writes_history(runner: Path) -> None:
    """What the apply step does to the history it was given: the next serial."""
    head = runner / "history" / "test" / "head.json"
    assert head.read_text() == '{"serial": 1}\n'  # the newest history was taken before planning
    head.write_text('{"serial": 2}\n')


def test_the_github_push_step_rebases_on_a_moved_branch_and_pushes(moved_branch: tuple[Path, Path]) -> None:
    remote, runner = moved_branch
    steps = _workflow("apply.yml")["jobs"]["apply"]["steps"]
    env = {**os.environ, "LOADER_HISTORY": "history", "LOADER_ENV": "test", "GITHUB_REF_NAME": "main",
           "GITHUB_RUN_ID": "42"}
    hook = remote / "hooks" / "pre-receive"  # the first push loses a race: the branch moved once more
    hook.write_text('#!/bin/sh\n[ -e "$GIT_DIR/raced" ] && exit 0\ntouch "$GIT_DIR/raced"\n'
                    'echo "someone else pushed first" >&2\nexit 1\n')
    hook.chmod(0o755)
    for needle in ('git checkout FETCH_HEAD -- "$LOADER_HISTORY"', "git push"):
        script = steps[_step_index(steps, needle)]["run"]
        done = subprocess.run(["bash", "-e", "-c", script], cwd=runner, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        if needle != "git push":
            assert not (runner / "mappings" / "b.yaml").exists()  # only the history is taken, not the mappings
            _apply_writes_history(runner)
    assert "the branch moved (attempt 1); trying again" in done.stdout
    log = _git(remote, "log", "--format=%s", "main")
    assert log.splitlines() == ["loader history: apply to test (run 42)", "another merge",
                                "loader history: an earlier apply", "mappings"]
    assert _git(remote, "show", "main:history/test/head.json") == '{"serial": 2}\n'


def test_the_gitlab_after_script_rebases_on_a_moved_branch_and_pushes(moved_branch: tuple[Path, Path]) -> None:
    remote, runner = moved_branch
    fetch = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))[".loader"]["before_script"]
    env = {**os.environ, "LOADER_HISTORY": "history", "CI_COMMIT_BRANCH": "main"}
    done = subprocess.run(["bash", "-e", "-c", "\n".join(fetch[1:])], cwd=runner, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    _apply_writes_history(runner)
    _git(runner, "config", "--global", f"url.{remote.as_uri()}.insteadOf",
         "https://loader:glpat-token@gitlab.invalid/group/project.git")
    lines = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))["apply"]["after_script"]
    env = {**os.environ, "LOADER_HISTORY": "history", "LOADER_ENV": "test", "CI_COMMIT_BRANCH": "main",
           "CI_PIPELINE_ID": "7", "CI_SERVER_HOST": "gitlab.invalid", "CI_PROJECT_PATH": "group/project",
           "LOADER_GITLAB_TOKEN": "glpat-token"}
    done = subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=runner, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    log = _git(remote, "log", "--format=%s", "main")
    assert log.splitlines()[0] == "loader history: apply to test (pipeline 7)"
    assert _git(remote, "show", "main:history/test/head.json") == '{"serial": 2}\n'
