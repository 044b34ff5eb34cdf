"""docs/commands.md's reference is the parser's help as docs/commands_page.py renders it now: an
option added, renamed or re-described without rerunning the script fails here."""

from __future__ import annotations

from types import ModuleType

from helpers.docs_scripts import docs_script


def _page_module() -> ModuleType:
    return docs_script("commands_page")


def test_the_committed_commands_page_is_current() -> None:
    page = _page_module()
    text = page.PAGE.read_text(encoding="utf-8")
    assert text == page.current_page(text), "run `python docs/commands_page.py`"


def test_the_reference_has_every_command_and_option_including_review_and_by() -> None:
    reference = _page_module().reference()
    for name in ("validate", "plan", "apply", "show", "history", "pull", "completion"):
        assert f"\n### loader {name}\n" in reference
    plan = reference[reference.index("### loader plan"):reference.index("### loader apply")]
    apply = reference[reference.index("### loader apply"):reference.index("### loader pull")]
    assert "--review review.xlsx" in plan and "--by NAME" in apply and "--no-color" in apply


def test_a_stale_page_is_told_apart() -> None:
    page = _page_module()
    text = page.PAGE.read_text(encoding="utf-8")
    stale = text.replace("--by NAME", "--who NAME")
    assert stale != text and page.current_page(stale) == text
