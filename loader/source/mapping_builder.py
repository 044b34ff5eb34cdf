"""The schema-valid data of one mapping block -> a Block, or findings saying why it cannot be one.

The block-wide keys are built by `block_rules`, `check_rules`, `drift_rules` and `rename_rules`, a
field's value steps by `step_rules` and its template by `templates`; this module puts them together."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping as MappingABC
from pathlib import Path
from typing import Any

from loader.findings import Finding
from loader.places import MappingPlace
from loader.profile import Profile
from loader.record_fields import CUSTOM
from loader.source.block_rules import check_key, duplicate_rule, on_dropped_rule
from loader.source.check_rules import block_checks
from loader.source.drift_rules import drift_rules
from loader.source.entity_schemas import default_type, field_names
from loader.source.mapping import (
    PATHS_SEPARATOR,
    Block,
    Condition,
    FieldSpec,
    LookupSpec,
    RenameRule,
    Variant,
)
from loader.source.named_sources import named_sources, source_named
from loader.source.readers import Source, kind_for
from loader.source.rename_rules import rename_rule
from loader.source.step_rules import field_steps, regex
from loader.source.steps import Steps
from loader.source.templates import parse_template
from loader.suggestions import did_you_mean
from loader.yaml_files import MarkedDocument


def error(code: str, message: str, place: MappingPlace) -> Finding:
    return Finding("error", code, message, place)


def _same(text: str) -> str:
    return text


def _repeat_values(data: Any) -> list[tuple[str, Callable[[str], str]]]:
    """(`n=2`, text -> text with {n} replaced by 2) for each value of a block's `repeat`."""
    if not data:
        return []
    ((name, values),) = data.items()
    placeholder = "{" + str(name) + "}"

    def substitute(value: str) -> Callable[[str], str]:
        return lambda text: text.replace(placeholder, value)

    return [(f"{name}={value}", substitute(str(value))) for value in values]


