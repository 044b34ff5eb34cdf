"""One record's fields against its live record: the payload, the field changes and the findings.

Pure. Applies the profile's rules of contract section 5: only managed fields, custom attributes per
label (an update sends the live map with the managed labels changed, because PATCH replaces the
map), set-like lists, read-only / create-only / immutable / forbidden / only_when fields, status
paths (`loader.plan.status`), and references (resolved by `loader.plan.resolve.Resolver`). Whether a
value is the live one, and the form it is sent in, is `loader.plan.field_values`'s; what the
comparison gives is a `loader.plan.field_plan.FieldPlan`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from loader.findings import Finding
from loader.places import CellRef
from loader.plan.compare import merge_labels, same
from loader.plan.field_plan import FieldPlan
from loader.plan.field_values import same_as_live, send_form, unshape
from loader.plan.model import FieldChange
from loader.plan.resolve import LiveRecord, Resolver, all_text
from loader.plan.status import check_only_when, plan_status
from loader.profile import EntityProfile, Reference
from loader.record_fields import CUSTOM
from loader.source.records import DesiredRecord, Ref, display_value, quoted


class FieldKind(Enum):
    """How a field is compared: most fields of most records are plain values."""

    PLAIN = "plain"  # neither forbidden, custom attributes, the status, conditional nor a reference
    LABELS = "labels"  # custom attributes, label by label
    REFERENCE = "reference"  # a reference, and none of the above
    SPECIAL = "special"  # forbidden, the status, or conditional (only_when)


class FieldRules:
    """An entity's field rules, with how each of its fields is compared worked out once per plan."""

    def __init__(self, entity: EntityProfile):
        self.entity = entity
        self.status_field = entity.status.field if entity.status is not None else None
        self.handlers: dict[str, _Handler] = {}  # field name -> its kind's handler, filled in by `handler`

    def kind(self, name: str) -> FieldKind:
        entity = self.entity
        if name in entity.forbidden or name == self.status_field:
            return FieldKind.SPECIAL
        if name == CUSTOM:
            return FieldKind.LABELS
        if name in entity.only_when:
            return FieldKind.SPECIAL
        if name in entity.references:
            return FieldKind.REFERENCE
        return FieldKind.PLAIN

    def handler(self, name: str) -> _Handler:
        found = self.handlers.get(name)
        if found is None:
            found = self.handlers[name] = _HANDLERS[self.kind(name)]
        return found


def plan_fields(record: DesiredRecord, live: LiveRecord | None, rules: FieldRules, resolver: Resolver) -> FieldPlan:
    """Compare the managed fields of `record` with `live` (None: the record will be created).

    This runs for every field of every record (the diff's hot loop): a plain field of a live record
    is compared here, equal texts passed over first; every other field goes to its kind's handler.
    The field's cell, its shown value and its pii flag are only worked out when a change or a
    finding needs them.
    """
    out = FieldPlan()
    entity, handlers = rules.entity, rules.handlers
    for name, desired in record.fields.items():
        try:  # a subscript, not handlers.get: no method call for every field of every record
            handler = handlers[name]
        except KeyError:
            handler = rules.handler(name)
        if handler is not _plain_field or live is None:
            handler(record, name, desired, live, rules, resolver, out)
            continue
        live_value = live.get(name)
        if desired == live_value and (type(desired) is str or (type(desired) is list and all_text(desired))):
            continue  # the common cases: an unchanged text, or list of texts (what _same finds, without a call)
        if not same_as_live(desired, live_value, name, entity):
            _changed(record, name, desired, desired, live_value, None, entity, resolver, out)
    return out


def _plain_field(
    record: DesiredRecord, name: str, desired: Any, live: LiveRecord | None, rules: FieldRules, resolver: Resolver,
    out: FieldPlan,
) -> None:
    """A plain field of a record to create (`plan_fields` compares a live record's plain fields itself)."""
    entity = rules.entity
    if type(desired) is str and name not in entity.read_only:  # the common case: a text to send
        out.payload[name] = desired
        out.changes.append(FieldChange(name, None, desired, name in record.pii))
    else:
        _created(record, name, desired, desired, entity, out)


