"""Entity payload schemas (schemas/entities/*.schema.json) and checking records against them.

References are resolved by the planner, so a record is checked with each `Ref` replaced by a
placeholder of the shape the profile gives (an id string, or {"id": ...}).

A problem of a field marked `pii: true` says what was expected without the value (contract
section 7): `quoted` from the planner hides it, as in every other report.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema_rs

from loader.files.package_data import schema as package_schema
from loader.profile import EntityProfile
from loader.record_fields import CUSTOM
from loader.source.records import Ref, quoted
from loader.words import plural

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
def _validator(name: str) -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(payload_schema(name))


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
    """Each field's check (and a label's), from its part of the entity's schema; none where the
    schema has keywords over the whole record (`required`, ...), which only `check_fields` decides."""
    if not entity.schema:
        return ValueChecks({}, None)
    schema = payload_schema(entity.schema)
    if set(schema) - _NEUTRAL - _TOP_LEVEL or schema.get("type") != "object" or \
            schema.get("additionalProperties") is not False:
        return ValueChecks({}, None)
    properties: dict[str, Any] = schema.get("properties", {})
    checks = {name: _with_references(entity, name, _value_check(spec)) for name, spec in properties.items()}
    custom = properties.get(CUSTOM, {})
    label_spec = custom.get("additionalProperties")
    plain_map = set(custom) - _NEUTRAL <= {"type", "additionalProperties"} and custom.get("type") == "object"
    label = _value_check(label_spec) if plain_map and isinstance(label_spec, Mapping) else None
    any_text = frozenset(name for name in checks if name not in entity.references and _takes_any_text(properties[name]))
    label_any_text = label is not None and isinstance(label_spec, Mapping) and _takes_any_text(label_spec)
    return ValueChecks(checks, label, any_text, label_any_text)


_NEUTRAL = frozenset({"description", "title", "format", "$comment", "examples"})
_TOP_LEVEL = frozenset({"$schema", "$id", "type", "additionalProperties", "properties"})
Check = Callable[[Any], bool]


def _value_check(spec: Mapping[str, Any]) -> Check:
    """The schema's verdict on one value; False for a value JSON has no type for (it is refused)."""
    is_valid = jsonschema_rs.Draft202012Validator(dict(spec)).is_valid

    def check(value: Any) -> bool:
        try:
            return is_valid(value)
        except ValueError:  # not a JSON value (a date, an object): check_fields names it
            return False

    return check


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
    validator = _validator(entity.schema)
    try:
        if validator.is_valid(instance):
            return []
        errors = list(validator.iter_errors(instance))
    except ValueError:  # a value JSON has no type for
        return [_not_json(name, value, _holds_pii(name, frozenset(pii))) for name, value in instance.items()
                if not _is_json(value)]
    return list(_problems(errors, payload_schema(entity.schema), frozenset(pii)))


def _is_json(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(map(_is_json, value))
    return value is None or isinstance(value, str | int | float | bool)


def _not_json(field: str, value: Any, hide: bool) -> FieldProblem:
    return FieldProblem(field, f"expected text, a number, true/false or a list, got {quoted(value, hide)}")


def _problems(
    errors: list[jsonschema_rs.ValidationError], schema: Mapping[str, Any], pii: frozenset[str]
) -> Iterator[FieldProblem]:
    for error in errors:
        path = list(error.instance_path)
        keyword = error.kind.name
        if not path:
            if keyword == "additionalProperties":
                known = ", ".join(schema.get("properties", {}))
                found = error.instance if isinstance(error.instance, dict) else {}
                for extra in set(found) - set(schema.get("properties", {})):
                    yield FieldProblem(str(extra), f"unknown field {extra!r}; the payload has: {known}")
                continue
            yield FieldProblem("", _message(error, _keyword_value(schema, error), hide=bool(pii)))
            continue
        field = str(path[0])
        if field == CUSTOM and len(path) > 1:
            field = f"{CUSTOM}.{path[1]}"
        hide = _holds_pii(field, pii)
        message = _message(error, _keyword_value(schema, error), hide)
        # What it says of every value it is found on ("expected integer", of "expected integer, got 'ten'").
        said, got, _ = message.rpartition(", got ")
        yield FieldProblem(field, message, said if got and keyword in _DESCRIBED else "")


def _keyword_value(schema: Mapping[str, Any], error: jsonschema_rs.ValidationError) -> Any:
    """What the schema gives the keyword the value fails (`"integer"` of `type: integer`)."""
    value: Any = schema
    for step in error.schema_path:
        value = value[step]
    return value


_DESCRIBED = frozenset({"enum", "type", "pattern", "minLength", "maxLength"})


def _holds_pii(field: str, pii: frozenset[str]) -> bool:
    """Whether a problem's value is, or holds, a PII value (`custom_attributes` holds its labels')."""
    return field in pii or any(name.startswith(field + ".") for name in pii)


def _message(error: jsonschema_rs.ValidationError, expected: Any, hide: bool) -> str:
    shown = quoted(error.instance, hide)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    keyword = error.kind.name
    describe: dict[str, Callable[[], str]] = {
        "enum": lambda: f"expected one of {', '.join(map(str, expected))}, got {shown}",
        "type": lambda: f"expected {expected}, got {shown}",
        "pattern": lambda: f"expected text matching {expected!r}, got {shown}",
        "minLength": lambda: f"expected at least {plural(expected, 'character')}, got {shown}",
        "maxLength": lambda: f"expected at most {plural(expected, 'character')}, got {shown}",
    }
    maker = describe.get(keyword)
    if maker:
        return maker()
    # The validator's own messages quote the value, except those that name only fields.
    if hide and keyword not in ("required", "additionalProperties", "dependentRequired"):
        return f"the value {shown} fails the schema's {keyword!r} check"
    return error.message