class BlockBuilder:
    """Turns the schema-valid data of one block into a Block, or records why it cannot."""

    def __init__(self, doc: MarkedDocument, path: Path, profile: Profile, findings: list[Finding]):
        self.doc = doc
        self.path = path
        self.profile = profile
        self.findings = findings
        self.sources = named_sources(doc, path.parent, findings)  # the mapping's `sources:`, by name
        self.sub: Callable[[str], str] = _same  # puts the current `repeat` value in for its {placeholder}

    def _fail(self, code: str, message: str, where: tuple[Any, ...], *, key: bool = False) -> None:
        self.findings.append(error(code, message, self.doc.place(where, key=key)))

    def block(self, name: str) -> Block | None:
        data = self.doc.data["entities"][name]
        base: tuple[Any, ...] = ("entities", name)
        before = len(self.findings)
        entity_name = data["entity"]
        source = self._source(data, base) if self._writable(entity_name, base) else None
        if source is None:
            return None
        variants = self._variants(entity_name, data, base)
        given = self._fields(entity_name, data, base) if not variants else list(variants[0].fields)
        specs = [s for s in given if s is not None]
        if CUSTOM in data["fields"] and CUSTOM not in field_names(self.profile.entity(entity_name)):
            self._fail("unknown-field", f"{entity_name} has no custom_attributes", (*base, "fields", CUSTOM), key=True)
        check_key(data, base, specs, self._fail)
        renamed = self._renamed(entity_name, data, base, specs)
        on_dropped = on_dropped_rule(self.doc, self.profile, entity_name, data, base, self._fail)
        where = variants[0].where if variants else self._where(data.get("where"), (*base, "where"))
        names = [s.name for s in specs]
        duplicates = duplicate_rule(data.get("duplicates"), set(names), base, self._fail)
        checks = block_checks(self.doc, base, data.get("checks"), names,
                              lambda code, message, at: self._fail(code, message, at))
        drift = drift_rules(self.doc, base, data, set(names), {s.name for s in specs if s.pii},
                            lambda code, message, at: self._fail(code, message, at))
        if len(self.findings) > before:
            return None
        return Block(
            name=name,
            entity=entity_name,
            source=source,
            source_display=kind_for(source).describe(source),
            sheet=data.get("sheet"),
            header_row=1 if data.get("header_row") == "auto" else data.get("header_row", 1),
            header_auto=data.get("header_row") == "auto",
            header_place=self.doc.place((*base, "header_row")) if "header_row" in data else None,
            repeats=tuple(variants) if "repeat" in data else (),
            key=tuple(data["key"]),
            fields=tuple(specs),
            where=where,
            place=self.doc.place(base, key=True),
            source_place=self.doc.place((*base, "source") if "source" in data else ("source",)),
            sheet_place=self.doc.place((*base, "sheet")) if "sheet" in data else None,
            take_over=bool(data.get("take_over", False)),
            formerly=(str(data["formerly"]["file"]), str(data["formerly"]["block"])) if "formerly" in data else None,
            duplicates=duplicates,
            renamed=renamed,
            on_dropped=on_dropped,
            checks=checks,
            drift=drift,
        )

    def _writable(self, entity_name: str, base: tuple[Any, ...]) -> bool:
        """True for an entity the profile lets the loader write; otherwise False, and a finding naming those it does."""
        writable = sorted(n for n, e in self.profile.entities.items() if e.writable and e.schema)
        if entity_name not in writable:
            self._fail(
                "unknown-entity",
                f"unknown entity {entity_name!r}; expected one of: {', '.join(writable)}"
                + did_you_mean(entity_name, writable),
                (*base, "entity"),
            )
            return False
        return True

    def _source(self, data: Any, base: tuple[Any, ...]) -> Source | None:
        """The block's source (its own `source`, else the file's), or None where it is missing or found wrong."""
        source_text = data.get("source", self.doc.data.get("source"))
        if source_text is None:
            self._fail("missing-source", "no `source`: give it at the top of the file or in the block", base, key=True)
            return None
        return source_named(source_text, self.sources, self.path.parent,
                            delimiter=data.get("delimiter", self.doc.data.get("delimiter")),
                            encoding=data.get("encoding", self.doc.data.get("encoding")))

    def _variants(self, entity_name: str, data: Any, base: tuple[Any, ...]) -> list[Variant]:
        """One Variant per value of the block's `repeat`; none without it."""
        variants = []
        for shown, substitute in _repeat_values(data.get("repeat")):
            self.sub = substitute
            kept, self.findings = self.findings, []
            specs = self._fields(entity_name, data, base)
            variants.append(Variant(shown, tuple(s for s in specs if s is not None),
                                    self._where(data.get("where"), (*base, "where"))))
            # every value of `repeat` finds the same mistakes: each is reported once
            kept += [f for f in self.findings if f not in kept]
            self.findings = kept
        self.sub = _same
        return variants

    def _renamed(self, entity_name: str, data: Any, base: tuple[Any, ...], specs: list[FieldSpec]) -> RenameRule | None:
        """The block's `renamed:` (`loader.source.rename_rules`), or None: none, or refused (said)."""
        if "renamed" not in data:
            return None
        where = (*base, "renamed")
        made = rename_rule(entity_name, self.profile.entity(entity_name), data, specs, self.doc.place(where),
                           self.doc.place(where, key=True),
                           lambda text: source_named(text, self.sources, self.path.parent))
        if isinstance(made, RenameRule):
            return made
        self._fail(made.code, made.message, where, key=made.at_key)
        return None

    def _fields(self, entity_name: str, data: Any, base: tuple[Any, ...]) -> list[FieldSpec | None]:
        specs = [self._field(entity_name, fname, fdata, (*base, "fields", fname))
                 for fname, fdata in data["fields"].items() if fname != CUSTOM]
        for label, fdata in data["fields"].get(CUSTOM, {}).items():
            specs.append(self._custom(entity_name, label, fdata, (*base, "fields", CUSTOM, label)))
        return specs

    def _field(self, entity_name: str, name: str, data: Any, where: tuple[Any, ...]) -> FieldSpec | None:
        entity = self.profile.entity(entity_name)
        known = list(field_names(entity))
        if name in entity.forbidden:
            self._fail("forbidden-field", f"{entity_name} field {name!r} cannot be sent: the service refuses it",
                       where, key=True)
            return None
        if name in entity.read_only:
            self._fail("read-only-field", f"{entity_name} field {name!r} is read-only (set by the service)",
                       where, key=True)
            return None
        if name not in known:
            self._fail("unknown-field", f"unknown field {name!r} for {entity_name}; expected one of: "
                       f"{', '.join(known)}{did_you_mean(name, known)}", where, key=True)
            return None
        return self._spec(entity_name, name, data, where, default_type(entity, name))

    def _custom(self, entity_name: str, label: str, data: Any, where: tuple[Any, ...]) -> FieldSpec | None:
        spec = self._spec(entity_name, f"{CUSTOM}.{label}", data, where, "string")
        if spec is not None and spec.ref:
            self._fail("bad-ref", "a custom attribute cannot be a reference", (*where, "ref"), key=True)
            return None
        return spec

    def _spec(self, entity_name: str, name: str, data: Any, where: tuple[Any, ...], kind: str) -> FieldSpec | None:
        if isinstance(data, str):
            return FieldSpec(name, self.doc.place(where, key=True), Steps(type=kind), column=self.sub(data).strip(),
                             column_place=self.doc.place(where))
        before = len(self.findings)
        ref, by = data.get("ref"), data.get("by")
        if ref is not None:
            by = self._ref(entity_name, name, ref, by, where)
        template: tuple[tuple[str, bool], ...] = ()
        if "template" in data:
            try:
                template = parse_template(self.sub(data["template"]))
            except ValueError as exc:
                self._fail("bad-template", f"bad template: {exc}", (*where, "template"))
        if data.get("collect") == "list" and kind != "list":
            self._fail("bad-collect", f"`collect: list` makes a list, but {name} holds one value; use `collect: join` "
                       "(with `separator:`) to gather its values into one text", (*where, "collect"))
        steps = field_steps(data, where, data.get("type", "string" if ref else kind), self._fail)
        if steps is None or len(self.findings) > before or not self._constants_fit(name, data, where, steps):
            return None
        given = data.get("column")
        paths = tuple(self.sub(path).strip() for path in given) if isinstance(given, list) else ()
        column = PATHS_SEPARATOR.join(paths) if paths else self.sub(given) if given is not None else None
        value = data.get("value")
        return FieldSpec(
            name=name,
            place=self.doc.place(where, key=True),
            steps=steps,
            column=column.strip() if column else None,
            column_place=self.doc.place((*where, "column")) if column else self.doc.place((*where, "template")),
            template=template,
            has_value="value" in data,
            value=self.sub(value) if isinstance(value, str) else value,
            ref=ref,
            by=tuple(by or ()),
            empty=data.get("empty", "skip"),
            pii=bool(data.get("pii", False)),
            when=self._where(data.get("when"), (*where, "when")),
            collect=data.get("collect"),
            separator=data.get("separator", ", "),
            lookup=self._lookup(data.get("lookup"), (*where, "lookup")),
            on_platform_edit=data.get("on_platform_edit", "keep"),
            paths=paths,
        )

    def _constants_fit(self, name: str, data: Any, where: tuple[Any, ...], steps: Steps) -> bool:
        """False (and a finding) where `value` or `default` holds a map, or a list for a field of one value:
        it would reach the service as Python text ("[1, {'a': 'b'}]")."""
        for constant in ("value", "default"):
            held = data.get(constant)
            if isinstance(held, dict) or (isinstance(held, list) and steps.type != "list"):
                self._fail("bad-value", f"{name}: `{constant}` holds {'a map' if isinstance(held, dict) else 'a list'}"
                           f", but this field takes one {steps.type} value", (*where, constant))
                return False
        return True

    def _lookup(self, data: Any, where: tuple[Any, ...]) -> LookupSpec | None:
        if data is None:
            return None
        source = source_named(data["source"], self.sources, self.path.parent) if "source" in data else None
        if source is None and "source" in data:
            self._fail("source-kind", f"lookup source {data['source']!r} is a source found wrong above", where)
            return None
        return LookupSpec(source, data.get("sheet"), data["key"].strip(), data["value"].strip(), self.doc.place(where))

    def _ref(self, entity_name: str, name: str, target: str, by: Any, where: tuple[Any, ...]) -> tuple[str, ...]:
        reference = self.profile.entity(entity_name).references.get(name)
        if reference is None:
            self._fail("bad-ref", f"{entity_name} field {name!r} does not hold references", (*where, "ref"))
            return ()
        if target not in reference.entities:
            self._fail("bad-ref", f"{entity_name} field {name!r} refers to {', '.join(reference.entities)}, "
                       f"not {target!r}", (*where, "ref"))
            return ()
        fields = (by,) if isinstance(by, str) else tuple(by or self.profile.entity(target).key)
        if len(fields) != 1:
            self._fail("bad-ref", f"a {target} is identified by {len(fields)} fields ({', '.join(fields)}); "
                       "name the one field this column holds with `by:`", (*where, "ref"))
            return ()
        return fields

    def _where(self, data: Any, where: tuple[Any, ...]) -> tuple[Condition, ...]:
        if data is None:
            return ()
        items = [(data, where)] if isinstance(data, MappingABC) else [(c, (*where, i)) for i, c in enumerate(data)]
        conditions = []
        for cond, path in items:
            op = next(k for k in cond if k != "column")
            raw = cond[op]
            if op in ("in", "not_in"):
                values = tuple(self.sub(self.doc.raw.get((*path, op, i), str(v))) for i, v in enumerate(raw))
            elif op in ("equals", "not_equals", "matches"):
                values = (self.sub(self.doc.raw.get((*path, op), str(raw))),)
            else:
                values = ()
            pattern = None
            if op == "matches":
                pattern = regex(values[0], (*path, op), self._fail)
                if pattern is None:
                    continue
            conditions.append(Condition(self.sub(cond["column"]).strip(), op, values, self.doc.place((*path, "column")),
                                        pattern))
        return tuple(conditions)
