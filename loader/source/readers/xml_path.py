"""The XPath subset of XML sources: `records:` paths matched while streaming, field paths
evaluated from a record.

A path is steps separated by `/`: an element name (`dc:title`, `*`), an attribute (`@dtf`,
`@xsi:type`) as the last step, `..` (the parent: from a record, its ancestors), `.`, and `//`
(any depth below). A step may carry predicates: a position (`[1]`, among the siblings the step
found), an attribute (`[@xml:lang]`, `[@xml:lang='en']`), or a child (`[dc:identifier]`,
`[dc:identifier='X1']`). Names resolve through the mapping's `namespaces:`, as in XPath 1.0: an
unprefixed name has no namespace (a document with a default namespace needs a prefix for it);
the prefix `xml` is always known. A predicate's value is compared as text, or, when it is a
prefixed name whose prefix the mapping declares, as a qualified name: `[@xsi:type='cdp:internalID']`
(cdp: http://xcri.co.uk) matches `xsi:type="courseDataProgramme:internalID"` in a document that
binds courseDataProgramme to the same namespace.

A `records:` path is absolute (`/catalog/provider/course`) or starts with `//`; its predicates
may test attributes and positions only, since a record is recognised when its start tag is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from xml.etree.ElementTree import Element

from loader.errors import SheetError

XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace"
Axis = Literal["child", "descendant", "parent", "self", "attribute"]
_PREDICATE = re.compile(r"""\[\s*(?:(?P<position>\d+)|(?P<at>@)?(?P<name>[\w.\-:*]+)
                        (?:\s*=\s*(?:'(?P<single>[^']*)'|"(?P<double>[^"]*)"))?)\s*\]""", re.VERBOSE)
_NAME = re.compile(r"[A-Za-z_][\w.\-]*(?::[A-Za-z_][\w.\-]*)?|\*")
_HINT = "e.g. dc:title, x:presentation[1]/mlo:start/@dtf, ../dc:identifier[@xsi:type='cdp:internalID']"


@dataclass(frozen=True)
class Predicate:
    """`[3]`, `[@name]`, `[@name='v']`, `[name]` or `[name='v']`."""

    position: int | None = None
    attribute: bool = False
    name: str | None = None  # Clark notation: {uri}local
    value: str | None = None
    qualified: str | None = None  # the value as a qualified name ({uri}local), when it is one


@dataclass(frozen=True)
class Step:
    axis: Axis
    name: str | None  # Clark notation, "*", or None for `..` and `.`
    predicates: tuple[Predicate, ...] = ()


Found = Element | str


def parse_path(text: str, namespaces: Mapping[str, str], where: str) -> tuple[Step, ...]:
    """The steps of `text` (a leading `/` is dropped: a records path is matched from the root)."""
    body = text.strip()
    if not body:
        raise SheetError("an empty XML path", where=where, hint=_HINT)
    descendant = body.startswith("//")
    body = body[2:] if descendant else body.lstrip("/")
    steps: list[Step] = []
    for part in _split(body, text, where):
        if part == "":
            if descendant:
                raise SheetError(f"the XML path {text!r} has /// or a trailing /", where=where, hint=_HINT)
            descendant = True
            continue
        steps.append(_step(part, "descendant" if descendant else "child", namespaces, text, where))
        descendant = False
    if any(step.axis == "attribute" for step in steps[:-1]):
        raise SheetError(f"in the XML path {text!r} an attribute (@) can only be the last step", where=where,
                         hint=_HINT)
    return tuple(steps)


def _split(body: str, text: str, where: str) -> list[str]:
    parts, current, depth, quote = [], "", 0, ""
    for char in body:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "/" and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    if depth or quote:
        raise SheetError(f"the XML path {text!r} has an unclosed [ or quote", where=where, hint=_HINT)
    return [*parts, current]


def _step(part: str, axis: Axis, namespaces: Mapping[str, str], text: str, where: str) -> Step:
    if part in ("..", "."):
        if axis == "descendant":
            raise SheetError(f"the XML path {text!r} has //.. or //.", where=where, hint=_HINT)
        return Step("parent" if part == ".." else "self", None)
    bracket = part.find("[")
    head, rest = (part, "") if bracket < 0 else (part[:bracket], part[bracket:])
    attribute = head.startswith("@")
    name = head[1:] if attribute else head
    if not _NAME.fullmatch(name):
        raise SheetError(f"the XML path {text!r} has a step {part!r} that is not a name", where=where, hint=_HINT)
    predicates = []
    while rest:
        match = _PREDICATE.match(rest)
        if match is None:
            raise SheetError(f"the XML path {text!r} has a predicate the loader does not read: {rest!r}",
                             where=where, hint="predicates: [1], [@a], [@a='v'], [child], [child='v']")
        predicates.append(_predicate(match, namespaces, text, where))
        rest = rest[match.end():]
    if attribute and predicates:
        raise SheetError(f"the XML path {text!r} gives an attribute a predicate", where=where, hint=_HINT)
    return Step("attribute" if attribute else axis, clark(name, namespaces, text, where, attribute), tuple(predicates))


def _predicate(match: re.Match[str], namespaces: Mapping[str, str], text: str, where: str) -> Predicate:
    if match["position"]:
        return Predicate(position=int(match["position"]))
    value = match["single"] if match["single"] is not None else match["double"]
    attribute = bool(match["at"])
    prefix, colon, local = (value or "").partition(":")
    qualified = f"{{{namespaces[prefix]}}}{local}" if colon and prefix in namespaces else None
    return Predicate(attribute=attribute, name=clark(match["name"], namespaces, text, where, attribute), value=value,
                     qualified=qualified)


def clark(name: str, namespaces: Mapping[str, str], text: str, where: str, attribute: bool = False) -> str:
    """`prefix:local` as `{uri}local` (unprefixed: no namespace; `*` stays)."""
    if name == "*" or ":" not in name:
        return name
    prefix, local = name.split(":", 1)
    uri = XML_NAMESPACE if prefix == "xml" else namespaces.get(prefix)
    if uri is None:
        known = ", ".join(sorted(namespaces)) or "none"
        raise SheetError(f"the XML path {text!r} uses the prefix {prefix!r}, which namespaces: does not declare "
                         f"(it declares: {known})", where=where,
                         hint=f"add {prefix}: <its namespace URI> to namespaces:")
    return f"{{{uri}}}{local}"


def name_matches(name: str | None, tag: object) -> bool:
    return isinstance(tag, str) and (name == "*" or name == tag)


def record_predicates_ok(steps: Sequence[Step], text: str, where: str) -> None:
    """Refuse what a records path cannot test at a start tag: child predicates, `..`, attributes."""
    for step in steps:
        if step.axis not in ("child", "descendant") or any(p.name is not None and not p.attribute
                                                             for p in step.predicates):
            raise SheetError(f"the records path {text!r} can name elements, positions and attributes only",
                             where=where, hint="e.g. //x:course, /catalog/x:provider/x:course[@type='x']")


def matches_stack(steps: Sequence[Step], stack: Sequence[Element], positions: Sequence[int],
                  bound: Mapping[str, str]) -> bool:
    """Whether the open elements `stack` (root first), with their positions among same-named
    siblings, are matched by a records path. `bound`: the document's prefixes and their URIs."""

    def step_ok(step: Step, at: int) -> bool:
        element = stack[at]
        return name_matches(step.name, element.tag) and all(
            positions[at] == p.position if p.position is not None else _attribute_ok(element, p, bound)
            for p in step.predicates)

    def from_(i: int, j: int) -> bool:
        if i == len(steps):
            return j == len(stack)
        step = steps[i]
        if step.axis == "child":
            return j < len(stack) and step_ok(step, j) and from_(i + 1, j + 1)
        return any(step_ok(step, k) and from_(i + 1, k + 1) for k in range(j, len(stack)))

    return from_(0, 0)


def _attribute_ok(element: Element, predicate: Predicate, bound: Mapping[str, str]) -> bool:
    found = element.get(predicate.name or "")
    return found is not None and _equal(found, predicate, bound)


def _equal(found: str, predicate: Predicate, bound: Mapping[str, str]) -> bool:
    if predicate.value is None or found == predicate.value:
        return True
    if predicate.qualified is None:
        return False
    prefix, colon, local = found.strip().partition(":")
    return bool(colon) and prefix in bound and f"{{{bound[prefix]}}}{local}" == predicate.qualified


def evaluate(steps: Sequence[Step], start: Element, parent_of: Callable[[Element], Element | None],
             bound: Mapping[str, str]) -> list[Found]:
    """What a field path finds from `start`: elements, or attribute values for an `@` last step.
    `bound`: the document's prefixes and their URIs (for qualified-name predicate values)."""
    current: list[Found] = [start]
    for step in steps:
        following: list[Found] = []
        for node in current:
            if isinstance(node, Element):
                following.extend(_apply(step, node, parent_of, bound))
        current = following
    return current


def _apply(step: Step, node: Element, parent_of: Callable[[Element], Element | None],
           bound: Mapping[str, str]) -> list[Found]:
    if step.axis == "self":
        return [node]
    if step.axis == "parent":
        parent = parent_of(node)
        return [] if parent is None else [parent]
    if step.axis == "attribute":
        value = node.get(step.name or "")
        return [] if value is None else [value]
    pool = list(node) if step.axis == "child" else [e for e in node.iter() if e is not node]
    found: list[Element] = [e for e in pool if name_matches(step.name, e.tag)]
    for predicate in step.predicates:
        found = _filtered(found, predicate, bound)
    return list(found)


def _filtered(found: list[Element], predicate: Predicate, bound: Mapping[str, str]) -> list[Element]:
    if predicate.position is not None:
        return found[predicate.position - 1:predicate.position] if predicate.position >= 1 else []
    if predicate.attribute:
        return [e for e in found if _attribute_ok(e, predicate, bound)]
    return [e for e in found if any(
        name_matches(predicate.name, child.tag) and _equal(text_of(child), predicate, bound) for child in e)]


def text_of(element: Element) -> str:
    """An element's text: all the text inside it, surrounding whitespace dropped."""
    return "".join(element.itertext()).strip()