def _reference_field(
    record: DesiredRecord, name: str, desired: Any, live: LiveRecord | None, rules: FieldRules, resolver: Resolver,
    out: FieldPlan,
) -> None:
    """A reference field, one reference (the common case) or a value holding any."""
    reference = rules.entity.references[name]
    if type(desired) is Ref:
        _one_reference(record, name, desired, live, reference, rules, resolver, out)
    else:
        _value_field(record, name, desired, live, reference, rules.entity, resolver, out)


def _labels_field(
    record: DesiredRecord, name: str, desired: Any, live: LiveRecord | None, rules: FieldRules, resolver: Resolver,
    out: FieldPlan,
) -> None:
    """`custom_attributes`, label by label."""
    if live is None:
        _created_labels(record, desired or {}, out)
        return
    live_labels = live.get(CUSTOM)
    if type(desired) is dict and type(live_labels) is dict and _labels_unchanged(desired, live_labels):
        return  # the common case: labels of texts equal to live
    _custom_attributes(record, desired or {}, live, out)


def _special_field(
    record: DesiredRecord, name: str, desired: Any, live: LiveRecord | None, rules: FieldRules, resolver: Resolver,
    out: FieldPlan,
) -> None:
    """A field that is forbidden, the status or conditional (only_when); a conditional one is then compared."""
    entity = rules.entity
    if name in entity.forbidden:
        message = f"{entity.name} does not accept {name!r}"
        out.add_finding(Finding("error", "forbidden-field", message, _where(record, name)))
        return
    if name == CUSTOM:
        _custom_attributes(record, desired or {}, live, out)
        return
    if name == rules.status_field:
        plan_status(entity, desired, live, _where(record, name), out)
        return
    if name in entity.only_when and desired is not None:
        check_only_when(record, entity, name, live, _where(record, name), out)
    _value_field(record, name, desired, live, entity.references.get(name), entity, resolver, out)


def _value_field(
    record: DesiredRecord, name: str, desired: Any, live: LiveRecord | None, reference: Reference | None,
    entity: EntityProfile, resolver: Resolver, out: FieldPlan,
) -> None:
    """A field compared as a value, its references (if it holds any) resolved first."""
    value = desired
    if reference is not None and type(desired) is Ref:  # the common case: one reference
        value = _resolve_one(desired, reference, name, resolver, record, out)
        if value is _UNRESOLVED:
            return
        value = [_shape(value, reference)] if reference.is_list else _shape(value, reference)
    elif reference is not None and _has_ref(desired):
        value = _resolve(desired, reference, name, resolver, record, out)
        if value is _UNRESOLVED:
            return
    if live is None:
        _created(record, name, desired, value, entity, out)
        return
    live_value = live.get(name)
    if not same_as_live(value, live_value, name, entity):
        _changed(record, name, desired, value, live_value, reference, entity, resolver, out)


def _one_reference(
    record: DesiredRecord, name: str, ref: Ref, live: LiveRecord | None, reference: Reference,
    rules: FieldRules, resolver: Resolver, out: FieldPlan,
) -> None:
    """A reference field holding one reference (the common case): `_value_field` without its general walk.

    A reference that is wrong or does not resolve is left to `_value_field`, which reports it.
    """
    entity = rules.entity
    if ref.entity not in reference.entities:
        _value_field(record, name, ref, live, reference, entity, resolver, out)
        return
    found = resolver.resolve(ref)
    value = found.value
    if value is None:
        _value_field(record, name, ref, live, reference, entity, resolver, out)
        return
    if found.pending is not None:
        out.add_dependency(found.pending, ref, name, resolver.alone)
    elif found.planned is not None and found.planned not in out.refers_to:  # out.add_reference, without a call
        out.refers_to = (*out.refers_to, found.planned) if out.refers_to else resolver.alone(found.planned)
    shaped: Any = resolver.id_object(value) if reference.shape == "object_id" else value
    if reference.is_list:
        shaped = [shaped]
    if live is None:
        if reference.is_list or name in entity.read_only:
            _created(record, name, ref, shaped, entity, out)
        else:  # what _created does with an id, a PendingId or {"id": ...} of either: sends it as it is
            out.payload[name] = shaped
            out.changes.append(FieldChange(name, None, _shown(ref), name in record.pii))
        return
    live_value = live.get(name)
    if type(value) is str and not reference.is_list and shaped == live_value:
        return  # a live id equal to live: what _same finds first
    if not same_as_live(shaped, live_value, name, entity):
        _changed(record, name, ref, shaped, live_value, reference, entity, resolver, out)


