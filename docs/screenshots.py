"""Pictures of what a reviewer meets, made from the sample project against a fresh built-in sandbox,
for the tutorial (docs/tutorial.md). The docs build runs this (docs/hooks.py) when a picture is
missing or older than the code.

    python docs/screenshots.py OUT_DIR                 the code of this checkout
    python docs/screenshots.py OUT_DIR --rev REV       the code and sample project of a revision
                                                       (checked out with `git worktree add`)

Plans the sample project (`loader plan mappings/curriculum.yaml mappings/applicants.yaml
mappings/arrangements.yaml`, in a copy of its mappings/ and samples/ with a sandbox of its own)
with every report, then writes to OUT_DIR:

- terminal-80.svg, terminal-120.svg (and .txt): the terminal view at 80 and 120 columns (rich's
  recording console, exported as SVG);
- markdown.svg: the Markdown report as GitHub renders it in a pull-request comment (markdown-it,
  about 780 px wide), in headless Chromium;
- html-desktop.svg, html-phone.svg: the HTML report at 1280 and 390 px;
- review.svg (and review.pdf): the review workbook as LibreOffice shows it (and prints it).

Each browser picture is also kept as the PNG that the SVG holds. Chromium is driven by Playwright
(`CHROMIUM` names its executable; default Debian's /usr/bin/chromium). Where Chromium (with
Playwright) or LibreOffice (`soffice` on PATH) is not installed, the pictures it takes are placeholders that say which
tool was missing, so that every picture the tutorial shows exists. The pictures are generated,
never committed (docs/screenshots/ is ignored by git).
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from html import escape
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAPPINGS = ("mappings/curriculum.yaml", "mappings/applicants.yaml", "mappings/arrangements.yaml")
PICTURES = ("terminal-80.svg", "terminal-120.svg", "markdown.svg", "html-desktop.svg", "html-phone.svg",
            "review.svg")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # Debian's; CHROMIUM names another
BROWSER_PAGES = (("markdown", "comment.html", 812), ("html-desktop", "plan.html", 1280),
                 ("html-phone", "plan.html", 390))  # (picture, page, viewport width in px)
COMMENT_CSS = """body{font:14px/1.5 -apple-system,'Segoe UI',system-ui,sans-serif;color:#1f2328;margin:0;padding:16px;
width:780px}table{border-collapse:collapse;display:block;overflow:auto;margin:8px 0}th,td{border:1px solid #d1d9e0;
padding:4px 10px}th{background:#f6f8fa}code{background:#eff1f3;padding:1px 4px;border-radius:4px;
font:12px ui-monospace,monospace}h1{font-size:1.6em;border-bottom:1px solid #d1d9e0}h2,h3{border-bottom:1px solid
#d1d9e0}"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docs/screenshots.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder the pictures are written to")
    parser.add_argument("--rev", help="a git revision whose code and sample project are pictured")
    parser.add_argument("--terminal", type=Path, metavar="PLAN.json", help=argparse.SUPPRESS)  # the child's part
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.terminal is not None:
        _terminal(args.terminal, out)
        return 0
    if args.rev:
        with _checkout(args.rev) as (repo, env):
            take(repo, env, out)
    else:
        take(REPO, _clean_environment({}), out)
    for path in sorted(out.iterdir()):
        if path.is_file():
            print(path)
    return 0


def _clean_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without LOADER_* (the plan must never reach a configured service)."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("LOADER_")}, **extra}


@contextmanager
def _checkout(rev: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """`rev` checked out in a temporary worktree, and the environment that runs its code: its
    folder on PYTHONPATH, with `loader/schemas` linked to `schemas/` as the installed package maps it."""
    with tempfile.TemporaryDirectory(prefix="loader-rev-") as temp:
        tree = Path(temp) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), rev], check=True)
        try:
            if not (tree / "loader" / "schemas").exists():
                (tree / "loader" / "schemas").symlink_to(tree / "schemas", target_is_directory=True)
            yield tree, _clean_environment({"PYTHONPATH": str(tree)})
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)


def take(repo: Path, env: dict[str, str], out: Path) -> None:
    """Every picture of `repo`'s sample project, planned by the code `env` runs, into `out`."""
    with tempfile.TemporaryDirectory(prefix="loader-screens-") as temp:
        work = Path(temp)
        project = work / "project"
        for folder in ("mappings", "samples"):
            shutil.copytree(repo / folder, project / folder, ignore=shutil.ignore_patterns(".loader", "*.sqlite3"))
        _plan(project, work, env)
        subprocess.run([sys.executable, str(Path(__file__).resolve()), str(out), "--terminal", str(work / "plan.json")],
                       cwd=project, env=env, check=True)
        _browser_pictures(work, out)
        _workbook(work / "review.xlsx", out, work)


