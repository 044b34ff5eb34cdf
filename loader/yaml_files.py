"""The one YAML loader (mapping files, loader.yaml and its `profile:`): safe loading, the place of
every node, and JSON Schema errors placed on it.

Every YAML file the loader reads (mappings, loader.yaml, decisions.yaml) is read by
`read_yaml_document` (or its two halves). `read_yaml_text` refuses what is not a small regular file
(a FIFO, `/dev/zero`: loader.files.inputs) and text that is not UTF-8 (naming line, column and
byte); `load_marked` refuses documents nested deeper than MAX_DEPTH (counted while composing,
before the recursion could grow), more than MAX_NODES values (counted while composing, and again
with every alias expanded, so "billion laughs" stops at the bound, never expanded), tags, and NUL
characters in keys and values; duplicate keys and merge keys are reported as problems at their place.

The events come from libyaml's parser when PyYAML was built with it, else from PyYAML's own: picked
once, at import (`_EventSource`); the composition above them, with its bounds, is always PyYAML's.

Mapping keys keep their source text ("Yes" stays "Yes", not True); scalar values are resolved
by the safe YAML 1.1 rules, and their source text is kept too (`raw`), so a `map:` or `where:`
value compares as the user wrote it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from loader.files.inputs import NotUtf8, decode_utf8, read_regular_file
from loader.places import MappingPlace
from loader.suggestions import did_you_mean

try:  # libyaml's scanner and parser: the same events, several times faster
    from yaml.cyaml import CParser as _EventSource
except ImportError:  # PyYAML built without libyaml
    class _EventSource(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):  # type: ignore[no-redef,misc]
        def __init__(self, stream: str):
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)

Path_ = tuple[str | int, ...]
MAX_DEPTH = 50
MAX_NODES = 200_000  # values of one document, aliases expanded: a mapping file holds far fewer
_OPENING = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = {yaml.MappingNode: "tag:yaml.org,2002:map", yaml.SequenceNode: "tag:yaml.org,2002:seq"}


@dataclass
class MarkedDocument:
    """A loaded YAML document: plain data plus the place of every value and key."""

    file: str
    data: Any
    values: dict[Path_, MappingPlace] = field(default_factory=dict)
    keys: dict[Path_, MappingPlace] = field(default_factory=dict)
    raw: dict[Path_, str] = field(default_factory=dict)
    problems: list[tuple[MappingPlace, str]] = field(default_factory=list)

    def place(self, path: Path_, *, key: bool = False) -> MappingPlace:
        """The place of the value (or key) at `path`, else of its nearest ancestor."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while probe:
            found = table.get(probe) or self.values.get(probe)
            if found is not None:
                return found
            probe = probe[:-1]
        return self.values.get((), MappingPlace(self.file, 1, 1))


class YamlSyntaxError(Exception):
    def __init__(self, place: MappingPlace, message: str):
        super().__init__(message)
        self.place = place
        self.message = message


def _place(file: str, node: yaml.Node) -> MappingPlace:
    return MappingPlace(file, node.start_mark.line + 1, node.start_mark.column + 1)


def read_yaml_text(path: Path, file: str) -> str:
    """The text of the YAML file at `path` (shown as `file`); YamlSyntaxError at the first byte that
    is not UTF-8. A missing file, or one that is not a small regular file (a FIFO, /dev/zero, a
    folder: loader.files.inputs.InputRefused), raises OSError.
    """
    return decode_yaml_text(read_regular_file(path), file)


def decode_yaml_text(data: bytes, file: str) -> str:
    """`data`, the bytes of the YAML file `file`, as text; YamlSyntaxError at the first byte that is not UTF-8."""
    try:
        return decode_utf8(data)
    except NotUtf8 as refused:
        raise YamlSyntaxError(MappingPlace(file, refused.line, refused.column), str(refused)) from None