def _created(record: DesiredRecord, name: str, desired: Any, value: Any, entity: EntityProfile, out: FieldPlan) -> None:
    """A field of a record to create: sent, unless read-only or empty."""
    if name in entity.read_only or value is None or value == [] or value == ():
        return
    if type(value) is str:
        out.payload[name] = value
        out.changes.append(FieldChange(name, None, desired if type(desired) is str else _shown(desired),
                                        name in record.pii))
        return
    out.payload[name] = value if type(value) is dict else send_form(value, name, entity)  # a dict is sent as is
    out.changes.append(FieldChange(name, None, _shown(desired), name in record.pii))


def _changed(
    record: DesiredRecord, name: str, desired: Any, value: Any, live_value: Any, reference: Reference | None,
    entity: EntityProfile, resolver: Resolver, out: FieldPlan,
) -> None:
    """A field whose value differs from live: an update, or a finding when it cannot change."""
    old = _shown_live(live_value, reference, resolver)
    shown, pii = _shown(desired), name in record.pii
    if name in entity.immutable:
        out.add_finding(
            Finding("error", "immutable-field",
                    f"{name} cannot change after creation (live {quoted(old, pii)}, "
                    f"source {quoted(shown, pii)})", _where(record, name), f"{name} cannot change after creation")
        )
    elif name in entity.read_only or name in entity.create_only:
        out.add_finding(
            Finding("warning", "read-only-field",
                    f"{name} can only be set at creation: live {quoted(old, pii)}, "
                    f"source {quoted(shown, pii)}; not updated", _where(record, name),
                    f"{name} can only be set at creation")
        )
    else:
        out.payload[name] = send_form(value, name, entity)
        out.changes.append(FieldChange(name, old, shown, pii))


def _shown(value: Any) -> Any:
    """display_value(value), texts and single-text references without the general walk."""
    if type(value) is str:
        return value
    if type(value) is Ref and len(value.values) == 1 and type(value.values[0]) is str:
        return value.values[0]
    return display_value(value)


def _where(record: DesiredRecord, name: str) -> CellRef:
    """record.place(name): the field's cell, else its row."""
    return record.cells.get(name) or record.row


_UNRESOLVED = object()


def _has_ref(value: Any) -> bool:
    return isinstance(value, Ref) or (isinstance(value, (list, tuple)) and any(isinstance(v, Ref) for v in value))


def _resolve(
    desired: Any, reference: Reference, name: str, resolver: Resolver, record: DesiredRecord, out: FieldPlan
) -> Any:
    if type(desired) is Ref:  # the common case: one reference
        found = _resolve_one(desired, reference, name, resolver, record, out)
        if found is _UNRESOLVED:
            return _UNRESOLVED
        return [_shape(found, reference)] if reference.is_list else _shape(found, reference)
    refs = list(desired) if isinstance(desired, (list, tuple)) else [desired]
    ids: list[Any] = []
    for ref in refs:
        if not isinstance(ref, Ref):
            ids.append(ref)
            continue
        found = _resolve_one(ref, reference, name, resolver, record, out)
        if found is _UNRESOLVED:
            return _UNRESOLVED
        ids.append(found)
    if reference.is_list or isinstance(desired, (list, tuple)):
        return [_shape(v, reference) for v in ids]
    return _shape(ids[0], reference)


