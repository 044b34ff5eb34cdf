"""What `loader test` shows: each failing case with its record and a field-by-field diff, a line
per passing case, and a total; the same as one JSON document, or as GitHub annotations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from loader.plan.mapping_tests.compare import Failure
from loader.plan.mapping_tests.run import CaseResult, FileResult
from loader.words import plural


def _shown(value: Any) -> str:
    return value if isinstance(value, str) and value.startswith("(") else json.dumps(value, ensure_ascii=False)


def failure_lines(failure: Failure) -> list[str]:
    """A failure, then its diff as a table: field, expected, built."""
    lines = [f"  {failure.message}"]
    if failure.diffs:
        width = max(len("field"), *(len(d.field) for d in failure.diffs))
        rows = [(d.field, _shown(d.expected), _shown(d.built)) for d in failure.diffs]
        expected_width = max(len("expected"), *(len(r[1]) for r in rows))
        lines.append(f"    {'field':<{width}}  {'expected':<{expected_width}}  built")
        lines += [f"    {f:<{width}}  {e:<{expected_width}}  {b}" for f, e, b in rows]
    return lines


def summary(results: Sequence[FileResult]) -> str:
    cases = [c for r in results for c in r.cases]
    failed = sum(1 for c in cases if not c.passed) + sum(1 for r in results if r.problem)
    drafts = sum(1 for r in results if r.draft)
    text = f"{plural(len(cases), 'case')} in {plural(len(results), 'test file')}: "
    text += f"{plural(failed, 'failure')}" if failed else "all passed"
    if drafts:
        text += f"; {plural(drafts, 'draft test')}: review {'it' if drafts == 1 else 'them'}"
    return text


def print_results(results: Sequence[FileResult], out: TextIO, *, passing: bool = True) -> None:
    """Each test file's cases (the passing ones on one line each, unless `passing` is False), then the total."""
    for result in results:
        if result.problem:
            print(f"ERROR {result.test}: {result.problem}", file=out)
            continue
        draft = " (draft: review it)" if result.draft else ""
        for case in result.cases:
            if case.passed:
                if passing:
                    print(f"ok    {result.test} › {case.name}{draft}", file=out)
                continue
            print(f"FAIL  {case.place} › {case.name} (mapping {result.mapping}){draft}", file=out)
            for failure in case.failures:
                for line in failure_lines(failure):
                    print(line, file=out)
    print(summary(results), file=out)


def _case_json(case: CaseResult) -> dict[str, Any]:
    return {
        "name": case.name, "place": str(case.place), "passed": case.passed,
        "failures": [{"message": f.message, "record": f.record or None,
                      "diffs": [{"field": d.field, "expected": d.expected, "built": d.built} for d in f.diffs]}
                     for f in case.failures],
    }


def results_document(results: Sequence[FileResult], exit_code: int) -> dict[str, Any]:
    """The JSON document of `loader test --format json`."""
    cases = [c for r in results for c in r.cases]
    return {
        "command": "test", "exit_code": exit_code,
        "counts": {"files": len(results), "cases": len(cases), "failed": sum(1 for c in cases if not c.passed),
                   "problems": sum(1 for r in results if r.problem), "drafts": sum(1 for r in results if r.draft)},
        "tests": [{"file": r.test, "mapping": r.mapping or None, "draft": r.draft, "problem": r.problem,
                   "cases": [_case_json(c) for c in r.cases]} for r in results],
    }


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def print_annotations(results: Sequence[FileResult], out: TextIO) -> None:
    """A workflow annotation per failing case (at its line in the test file) and per test file that
    could not run; a warning per draft test."""
    for result in results:
        if result.problem:
            print(f"::error file={_escape(result.test, prop=True)},title=loader test::{_escape(result.problem)}",
                  file=out)
        if result.draft:
            print(f"::warning file={_escape(result.test, prop=True)},title=loader test::"
                  "a draft test written from synthetic values: review it, then remove `draft: true`", file=out)
        for case in result.cases:
            if case.passed:
                continue
            text = "\n".join([case.name] + [line for f in case.failures for line in failure_lines(f)])
            print(f"::error file={_escape(case.place.file, prop=True)},line={case.place.line},col={case.place.col},"
                  f"title={_escape('loader test: ' + case.name, prop=True)}::{_escape(text)}", file=out)
