"""Pictures of what a reviewer meets, made from the sample project against the built-in sandbox.

    python docs/screenshots.py OUT_DIR

Plans the sample project (`loader plan mappings/curriculum.yaml mappings/applicants.yaml
mappings/arrangements.yaml`, run from the repository root) with every report, then writes to
OUT_DIR:

- terminal-80.svg, terminal-120.svg (and .txt): the terminal view at 80 and 120 columns (rich's
  recording console, exported as SVG);
- markdown.png: the Markdown report as GitHub renders it in a pull-request comment (markdown-it,
  about 780 px wide), in headless Chromium;
- html-desktop.png, html-phone.png: the HTML report at 1280 and 390 px;
- review.pdf and review.png: the review workbook as LibreOffice prints it and shows it (skipped
  when `soffice` is not installed).

The images are generated, never committed. Chromium is Debian's (/usr/bin/chromium), driven by
Playwright as the tests drive it.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAPPINGS = ("mappings/curriculum.yaml", "mappings/applicants.yaml", "mappings/arrangements.yaml")
CHROMIUM = "/usr/bin/chromium"
COMMENT_CSS = """body{font:14px/1.5 -apple-system,'Segoe UI',system-ui,sans-serif;color:#1f2328;margin:0;padding:16px;
width:780px}table{border-collapse:collapse;display:block;overflow:auto;margin:8px 0}th,td{border:1px solid #d1d9e0;
padding:4px 10px}th{background:#f6f8fa}code{background:#eff1f3;padding:1px 4px;border-radius:4px;
font:12px ui-monospace,monospace}h1{font-size:1.6em;border-bottom:1px solid #d1d9e0}h2,h3{border-bottom:1px solid
#d1d9e0}"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 64
    out = Path(args[0]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="loader-screens-") as temp:
        work = Path(temp)
        _plan(work)
        _terminal(work / "plan.json", out)
        _browser_pictures(work, out)
        _workbook(work / "review.xlsx", out, work)
    for path in sorted(out.iterdir()):
        print(path)
    return 0


def _plan(work: Path) -> None:
    """The sample project's plan with every report, as a user runs it from the repository root."""
    command = [sys.executable, "-m", "loader", "plan", *MAPPINGS, "--out", str(work / "plan.json"),
               "--report", str(work / "plan.md"), "--html", str(work / "plan.html"),
               "--review", str(work / "review.xlsx")]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
                          check=False)
    if done.returncode not in (0, 2):
        raise SystemExit(f"loader plan failed ({done.returncode}):\n{done.stderr}")


def _terminal(plan_json: Path, out: Path) -> None:
    from rich.console import Console

    from loader.plan.plan_file import read_plan_json
    from loader.report.terminal import render

    plan = read_plan_json(plan_json)
    here = Path.cwd()
    os.chdir(REPO)  # places relative to the project, as the user sees them
    try:
        for width in (80, 120):
            screen = Console(record=True, width=width, file=io.StringIO(), force_terminal=True,
                             color_system="truecolor")
            render(plan, screen)
            (out / f"terminal-{width}.txt").write_text(screen.export_text(clear=False), encoding="utf-8")
            screen.save_svg(str(out / f"terminal-{width}.svg"), title=f"loader plan ({width} columns)")
    finally:
        os.chdir(here)


def _browser_pictures(work: Path, out: Path) -> None:
    from markdown_it import MarkdownIt
    from playwright.sync_api import sync_playwright

    body = MarkdownIt("gfm-like").render((work / "plan.md").read_text(encoding="utf-8"))
    comment = work / "comment.html"
    comment.write_text(f"<!DOCTYPE html><meta charset='utf-8'><style>{COMMENT_CSS}</style>{body}", encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            for name, path, width in (("markdown", comment, 812), ("html-desktop", work / "plan.html", 1280),
                                      ("html-phone", work / "plan.html", 390)):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(path.as_uri())
                page.screenshot(path=str(out / f"{name}.png"), full_page=True)
                page.close()
        finally:
            browser.close()


def _workbook(review: Path, out: Path, work: Path) -> None:
    """The review workbook printed (PDF) and shown (LibreOffice's HTML of it, photographed)."""
    soffice = shutil.which("soffice")
    if soffice is None:
        print("soffice not found: no pictures of the review workbook", file=sys.stderr)
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


if __name__ == "__main__":
    raise SystemExit(main())
