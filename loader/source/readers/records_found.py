"""When a `records:` path finds no record: a path naming what the document does not hold (an
error), or a list that is there and empty (a source that read 0 records).

A path finds nothing for one of two reasons, and they call for different answers. `$.itemz[*]`
where the document holds `items`, or `//x:course` in a feed of `module` elements, names something
the document does not have: a typo or a changed feed, an error at the source naming the path and
what the document holds there. `$.items[*]` where `items` is `[]`, an element that would hold the
records and holds nothing, a filter or predicate that selected none, or an empty document: the
source holds no records today, which the plan judges against the history (`allow_empty:`).

The path is followed a step at a time from the document; at the first step finding nothing, it
names something absent when it is a name (a key, an element name: not `*`, an index or a filter)
looked for in what holds something. Asked only of a document where the path found no record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from xml.etree.ElementTree import Element

import jsonpath
from jsonpath.selectors import NameSelector

from loader.errors import SheetError
from loader.source.readers.xml_path import Step, evaluate
from loader.suggestions import closest

_SHOWN = 12  # the names of what the document holds listed in the message, at most
_KEPT = 1000  # and looked through for the closest


@dataclass(frozen=True)
class Missing:
    """The step of a records path that names what the document does not hold, and the names the
    document has where that step looked."""

    step: str  # as the user would write it: 'itemz', 'x:course'
    names: tuple[str, ...]


class RecordsFound:
    """Across a source's documents (files, pages, lines): whether the path found records or a place
    for them anywhere, else what the first document lacked."""

    def __init__(self) -> None:
        self.present = False
        self.missing: Missing | None = None

    def note(self, missing: Callable[[], Missing | None]) -> None:
        """A document where the path found no record: `missing` tells why (None: an empty place)."""
        if self.present:
            return
        found = missing()
        if found is None:
            self.present = True
        elif self.missing is None:
            self.missing = found

    def check(self, records: int, path: str, where: str) -> None:
        """Raise SheetError when no record was read because the path names nothing the documents hold."""
        if records or self.present or self.missing is None:
            return
        missing = self.missing
        more = ", ..." if len(missing.names) > _SHOWN else ""
        held = f" (it holds {', '.join(missing.names[:_SHOWN])}{more})" if missing.names else ""
        raise SheetError(f"the records: path {path!r} finds nothing: the document has no {missing.step!r} where the "
                         f"path looks for it{held}" + _did_you_mean(missing), where=where,
                         hint="point records: at where the records are; a list that is there but empty reads as "
                              "0 records")


def _did_you_mean(missing: Missing) -> str:
    """The name held closest to the one missing, by local name (`x:course` is not close to
    `x:module` for sharing a prefix)."""
    by_local = {name.rpartition(":")[2]: name for name in reversed(missing.names)}
    choice = closest(missing.step.rpartition(":")[2], by_local)
    return f" (did you mean {by_local[choice]!r}?)" if choice is not None else ""


def json_missing(path: jsonpath.JSONPath | jsonpath.CompoundJSONPath, document: Any) -> Missing | None:
    """Why the JSONPath `path` found no record in `document`: the name it lacks, or None (an empty
    list or object, a filter or index that selected none; a union of paths is not told apart)."""
    if not isinstance(path, jsonpath.JSONPath):
        return None
    segments = path.segments
    held: list[Any] = [document]
    for count, segment in enumerate(segments):
        found = jsonpath.JSONPath(env=path.env, segments=segments[:count + 1], pseudo_root=path.pseudo_root
                                  ).findall(document)
        if found:
            held = found
            continue
        names = [s.name for s in segment.selectors if isinstance(s, NameSelector)]
        if len(names) != len(segment.selectors) or all(not value for value in held):
            return None
        keys = (key for value in held if isinstance(value, dict) for key in value)
        return Missing(names[0], tuple(dict.fromkeys(keys))[:_KEPT])
    return None


def xml_missing(steps: Sequence[Step], root: Element, bound: Mapping[str, str],
                short: Callable[[str], str]) -> Missing | None:
    """Why the records path `steps` found no element in the document of `root`: the element name
    it lacks, or None (the element to hold the records is empty, or a predicate selected none, or
    the root holds nothing). `short` spells a tag as the mapping does (`x:course`)."""
    document = Element("")  # the document node: its one child is the root
    document.append(root)
    held = [document]
    for step in steps:
        found = _elements(step, held, bound)
        if found:
            held = found
            continue
        empty = all(len(element) == 0 for element in ([root] if held[0] is document else held))
        if empty or step.name == "*" or _elements(replace(step, predicates=()), held, bound):
            return None
        pool = (e for h in held for e in (h if step.axis == "child" else h.iter()) if e is not h)
        names = dict.fromkeys(short(e.tag) for e in pool if isinstance(e.tag, str))
        return Missing(short(step.name or ""), tuple(names)[:_KEPT])
    return None


def _elements(step: Step, held: list[Element], bound: Mapping[str, str]) -> list[Element]:
    return [e for h in held for e in evaluate((step,), h, _no_parent, bound) if isinstance(e, Element)]


def _no_parent(_: Element) -> Element | None:
    return None  # a records path has no `..`