class _BoundedLoader(_EventSource, yaml.composer.Composer, yaml.resolver.Resolver):  # type: ignore[misc]
    """Events composed into nodes no deeper than MAX_DEPTH collections (PyYAML's composer recurses
    once per level: a deep document would otherwise end in RecursionError) and no more than
    MAX_NODES of them (a huge document stops there, unread)."""

    def __init__(self, stream: str, file: str):
        _EventSource.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self._file = file
        self._depth = 0
        self._nodes = 0

    def get_single_node(self) -> yaml.Node | None:
        return yaml.composer.Composer.get_single_node(self)

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        self._nodes += 1
        if self._nodes > MAX_NODES:
            self._refuse(f"the document holds more than {MAX_NODES:,} values")
        if not self.check_event(*_OPENING):
            return yaml.composer.Composer.compose_node(self, parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                self._refuse(f"the document is nested deeper than {MAX_DEPTH} levels")
            return yaml.composer.Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1

    def _refuse(self, message: str) -> None:
        mark = self.peek_event().start_mark
        raise YamlSyntaxError(MappingPlace(self._file, mark.line + 1, mark.column + 1), message)


def read_yaml_document(path: Path, file: str) -> MarkedDocument:
    """The YAML document in the file at `path` (shown as `file`): `read_yaml_text`, then `load_marked`."""
    return load_marked(read_yaml_text(path, file), file)


def load_marked(text: str, file: str) -> MarkedDocument:
    """Parse one YAML document with the safe loader. Raises YamlSyntaxError with a place."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text, file)  # its reader refuses NUL and other control characters at once
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        place = MappingPlace(file, mark.line + 1, mark.column + 1) if mark else MappingPlace(file, 1, 1)
        if "nesting depth" in str(exc.problem):  # libyaml's own bound (1,000 levels), met while it scans ahead
            raise YamlSyntaxError(place, f"the document is nested deeper than {MAX_DEPTH} levels") from None
        raise YamlSyntaxError(place, f"invalid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(MappingPlace(file, 1, 1), f"invalid YAML: {exc}") from None
    finally:
        if loader is not None and hasattr(loader, "dispose"):
            loader.dispose()
    doc = MarkedDocument(file, None)
    if node is None:
        return doc
    counter = [0]
    try:
        doc.data = _convert(doc, yaml.SafeLoader(""), node, (), counter)
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        place = MappingPlace(file, mark.line + 1, mark.column + 1) if mark else MappingPlace(file, 1, 1)
        raise YamlSyntaxError(place, f"invalid YAML value: {exc.problem}") from None
    return doc


def _convert(doc: MarkedDocument, loader: yaml.SafeLoader, node: yaml.Node, path: Path_, counter: list[int]) -> Any:
    counter[0] += 1
    if counter[0] > MAX_NODES or len(path) > 50:
        message = f"the document holds more than {MAX_NODES:,} values (aliases expanded)" if len(path) <= 50 \
            else "the document is too deeply nested"
        raise YamlSyntaxError(_place(doc.file, node), message)
    doc.values[path] = _place(doc.file, node)
    allowed = _PLAIN_TAGS.get(type(node))
    if allowed is not None and node.tag != allowed:
        raise YamlSyntaxError(_place(doc.file, node), f"invalid YAML value: the tag {node.tag!r} is not allowed")
    if isinstance(node, yaml.MappingNode):
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                doc.problems.append((_place(doc.file, key_node), "YAML merge keys (<<) are not supported"))
                continue
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark)
            if "\x00" in key:
                raise YamlSyntaxError(_place(doc.file, key_node), "a key holds a NUL character")
            if key in result:
                doc.problems.append((_place(doc.file, key_node), f"duplicate key {key!r}"))
            doc.keys[(*path, key)] = _place(doc.file, key_node)
            result[key] = _convert(doc, loader, value_node, (*path, key), counter)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(doc, loader, item, (*path, i), counter) for i, item in enumerate(node.value)]
    doc.raw[path] = str(node.value)
    value = loader.construct_object(node, deep=True)
    if isinstance(value, str | bytes) and ("\x00" in value if isinstance(value, str) else b"\x00" in value):
        raise YamlSyntaxError(_place(doc.file, node), "the value holds a NUL character")
    if isinstance(value, datetime | date):
        return value.isoformat()  # a date constant is meant as its ISO text
    return value


# ---- schema errors -----------------------------------------------------------------------


def _yaml_type(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"text ({value!r})"
    if isinstance(value, list):
        return "a list"
    return "a map"


_TYPE_WORDS = {"object": "a map", "array": "a list", "string": "text", "integer": "a whole number",
               "number": "a number", "boolean": "true or false", "null": "nothing"}


def _leaf_errors(error: jsonschema.ValidationError) -> Iterator[jsonschema.ValidationError]:
    """Replace a oneOf/anyOf error by the errors of the branch whose type matched, when one did."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[Any, list[jsonschema.ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        matching = [
            subs for subs in branches.values()
            if not any(s.validator == "type" and not s.relative_path for s in subs)
        ]
        if len(matching) == 1:
            for sub in matching[0]:
                yield from _leaf_errors(sub)
            return
    yield error


