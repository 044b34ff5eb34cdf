"""Entity payload schemas (schemas/entities/*.schema.json) and checking records against them.

References are resolved by the planner, so a record is checked with each `Ref` replaced by a
placeholder of the shape the profile gives (an id string, or {"id": ...}).

A problem of a field marked `pii: true` says what was expected without the value (contract
section 7): `quoted` from the planner hides it, as in every other report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema

from loader.files.package_data import schema as package_schema
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM
from loader.source.records import Ref, quoted

PLACEHOLDER_ID = "00000000-0000-0000-0000-000000000000"

# The value type a field gets when its mapping gives no `type`, from the schema's type.
_DEFAULT_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "array": "list"}


@dataclass(frozen=True)
class FieldProblem:
    """A schema violation of one field (`custom_attributes.<Label>` for a custom attribute)."""

    field: str
    message: str
    cause: str = ""  # the message without the value found ("expected integer"), where it names one


@cache
def payload_schema(name: str) -> dict[str, Any]:
    """The schema file `name` of package `loader.schemas.entities`."""
    return package_schema(name, "loader.schemas.entities")


@cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(payload_schema(name))


def schema_of(entity: EntityProfile) -> dict[str, Any] | None:
    return payload_schema(entity.schema) if entity.schema else None


def field_names(entity: EntityProfile) -> tuple[str, ...]:
    schema = schema_of(entity)
    return tuple(schema.get("properties", {})) if schema else ()


def default_type(entity: EntityProfile, field: str) -> str:
    """The value type a mapped field gets without `type:` (date fields become ISO dates)."""
    schema = schema_of(entity) or {}
    spec = schema.get("properties", {}).get(field, {})
    if spec.get("format") == "date":
        return "date"
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k in _DEFAULT_TYPES), None)
    return _DEFAULT_TYPES.get(kind or "string", "string")


def _placeholder(entity: EntityProfile, field: str, value: Any) -> Any:
    if isinstance(value, Ref):
        reference = entity.references.get(field)
        return {"id": PLACEHOLDER_ID} if reference and reference.shape == "object_id" else PLACEHOLDER_ID
    if isinstance(value, tuple | list):
        return [_placeholder(entity, field, v) for v in value]
    return value


@dataclass(frozen=True)
class ValueChecks:
    """Predicates over one value that is not None, made once per block: True only when
    `check_fields` would find nothing wrong with that value (a Ref checked as its placeholder).
    A field without a predicate (and a label, without `label`) must go through `check_fields`."""

    fields: Mapping[str, Callable[[Any], bool]]
    label: Callable[[Any], bool] | None  # one custom attribute's value
    any_text: frozenset[str] = frozenset()  # fields whose schema takes any text that is not empty
    label_any_text: bool = False  # the same for a custom attribute's value


def value_checks(entity: EntityProfile) -> ValueChecks:
    if not entity.schema:
        return ValueChecks({}, None)
    checks = {name: _with_references(entity, name, check) for name, check in _fast_checks(entity.schema).items()}
    custom = payload_schema(entity.schema).get("properties", {}).get(CUSTOM, {})
    label_spec = custom.get("additionalProperties")
    plain_map = set(custom) - _NEUTRAL <= {"type", "additionalProperties"} and custom.get("type") == "object"
    label = _compile(label_spec) if plain_map and isinstance(label_spec, Mapping) else None
    properties = payload_schema(entity.schema).get("properties", {})
    any_text = frozenset(name for name in checks if name not in entity.references and _takes_any_text(properties[name]))
    label_any_text = label is not None and isinstance(label_spec, Mapping) and _takes_any_text(label_spec)
    return ValueChecks(checks, label, any_text, label_any_text)


def _takes_any_text(spec: Mapping[str, Any]) -> bool:
    """`type: string`, with at most `minLength: 1` (and words for people): every text but "" passes."""
    keywords = set(spec) - _NEUTRAL
    if spec.get("type") != "string" or not keywords <= {"type", "minLength"}:
        return False
    return int(spec.get("minLength", 0)) <= 1


def fields_checker(entity: EntityProfile, checks: ValueChecks) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate made once per block: True only when `check_fields(entity, fields)` would find
    nothing (False sends the record to `check_fields` for the findings).

    `checks` are `value_checks(entity)`: references are checked as their placeholder.
    """
    if not entity.schema:
        return lambda fields: True
    get = checks.fields.get

    def valid(fields: Mapping[str, Any]) -> bool:
        for name, value in fields.items():
            if value is None:
                continue  # None clears an optional field
            check = get(name)
            if check is None or not check(value):
                return False
        return True

    return valid


