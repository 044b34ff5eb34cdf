"""What `--format json` and `--format github` add to a command's human text, per command.

`json`: the command's one JSON document on stdout (loader.report.machine). `github`: workflow
annotations for its findings on stdout and a Markdown job summary (loader.report.github).
`text`: nothing. Each function takes the `--format` value as given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loader.apply.results import ANSWER_LOST_ADOPTED
from loader.errors import LoaderError, exit_code_for
from loader.findings import Finding
from loader.redaction import redact
from loader.report import github, machine
from loader.report.finding_groups import source_findings
from loader.words import plural

if TYPE_CHECKING:
    from loader.apply.results import Results
    from loader.plan.model import Plan
    from loader.source.sources import SourceSet


def print_validate_output(output: str, sources: SourceSet, exit_code: int,
                          tests: dict[str, object] | None = None) -> None:
    """`tests`: the document of the mapping tests validate ran (`loader.report.mapping_tests`), if any."""
    if output == "json":
        document = machine.validate_document(sources, exit_code)
        print(machine.dumps({**document, "tests": tests} if tests is not None else document))
    elif output == "github":
        github.print_annotations(source_findings(sources))
        github.write_summary(github.validate_summary(machine.validate_document(sources, exit_code)))


def print_plan_output(output: str, plan: Plan, exit_code: int) -> None:
    if output == "json":
        print(machine.dumps(machine.plan_document(plan, exit_code)))
    elif output == "github":
        from loader.report.markdown import render as render_markdown
        from loader.report.shown_findings import shown_findings

        github.print_annotations(shown_findings(plan))
        github.print_conflict_annotations(plan)
        github.write_summary(render_markdown(plan))


def print_apply_output(output: str, results: Results | None, exit_code: int, plan: Plan) -> None:
    """`results` None: nothing was applied (the service already matched)."""
    if output == "text":
        return
    document = machine.apply_document(results, exit_code, plan)
    if output == "json":
        print(machine.dumps(document))
    else:
        github.failed_annotations(document)
        github.write_summary(github.apply_summary(document) + _adopted_note(document))


def _adopted_note(document: dict[str, object]) -> str:
    """The job summary's line on creates whose answer was lost and which were found and adopted."""
    records = document.get("records")
    lost = sum(1 for r in records if r.get("message") == ANSWER_LOST_ADOPTED) if isinstance(records, list) else 0
    return f"\n{plural(lost, 'create')} {ANSWER_LOST_ADOPTED} (found under their key).\n" if lost else ""


def print_error_output(output: str, command: str, error: LoaderError) -> None:
    """An error that ended `command`: with json its one document, with github an annotation; every
    text redacted, as the error line on stderr is."""
    if output == "json":
        hint = None if error.hint is None else redact(error.hint)
        document = machine.error_document(command, redact(error.message), error.where, hint, exit_code_for(error))
        print(machine.dumps(document))
    elif output == "github":
        # A place named only in words goes into the message; a structured one becomes file/line/col.
        place = None if isinstance(error.where, str) else error.where
        message = redact(error.message if place is not None or not error.where else f"{error.where}: {error.message}")
        print(github.annotation(Finding("error", type(error).__name__, message, place), "loader"))
