"""The terminal view: counts, field diffs, findings with places; colour only on a terminal."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace

import pytest
from helpers.large_plans import cycle, no_op
from helpers.report import Block, desired, every_row_plan, review_plan, small_plan
from rich.console import Console

from loader.console import console, progress_bars
from loader.plan.decisions_pass import DECIDED
from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.digest import shown_digest
from loader.plan.model import HELD, Plan
from loader.profile import load_profile
from loader.report.terminal import render, render_text
from loader.report.view import blocked_records, creates, updates


def test_the_terminal_view_shows_counts_diffs_and_findings_with_places(plan: Plan) -> None:
    text = render_text(plan, width=400)
    assert "schools" in text and "subjects" in text
    assert '~ update ENG' in text and 'name: "Old | Engineering" → "New | <b>Engineering</b>"' in text
    assert '+ create LAW  row 4' in text and '      name: "Law"' in text
    assert "intake.xlsx › subjects › C2 (MATH1): access can only be set at creation" in text  # the key beside its cell
    assert "✗ intake.xlsx › subjects › C3 (PHYS1): no program with code 'NOPE' in the source or live" in text
    assert "✗ blocked PHYS1  row 3 (intake.xlsx › subjects › C3)  no program with code 'NOPE'" in text
    assert text.index("Errors (1)") < text.index("schools (school) · intake.xlsx › Schools")
    assert "Plan: 1 to create · 2 to update · 2 unchanged · 1 blocked · 1 warning · 1 error." in text
    assert "The plan has errors" in text


def test_pii_values_never_reach_the_terminal(plan: Plan) -> None:
    text = render_text(plan)
    assert "email_address: ‹hidden› → ‹hidden›" in text
    assert "secret" not in text and "old@example.com" not in text


def test_long_blocks_show_every_kind_of_row_and_say_how_many_more_of_each(plan: Plan) -> None:
    text = render_text(plan, limit=1)
    assert "~ update ENG" in text and "+ create LAW" in text  # a limit below the kinds still shows each kind
    shown = render_text(review_plan(), limit=3)
    schools = shown[shown.index("schools (school)"):shown.index("courses (course)")]
    assert "~ update ENG" in schools and "✗ blocked OLD" in schools and schools.count("+ create") == 1
    assert "  … and 2 more: 2 to create; write them all with --report plan.md or --html plan.html" in schools
    assert schools.index("~ update") < schools.index("✗ blocked") < schools.index("+ create")  # existing first


def test_blocked_records_and_rows_and_records_not_in_source_are_named() -> None:
    text = render_text(review_plan())
    assert "✗ blocked OLD  row 9  name: too long" in text
    assert "✗ blocked P1  row 2  blocked: depends on courses/BADC, which cannot be applied" in text
    assert "? 1 not managed here: live records no mapping of this project loads" in text and "GONE" not in text
    assert "status path: after the create: READY → ACTIVE" in text
    assert "3 blocked" in text


def test_no_escape_code_or_carriage_return_from_a_cell_reaches_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    for out in (io.StringIO(), _Tty()):
        render(review_plan(), console(out))
        text = out.getvalue()
        assert "\r" not in text and "\x1b[31mred" not in text
        assert "K\\r<!-- x" in text and "\\u001b[31mred" in text


def test_long_lines_are_never_wrapped_when_stdout_is_not_a_terminal() -> None:
    long_name = "A very long subject name " * 12
    records = (desired("subjects", "subject", 2, code="LONG1", name=long_name),)
    p = plan_changes([Block("subjects", "subject", ("code",), records)], {}, load_profile(), header=PlanHeader("x"))
    out = io.StringIO()
    render(p, console(out))
    assert f'      name: "{long_name}"\n' in out.getvalue()


def test_apply_does_not_say_to_run_apply() -> None:
    without_errors = replace(review_plan(), blocks=review_plan().blocks[3:])
    assert "Apply exactly this plan:\n  loader apply MAPPING... --expect-digest sha256:" in render_text(without_errors)
    applying = render_text(without_errors, applying=True)
    assert "loader apply" not in applying and "Plan: 2 to create" in applying and "Plan digest sha256:" in applying


def test_one_warning_on_many_records_is_one_finding_with_its_count_and_first_three_cells() -> None:
    live = {"subject": [{"id": f"u-{n}", "code": f"S{n}", "access": "Restricted"} for n in range(10)]}
    records = tuple(desired("subjects", "subject", n + 2, code=f"S{n}", access="Open") for n in range(10))
    many = plan_changes([Block("subjects", "subject", ("code",), records)], live, load_profile(),
                        header=PlanHeader("sandbox"))
    text = render_text(many, limit=1, width=400)
    assert "Warnings (10 in 1 cause)" in text and text.count("can only be set at creation") == 1
    assert ("! intake.xlsx › subjects: access can only be set at creation — 10 records, first: B2 (S0): "
            "live 'Restricted', source 'Open'; not updated; B3 (S1): ") in text


def test_many_findings_are_cut_after_four_times_the_limit() -> None:
    live = {"subject": [{"id": f"u-{n}", "code": f"s{n}"} for n in range(10)]}
    records = tuple(desired("subjects", "subject", n + 2, code=f"S{n}") for n in range(10))
    many = plan_changes([Block("subjects", "subject", ("code",), records)], live, load_profile(),
                        header=PlanHeader("sandbox"))
    text = render_text(many, limit=1)
    assert "Warnings (10)" in text and text.count("keys match exactly") == 4 + 1  # 4 of 10 causes, 1 note
    assert "… and 6 more; write them all with --report plan.md" in text


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(plan: Plan, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty, pipe = _Tty(), io.StringIO()
    render(plan, console(tty))
    render(plan, console(pipe))
    assert "\x1b[" in tty.getvalue() and "\x1b[" not in pipe.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Tty()
    render(plan, console(plain))
    assert "\x1b[3" not in plain.getvalue() and "+ create LAW" in plain.getvalue()


def test_progress_bars_draw_nothing_when_disabled(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bars() as bars:  # stdout is captured, so not a terminal
        bar = bars.add("fetching", total=3)
        bar.advance(3)
        bar.set_total(4)
        bar.done()
    assert capsys.readouterr().out == ""


def _on_terminal(plan: Plan, width: int, limit: int = 50, *, wrap: bool | None = None) -> str:
    """The view as a terminal `width` columns wide shows it, through rich's recording console."""
    screen = Console(record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    render(plan, screen, limit=limit, wrap=wrap)
    return screen.export_text()


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("make", [review_plan, small_plan, lambda: cycle(70), every_row_plan],
                         ids=["review", "small", "cycle", "every-row"])
def test_at_80_and_120_columns_no_line_is_wider_no_word_is_cut_and_no_kind_of_row_is_hidden(
    width: int, make: Callable[[], Plan]
) -> None:
    plan = make()
    text = _on_terminal(plan, width, limit=5)
    whole = _on_terminal(plan, width, limit=5, wrap=False)  # every line whole
    assert max(map(len, text.splitlines())) <= width
    assert sorted(text.split()) == sorted(whole.split())  # wrapped between words only: every word whole
    for block in plan.blocks:
        start = text.index(f"{block.name} ({block.entity}) · ")
        part = text[start:text.find("\n\n", start)]
        for sign, present in (("~ ", updates(block)), ("+ create", creates(block)),
                              ("✗ blocked", blocked_records(block) or block.blocked_rows),
                              ("- dropped", [d for d in block.dropped if not d.seen])):
            assert (sign in part) == bool(present), (block.name, sign)
        changed, dropped = updates(block), [d for d in block.dropped if not d.seen]
        released = {d.id for d in block.released}
        for sign, present in (("~ renumber ", [r for r in changed if r.renamed_from is not None]),
                              ("~ retire ", [r for r in changed if r.retiring]),
                              ("~ kept platform edit ", [r for r in changed if not (r.changes or r.status_path)]),
                              ("released: no longer managed here", [d for d in dropped if d.id in released])):
            assert (sign in part) == bool(present), (block.name, sign)
        flat = " ".join(text.split())
        for record in block.records:  # held duplicates, rows skipped by decision, conflicts: listed above the blocks
            held = [f.message for f in record.findings if f.code in {HELD, DECIDED}]
            assert all(" ".join(message.split()) in flat for message in held), record.key
            assert not record.conflicts or f"≠ {block.name} › {'/'.join(map(str, record.key))}: conflict" in flat


def test_counts_are_a_line_per_block_below_100_columns_and_a_table_of_non_zero_columns_above() -> None:
    narrow, wide = _on_terminal(review_plan(), 80), _on_terminal(review_plan(), 120)
    assert "\nschools       3 create · 1 update · 1 unchanged · 1 not managed here · 1 blocked\n" \
           "              · 1 error\n" in narrow
    assert "courses       1 create · 1 blocked · 1 error\n" in narrow  # zero counts left out
    assert "block         entity       create  update  unchanged  not managed here  blocked  errors\n" in wide
    assert "warnings" not in wide.split("\n\n")[0]  # no block has one: no column


def test_a_plan_with_nothing_to_do_is_three_lines_at_80_columns() -> None:
    text = _on_terminal(no_op(1_500), 80)
    assert text.splitlines() == [
        "Plan for environment sandbox, API 5.1.0",
        "No changes: 1,500 unchanged · 1,500 not managed here.",
        "digest sha256:" + "5e" * 32,
    ]


def test_the_closing_line_carries_the_apply_command_with_the_digest_and_wraps_only_between_words() -> None:
    plan = replace(review_plan(), blocks=review_plan().blocks[3:])
    command = ["loader", "apply", "mappings/curriculum.yaml", "--env", "test"]
    screen = Console(record=True, width=80, file=io.StringIO(), force_terminal=True)
    render(plan, screen, apply_command=command)
    lines = screen.export_text().splitlines()
    at = lines.index("Apply exactly this plan:")
    assert " ".join(line.strip() for line in lines[at + 1:]) == \
        f"loader apply mappings/curriculum.yaml --env test --expect-digest {shown_digest(plan)}"