def _plan(project: Path, work: Path, env: Mapping[str, str]) -> None:
    """The sample project's plan with every report, as a user runs it in the project's folder."""
    command = [sys.executable, "-m", "loader", "plan", *MAPPINGS, "--out", str(work / "plan.json"),
               "--report", str(work / "plan.md"), "--html", str(work / "plan.html"),
               "--review", str(work / "review.xlsx")]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, env={**env, "NO_COLOR": "1"},
                          check=False)
    if done.returncode not in (0, 2):
        raise SystemExit(f"loader plan failed ({done.returncode}):\n{done.stderr}")


def _terminal(plan_json: Path, out: Path) -> None:
    """The terminal view at 80 and 120 columns (run in a child whose working directory is the
    project, so places read as the user sees them, and whose `loader` is the code pictured)."""
    from rich.console import Console

    from loader.plan.plan_file import read_plan_json
    from loader.report.terminal import render

    plan = read_plan_json(plan_json)
    for width in (80, 120):
        screen = Console(record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor")
        render(plan, screen, apply_command=["loader", "apply", *MAPPINGS])  # as `loader plan` prints it
        (out / f"terminal-{width}.txt").write_text(screen.export_text(clear=False), encoding="utf-8")
        screen.save_svg(str(out / f"terminal-{width}.svg"), title=f"loader plan ({width} columns)")


def _chromium_missing() -> str | None:
    """What is missing to take browser pictures, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright"
    return None if Path(CHROMIUM).exists() else "Chromium"


def _browser_pictures(work: Path, out: Path) -> None:
    missing = _chromium_missing()
    if missing is not None:
        for name, _, _ in BROWSER_PAGES:
            placeholder(out / f"{name}.svg", name, missing)
        return
    from markdown_it import MarkdownIt
    from playwright.sync_api import sync_playwright

    body = MarkdownIt("gfm-like").render((work / "plan.md").read_text(encoding="utf-8"))
    (work / "comment.html").write_text(f"<!DOCTYPE html><meta charset='utf-8'><style>{COMMENT_CSS}</style>{body}",
                                       encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            for name, page_file, width in BROWSER_PAGES:
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto((work / page_file).as_uri())
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                page.close()
                framed(out / f"{name}.png", out / f"{name}.svg")
        finally:
            browser.close()


def _workbook(review: Path, out: Path, work: Path) -> None:
    """The review workbook printed (PDF) and shown (LibreOffice's HTML of it, photographed)."""
    soffice = shutil.which("soffice")
    missing = "LibreOffice (soffice)" if soffice is None else _chromium_missing()
    if soffice is None or missing is not None:
        placeholder(out / "review.svg", "review workbook", missing or "")
        return
    profile = (work / "office-profile").as_uri()
    for kind in ("pdf", "html"):
        subprocess.run([soffice, "--headless", "--norestore", f"-env:UserInstallation={profile}", "--convert-to",
                        kind, "--outdir", str(work), str(review)], capture_output=True, check=True, timeout=300)
    shutil.copyfile(work / "review.pdf", out / "review.pdf")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto((work / "review.html").as_uri())
            page.screenshot(path=str(out / "review.png"), full_page=True)
        finally:
            browser.close()
    framed(out / "review.png", out / "review.svg")


def framed(png: Path, svg: Path) -> None:
    """The PNG `png` as an SVG picture of its size (the tutorial shows SVGs alone, so that a
    placeholder can stand in for any picture)."""
    data = png.read_bytes()
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk: the first after the signature
    svg.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                   f'viewBox="0 0 {width} {height}"><image width="{width}" height="{height}" '
                   f'href="data:image/png;base64,{base64.b64encode(data).decode("ascii")}"/></svg>\n', encoding="utf-8")


def placeholder(svg: Path, name: str, missing: str) -> None:
    """A labelled stand-in for the picture `name`, saying which tool was missing to take it."""
    svg.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="780" height="160" viewBox="0 0 780 160">'
        '<rect x="1" y="1" width="778" height="158" fill="#f6f8fa" stroke="#8c959f" stroke-dasharray="6 4"/>'
        '<text x="390" y="70" text-anchor="middle" font-family="sans-serif" font-size="20" fill="#1f2328">'
        f'No picture of the {escape(name)}</text>'
        '<text x="390" y="105" text-anchor="middle" font-family="sans-serif" font-size="15" fill="#57606a">'
        f'{escape(missing)} is not installed where these docs were built (docs/screenshots.py)</text></svg>\n',
        encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
