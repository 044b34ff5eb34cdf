"""The HTML report in a real browser: Debian's headless Chromium driven by Playwright (no browser download).

Chromium must be installed (`.ci/run` installs the `chromium` package where missing): without it
these tests fail, they never skip. Every request leaving the page is blocked and counted: a
self-contained report makes none.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.large_plans import cycle
from helpers.report import review_plan
from playwright.sync_api import Browser, Page, Route, expect, sync_playwright

from loader.places import CellRef
from loader.plan.model import Action, BlockPlan, FieldChange, FieldRule, NotInSource, Plan, RecordPlan
from loader.report.html import write_html

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
INTERACTIVE_WITHIN_S = 15.0  # 100,000 records; measured about 2-3 s on the 2-core CI machine (see docs/performance.md)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), "Chromium is missing: install Debian's `chromium` package (.ci/run does)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


class _Blocked:
    """Lets the report itself load; aborts and records every other request."""

    def __init__(self, page_url: str) -> None:
        self.page_url = page_url
        self.urls: list[str] = []

    def __call__(self, route: Route) -> None:
        if route.request.url == self.page_url:
            route.continue_()
            return
        self.urls.append(route.request.url)
        route.abort()


def _open(browser: Browser, path: Path) -> tuple[Page, _Blocked]:
    page = browser.new_page()
    blocked = _Blocked(path.as_uri())
    page.route("**/*", blocked)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    assert errors == []
    return page, blocked


@pytest.fixture
def review_page(browser: Browser, tmp_path: Path) -> Iterator[tuple[Page, _Blocked]]:
    path = tmp_path / "plan.html"
    write_html(review_plan(), path)
    page, blocked = _open(browser, path)
    yield page, blocked
    page.close()


def _rows(page: Page, block: int) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"#block-{block} tbody tr:not(.details)", "rows => rows.map(r => Array.from(r.cells, c => c.textContent))")


def test_the_page_shows_a_chart_errors_first_and_a_section_per_block(review_page: tuple[Page, _Blocked]) -> None:
    page, blocked = review_page
    bars = page.eval_on_selector_all(
        "#chart rect.bar", "rs => rs.map(r => [r.dataset.block, r.dataset.action, Number(r.dataset.count)])")
    assert ["schools", "create", 3] in bars and ["schools", "blocked", 1] in bars
    assert ["programs", "blocked", 1] in bars and ["applicants", "update", 1] in bars
    order = page.eval_on_selector_all("h2", "hs => hs.map(h => h.textContent)")
    assert order[0].startswith("Errors (3)") and order[1] == "Changes by mapping line"
    assert order[2].startswith("schools (school)")
    assert page.text_content("#errors") is not None and "name: too long" in (page.text_content("#errors") or "")
    schools = _rows(page, 0)
    # existing records first, then blocked, then creates; unchanged SCI hidden
    assert [r[1] for r in schools] == ["ENG", "OLD", "LAW", "EVIL", "K\\r<!-- x"]
    assert ["3", "ENG", "update", 'name: "Engineering" → "Faculty of Engineering"'] in schools
    assert ["9", "OLD", "blocked", "name: too long"] in schools
    # not managed here: listed only when opened
    assert page.eval_on_selector_all("#block-0 details.nm tbody tr", "rs => rs.length") == 0
    page.click("#block-0 details.nm summary")
    page.wait_for_selector("#block-0 details.nm tbody tr")  # filled when opened: wait for it, not a moment
    assert page.eval_on_selector_all("#block-0 details.nm tbody tr",
                                     "rs => rs.map(r => Array.from(r.cells, c => c.textContent))") == [["GONE", "s-4"]]
    assert blocked.urls == []


def test_hostile_values_stay_text_and_pii_stays_masked(review_page: tuple[Page, _Blocked]) -> None:
    page, blocked = review_page
    assert page.evaluate("typeof window.alert === 'function' && document.querySelectorAll('tbody script').length") == 0
    evil = next(r for r in _rows(page, 0) if r[1] == "EVIL")
    assert "<script>alert(1)</script>" in evil[3] and "[x](javascript:alert(1))" in evil[3]
    content = page.content()
    assert "new.secret@example.com" not in content and "old@example.com" not in content
    applicants = _rows(page, 3)
    assert ["2", "A1", "update", "email_address: ‹hidden› → ‹hidden›"] in applicants
    assert page.eval_on_selector_all("a", "as => as.length") == 0
    assert blocked.urls == []


def test_filters_by_block_action_and_text(review_page: tuple[Page, _Blocked]) -> None:
    page, _ = review_page
    page.select_option("#action", "blocked")
    assert page.text_content("#shown") == "3"
    assert [r[1] for r in _rows(page, 0)] == ["OLD"] and [r[1] for r in _rows(page, 2)] == ["P1"]
    page.select_option("#action", "")
    page.select_option("#block", "0")
    assert page.is_hidden("#block-1") and _rows(page, 0)[-1][1] == "SCI"  # everything, unchanged too (last)
    page.select_option("#block", "")
    page.fill("#q", "faculty of eng")
    expect(page.locator("#shown")).to_have_text("1", timeout=60_000)
    assert [r[1] for r in _rows(page, 0)] == ["ENG"] and page.is_hidden("#block-4")


def test_columns_sort_and_details_open_with_the_keyboard(review_page: tuple[Page, _Blocked]) -> None:
    page, _ = review_page
    page.click("#block-0 thead th:nth-child(2) button")
    assert [r[1] for r in _rows(page, 0)] == ["ENG", "EVIL", "K\\r<!-- x", "LAW", "OLD"]
    assert page.get_attribute("#block-0 thead th:nth-child(2)", "aria-sort") == "ascending"
    page.focus("#block-0 thead th:nth-child(2) button")
    page.keyboard.press("Enter")
    assert _rows(page, 0)[0][1] == "OLD"
    record = page.locator("#block-4 button.rec", has_text="ART2")
    record.focus()
    page.keyboard.press("Enter")
    assert record.get_attribute("aria-expanded") == "true"
    details = page.locator("#block-4 tr.details").inner_text()
    assert "status path: after the create: READY → ACTIVE" in details
    assert "intake.xlsx › arrangements › row 3" in details
    assert '"New arrangement"' in details
    page.keyboard.press("Enter")
    assert page.locator("#block-4 tr.details").count() == 0


def test_printing_hides_the_controls_and_builds_every_row(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "plan.html"
    write_html(many_creates(450), path)
    page, blocked = _open(browser, path)
    assert page.eval_on_selector_all("#block-0 tbody tr", "rs => rs.length") == 200  # lazily, a page at a time
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    assert page.eval_on_selector_all("#block-0 tbody tr", "rs => rs.length") == 450
    assert page.is_hidden(".controls") and page.is_hidden("#block-0 .more")
    assert blocked.urls == []
    page.close()


def test_the_rule_histogram_filters_the_records_to_one_group_existing_records_first(
    browser: Browser, tmp_path: Path,
) -> None:
    path = tmp_path / "plan.html"
    write_html(cycle(70), path)
    page, blocked = _open(browser, path)
    assert page.text_content("#shown") == "71"  # the 70 changes and the record dropped from the source
    rows = _rows(page, 0)
    actions = [r[2] for r in rows]
    assert actions == ["update"] * 60 + ["dropped"] + ["create"] * 10  # existing records first
    assert rows[60] == ["", "U-OLD", "dropped",
                        "Old unit, id id-old, last loaded 2026-03-01T10:00:00+00:00: no longer in the sheet"]
    bars = page.eval_on_selector_all("#rules button.rule", "bs => bs.map(b => b.textContent)")
    assert bars[:3] == ["mappings/units.yaml:26 name ← column 'Unit Name'53 changed",
                        "mappings/units.yaml:29 custom_attributes.Level ← column 'Level'6 changed",
                        "status steps the plan adds to reach the status (no mapping line)1 changed"]
    assert "mappings/units.yaml:25 code ← column 'Unit Code'10 created" in bars
    widths = page.eval_on_selector_all("#rules .bar", "bs => bs.map(b => b.getBoundingClientRect().width)")
    assert widths[0] > widths[1] > widths[2] > 0  # a histogram: bars as long as the groups are large
    level = page.locator("#rules button.rule", has_text="custom_attributes.Level ← column 'Level'6 changed")
    level.click()
    assert page.text_content("#shown") == "6" and level.get_attribute("aria-pressed") == "true"
    assert all(r[3] == 'custom_attributes.Level: null → "2"' for r in _rows(page, 0)) and len(_rows(page, 0)) == 6
    page.locator("#rules button.rule", has_text="status steps").click()
    assert [r[1] for r in _rows(page, 0)] == ["U00008"] and level.get_attribute("aria-pressed") == "false"
    page.locator("#rules button.rule", has_text="status steps").click()  # a second click shows every rule again
    assert page.text_content("#shown") == "71"
    page.select_option("#rule", label="units · mappings/units.yaml:25  code ← column 'Unit Code' (create)")
    assert page.text_content("#shown") == "10" and {r[2] for r in _rows(page, 0)} == {"create"}
    assert blocked.urls == []
    page.close()


def many_creates(n: int, not_managed: int = 0) -> Plan:
    """A first load of `n` subjects of six fields, built directly (planning them would dominate the test),
    with `not_managed` live records no mapping loads."""
    records = []
    for row in range(2, n + 2):
        values = {"code": f"S{row:06d}", "name": f"Subject number {row}", "parent": "BSC", "access": "Open",
                  "custom_attributes.Level": str(row % 5), "custom_attributes.Credit Points": "6"}
        records.append(RecordPlan(
            ref=f"subjects/S{row:06d}", block="subjects", entity="subject", key=(values["code"],),
            action=Action.CREATE, payload={}, source=CellRef("intake.xlsx", "Subjects", row=row), row=row,
            changes=tuple(FieldChange(f, None, v) for f, v in values.items())))
    rules = tuple(FieldRule(f, f"mappings/subjects.yaml:{10 + n}", f"{f} ← column '{f}'") for n, f in enumerate(values))
    others = tuple(NotInSource((f"X{i:06d}",), f"id-{i}") for i in range(not_managed))
    block = BlockPlan("subjects", "subject", "intake.xlsx", "Subjects", tuple(records), key_fields=("code",),
                      field_rules=rules, not_in_source_records=others)
    return Plan("sandbox", "5.1.0", "", {}, (block,))


@pytest.mark.slow
def test_a_page_of_100000_records_becomes_interactive_quickly(browser: Browser, tmp_path: Path) -> None:
    path = tmp_path / "plan.html"
    write_html(many_creates(100_000, not_managed=100_000), path)
    started = time.perf_counter()
    page, blocked = _open(browser, path)
    page.locator("#rules button.rule", has_text="custom_attributes.Level").click()  # a rule group: every record
    expect(page.locator("#shown")).to_have_text("100000", timeout=60_000)
    page.fill("#q", "S100001")  # a row far past the first page
    expect(page.locator("#shown")).to_have_text("1", timeout=60_000)
    page.click("#block-0 details.nm summary")  # the records not managed here, read only now
    expect(page.locator("#block-0 details.nm tbody tr")).to_have_count(200, timeout=60_000)
    elapsed = time.perf_counter() - started
    print(f"100,000 records: {path.stat().st_size:,} bytes, interactive and filtered in {elapsed:.2f} s")
    assert page.eval_on_selector_all("#block-0 > table > tbody > tr", "rs => rs.length") == 1
    assert blocked.urls == []
    assert elapsed < INTERACTIVE_WITHIN_S
    page.close()


@pytest.mark.parametrize("make", [review_plan, lambda: cycle(70)], ids=["review", "cycle"])
def test_on_a_phone_390_px_wide_the_page_never_scrolls_sideways_and_the_chart_scales(
    browser: Browser, tmp_path: Path, make: Callable[[], Plan]
) -> None:
    path = tmp_path / "plan.html"
    write_html(make(), path)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.evaluate("document.querySelector('#chart').getBoundingClientRect().right") <= 390
    page.close()


def test_the_chart_draws_changes_and_gives_unchanged_records_as_a_number(review_page: tuple[Page, _Blocked]) -> None:
    page, _ = review_page
    actions = set(page.eval_on_selector_all("#chart rect.bar", "rs => rs.map(r => r.dataset.action)"))
    assert actions <= {"create", "update", "dropped", "blocked"} and "unchanged" not in actions
    notes = page.eval_on_selector_all("#chart text.count", "ts => ts.map(t => t.textContent)")
    assert "5 changes · 1 unchanged · 1 not managed here" in notes  # schools: 3 create, 1 update, 1 blocked
    assert page.title() == "Plan for loader environment sandbox"