def _resolve_one(
    ref: Ref, reference: Reference, name: str, resolver: Resolver, record: DesiredRecord, out: FieldPlan
) -> Any:
    """The id (or PendingId) `ref` resolves to, noting what the record depends on; else _UNRESOLVED and an error."""
    if ref.entity not in reference.entities:
        allowed = " or ".join(reference.entities)
        message = f"{name} refers to {allowed}, not {ref.entity}"
        out.add_finding(Finding("error", "wrong-reference", message, reference_cell(ref, record, name)))
        return _UNRESOLVED
    found = resolver.resolve(ref)
    if found.value is None:
        problem = found.problem or "unresolved"
        out.add_finding(Finding("error", "unresolved-reference", problem, reference_cell(ref, record, name)))
        return _UNRESOLVED
    if found.pending is not None:
        out.add_dependency(found.pending, ref, name, resolver.alone)
    elif found.planned is not None:
        out.add_reference(found.planned, resolver.alone)
    return found.value


def reference_cell(ref: Ref, record: DesiredRecord, name: str) -> CellRef:
    """The cell of `ref`, a reference in field `name` of `record`: its own, else the field's."""
    return ref.cell if ref.cell is not None else _where(record, name)


def _shape(value: Any, reference: Reference) -> Any:
    return {"id": value} if reference.shape == "object_id" else value


def _shown_live(value: Any, reference: Reference | None, resolver: Resolver) -> Any:
    if reference is None:
        return list(value) if isinstance(value, tuple) else value
    plain = unshape(value)
    if isinstance(plain, list):
        return [resolver.live_label(str(v)) for v in plain]
    return resolver.live_label(str(plain)) if plain is not None else None


def _custom_attributes(
    record: DesiredRecord, desired: Mapping[str, Any], live: LiveRecord | None, out: FieldPlan,
) -> None:
    if live is None:
        _created_labels(record, desired, out)
        return
    live_labels = live.get(CUSTOM) or {}
    if type(live_labels) is dict and _labels_unchanged(desired, live_labels):
        return
    live_map = dict(live_labels)
    merged, changed = merge_labels(live_map, desired)
    for label in changed:
        field = f"{CUSTOM}.{label}"  # made once for both
        pii = field in record.pii or CUSTOM in record.pii
        out.changes.append(FieldChange(field, live_map.get(label), desired[label], pii))
    if changed:
        out.payload[CUSTOM] = merged


def _created_labels(record: DesiredRecord, desired: Mapping[str, Any], out: FieldPlan) -> None:
    """The labels of a record to create: those with a value (as merge_labels gives them against no live map).
    Where every label has one, the payload sends the desired labels' own object (never changed), not a
    copy of it."""
    merged = {}
    for label, value in desired.items():
        if value == "" if type(value) is str else same(value, None):  # a text is empty only when it is ""
            continue
        merged[label] = value
        field = f"{CUSTOM}.{label}"  # made once for both
        out.changes.append(FieldChange(field, None, value, field in record.pii or CUSTOM in record.pii))
    if merged:
        out.payload[CUSTOM] = desired if type(desired) is dict and len(merged) == len(desired) else merged


def _labels_unchanged(desired: Mapping[str, Any], live_labels: Mapping[str, Any]) -> bool:
    """Whether every desired label is a text equal to its live text (then merge_labels changes none)."""
    for label, value in desired.items():
        live_value = live_labels.get(label)
        if type(value) is not str or type(live_value) is not str or value != live_value:
            return False
    return True


_Handler = Callable[[DesiredRecord, str, Any, "LiveRecord | None", FieldRules, Resolver, FieldPlan], None]

# How each kind of field is compared (`FieldRules.handler`).
_HANDLERS: dict[FieldKind, _Handler] = {
    FieldKind.PLAIN: _plain_field,
    FieldKind.LABELS: _labels_field,
    FieldKind.REFERENCE: _reference_field,
    FieldKind.SPECIAL: _special_field,
}