def _with_references(entity: EntityProfile, field: str, check: Check) -> Check:
    """`check` over a field's value with every Ref in it standing for its placeholder."""
    if field not in entity.references:
        return check
    placeholder = _placeholder(entity, field, Ref(entity.name, ("",)))
    reference_passes = check(placeholder)

    def checked(value: Any) -> bool:
        if isinstance(value, Ref):
            return reference_passes
        return check(_placeholder(entity, field, value))

    return checked


def check_fields(
    entity: EntityProfile, fields: Mapping[str, Any], pii: Collection[str] = frozenset()
) -> list[FieldProblem]:
    """Schema violations of a record's fields; [] when valid or when the entity has no schema.

    `pii` names the fields (`custom_attributes.<Label>` for a label) whose values stay out of messages.
    """
    if not entity.schema:
        return []
    # None clears an optional field (a PATCH sends null), so it is never a violation here.
    instance = {k: _placeholder(entity, k, v) for k, v in fields.items() if v is not None}
    # jsonschema costs ~25 µs a field; the compiled checks settle the common, valid case first.
    checks = _fast_checks(entity.schema)
    for name, value in instance.items():
        check = checks.get(name)
        if check is None or not check(value):
            break
    else:
        return []
    validator = _validator(entity.schema)
    return list(_problems(validator.iter_errors(instance), frozenset(pii)))


Check = Callable[[Any], bool]
_SIMPLE_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list | tuple),
}
_NEUTRAL = frozenset({"description", "title", "format", "$comment", "examples"})
_TOP_LEVEL = frozenset({"$schema", "$id", "type", "additionalProperties", "properties"})


@cache
def _fast_checks(name: str) -> dict[str, Check]:
    """Per-field predicates for the simple keywords our schemas use; a field using others is left out.

    A predicate only ever says True when jsonschema would accept the value too.
    """
    schema = payload_schema(name)
    if set(schema) - _NEUTRAL - _TOP_LEVEL or schema.get("type") != "object" or \
            schema.get("additionalProperties") is not False:
        return {}  # a keyword over the whole record (`required`, ...): jsonschema decides every record
    properties = schema.get("properties", {})
    compiled = {field: _compile(spec) for field, spec in properties.items()}
    return {field: check for field, check in compiled.items() if check is not None}


def _enum(allowed: tuple[Any, ...]) -> Check:
    return lambda v: any(v == a and type(v) is type(a) for a in allowed)


def _min_length(n: int) -> Check:
    return lambda v: not isinstance(v, str) or len(v) >= n


def _pattern(expression: str) -> Check:
    search = re.compile(expression).search
    return lambda v: not isinstance(v, str) or search(v) is not None


def _items(item: Check) -> Check:
    def check(v: Any) -> bool:
        if isinstance(v, list | tuple):
            for i in v:
                if not item(i):
                    return False
        return True

    return check


def _values(value_check: Check) -> Check:
    def check(v: Any) -> bool:
        if isinstance(v, dict):
            for i in v.values():
                if not value_check(i):
                    return False
        return True

    return check


def _text_of_length(n: int) -> Check:
    return lambda v: isinstance(v, str) and len(v) >= n


def _object(properties: Mapping[str, Check], required: tuple[str, ...], closed: bool) -> Check:
    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        if any(name not in v for name in required):
            return False
        for name, item in v.items():
            item_check = properties.get(name)
            if item_check is None:
                if closed:
                    return False
            elif not item_check(item):
                return False
        return True

    return check