# A schema's rules for editors alone (completion, a squiggle under a wrong field) whose errors the
# loader's own checks say better: `loader.source.mapping_schema_build`.
EDITOR_ONLY = "x-editor-only"


def schema_problems(doc: MarkedDocument, schema: Mapping[str, Any]) -> list[tuple[Path_, MappingPlace, str]]:
    """Every schema violation as (path, place, message saying what is expected there), but those of
    rules marked `x-editor-only`."""
    validator = jsonschema.Draft202012Validator(schema)
    found: list[tuple[Path_, MappingPlace, str]] = []
    for top in validator.iter_errors(doc.data):
        for error in _leaf_errors(top):
            if not (isinstance(error.schema, Mapping) and error.schema.get(EDITOR_ONLY)):
                found.extend(_describe(doc, error))
    found.sort(key=lambda item: (item[1].line, item[1].col))
    return found


def _describe(doc: MarkedDocument, error: jsonschema.ValidationError) -> list[tuple[Path_, MappingPlace, str]]:
    path: Path_ = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        return _unknown_keys(doc, path, list(schema.get("properties", {})), error.instance)
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in str(error.message) else str(error.message)
        return [(path, doc.place(path), f"missing `{missing}`" + _expected_suffix(schema))]
    return [(path, doc.place(path), _expectation(error, schema.get("x-expected")))]


def _unknown_keys(
    doc: MarkedDocument, path: Path_, allowed: list[str], instance: Mapping[str, Any]
) -> list[tuple[Path_, MappingPlace, str]]:
    """One problem per key the schema does not allow, pointing at that key."""
    out = []
    for extra in instance:
        if extra in allowed:
            continue
        message = f"unknown key {extra!r}"
        if allowed:
            message += f"; expected one of: {', '.join(allowed)}"
            message += did_you_mean(extra, allowed)
        out.append(((*path, extra), doc.place((*path, extra), key=True), message))
    return out


def _expectation(error: jsonschema.ValidationError, expected: Any) -> str:
    """What the schema wanted at the error's place and what the file has there, in YAML words."""
    instance = error.instance
    if error.validator in ("minProperties", "minItems") and error.validator_value == 1:
        return "expected at least one entry, got none"
    if error.validator == "minLength" and error.validator_value == 1:
        return "expected some text, got an empty string"
    if expected:
        return f"expected {expected}" + ("" if isinstance(instance, dict) else f", got {_yaml_type(instance)}")
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return f"expected {' or '.join(_TYPE_WORDS.get(str(w), str(w)) for w in wanted)}, got {_yaml_type(instance)}"
    if error.validator == "enum":
        choices = [str(v) for v in error.validator_value]
        message = f"expected one of: {', '.join(choices)}; got {_yaml_type(instance)}"
        return message + did_you_mean(instance, choices) if isinstance(instance, str) else message
    if error.validator == "const":
        return f"expected {error.validator_value!r}, got {_yaml_type(instance)}"
    return str(error.message)


def _expected_suffix(schema: Mapping[str, Any]) -> str:
    expected = schema.get("x-expected")
    return f" (expected {expected})" if expected else ""