def _compile(spec: Mapping[str, Any]) -> Check | None:
    checks: list[Check] = []
    if "properties" in spec:
        # An object of known fields ({"id": ...}): every property simple, extra ones either refused
        # (`additionalProperties: false`) or unchecked (absent).
        extra = spec.get("additionalProperties", True)
        properties = {name: _compile(item) for name, item in spec["properties"].items()}
        if extra not in (True, False) or not all(isinstance(name, str) for name in spec.get("required", [])):
            return None
        known = {name: item for name, item in properties.items() if item is not None}
        if len(known) < len(properties):
            return None
        checks.append(_object(known, tuple(spec.get("required", ())), closed=extra is False))
        spec = {k: v for k, v in spec.items() if k not in ("properties", "required", "additionalProperties")}
    for keyword, expected in spec.items():
        if keyword in _NEUTRAL:
            continue
        if keyword == "type" and isinstance(expected, str) and expected in _SIMPLE_TYPES:
            checks.append(_SIMPLE_TYPES[expected])
        elif keyword == "enum":
            checks.append(_enum(tuple(expected)))
        elif keyword == "minLength":
            checks.append(_min_length(int(expected)))
        elif keyword == "pattern":
            checks.append(_pattern(expected))
        elif keyword == "items" and isinstance(expected, Mapping):
            item = _compile(expected)
            if item is None:
                return None
            checks.append(_items(item))
        elif keyword == "additionalProperties" and isinstance(expected, Mapping) and "properties" not in spec:
            value_check = _compile(expected)
            if value_check is None:
                return None
            checks.append(_values(value_check))
        else:
            return None
    if spec.get("type") == "string" and set(spec) - _NEUTRAL == {"type", "minLength"}:
        return _text_of_length(int(spec["minLength"]))  # the most common pair, as one test
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    return lambda v: all(check(v) for check in checks)


def _problems(errors: Iterator[jsonschema.ValidationError], pii: frozenset[str]) -> Iterator[FieldProblem]:
    for error in errors:
        path = list(error.absolute_path)
        if not path:
            if error.validator == "additionalProperties":
                known = ", ".join(error.schema.get("properties", {}))
                for extra in set(error.instance) - set(error.schema.get("properties", {})):
                    yield FieldProblem(str(extra), f"unknown field {extra!r}; the payload has: {known}")
                continue
            yield FieldProblem("", _message(error, hide=bool(pii)))
            continue
        field = str(path[0])
        if field == CUSTOM and len(path) > 1:
            field = f"{CUSTOM}.{path[1]}"
        yield _problem(field, error, _holds_pii(field, pii))


def _problem(field: str, error: jsonschema.ValidationError, hide: bool) -> FieldProblem:
    """The problem, with what it says of every value it is found on ("expected integer", of
    "expected integer, got 'ten'") as its cause."""
    message = _message(error, hide)
    said, got, _ = message.rpartition(", got ")
    return FieldProblem(field, message, said if got and str(error.validator) in _DESCRIBED else "")


_DESCRIBED = frozenset({"enum", "type", "pattern", "minLength", "maxLength"})


def _holds_pii(field: str, pii: frozenset[str]) -> bool:
    """Whether a problem's value is, or holds, a PII value (`custom_attributes` holds its labels')."""
    return field in pii or any(name.startswith(field + ".") for name in pii)


def _message(error: jsonschema.ValidationError, hide: bool) -> str:
    shown = quoted(error.instance, hide)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    describe: dict[str, Callable[[], str]] = {
        "enum": lambda: f"expected one of {', '.join(map(str, error.validator_value))}, got {shown}",
        "type": lambda: f"expected {error.validator_value}, got {shown}",
        "pattern": lambda: f"expected text matching {error.validator_value!r}, got {shown}",
        "minLength": lambda: f"expected at least {error.validator_value} character(s), got {shown}",
        "maxLength": lambda: f"expected at most {error.validator_value} character(s), got {shown}",
    }
    maker = describe.get(str(error.validator))
    if maker:
        return maker()
    # jsonschema's own messages quote the value, except those that name only fields.
    if hide and error.validator not in ("required", "additionalProperties", "dependentRequired"):
        return f"the value {shown} fails the schema's {error.validator!r} check"
    return str(error.message)
