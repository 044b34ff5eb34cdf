"""Plans of real first-load and cycle sizes, made as plan values (planning them would dominate a
renderer's test; the planner has its own tests): what the reports must keep readable."""

from __future__ import annotations

from loader.places import CellRef
from loader.plan.model import Action, BlockPlan, DroppedRecord, FieldChange, FieldRule, NotInSource, Plan, RecordPlan

FIELDS = ("code", "name", "parent", "access", "custom_attributes.Level", "custom_attributes.Credit Points",
          "custom_attributes.Faculty")
DIGEST = "sha256:" + "5e" * 32  # as plan.json records it (a plan from the planner has it: hashing is its test)
COLUMNS = ("Unit Code", "Unit Name", "Course Code", "Access", "Level", "Credit Points", "Faculty")


def rules(mapping: str, first_line: int) -> tuple[FieldRule, ...]:
    """The mapping lines of the seven fields, one a line from `first_line` (as a mapping file has them)."""
    return tuple(FieldRule(f, f"{mapping}:{first_line + n}", f"{f} ← column '{c}'")
                 for n, (f, c) in enumerate(zip(FIELDS, COLUMNS, strict=True)))


def _create(block: str, entity: str, sheet: str, row: int, code: str, parent: str) -> RecordPlan:
    values = (code, f"Introduction to topic {row} of {parent}", parent, "Open" if row % 3 else "Restricted",
              str(row % 5 + 1), "6" if row % 7 else "12", ("Science", "Arts", "Law", "")[row % 4])
    changes = tuple(FieldChange(f, None, v) for f, v in zip(FIELDS, values, strict=True) if v != "")
    return RecordPlan(ref=f"{block}/{code}", block=block, entity=entity, key=(code,), action=Action.CREATE,
                      payload={c.field: c.new for c in changes}, source=CellRef(f"{block}.xlsx", sheet, row=row),
                      row=row, changes=changes)


def _update(block: str, entity: str, sheet: str, row: int, code: str, live_id: str,
            changes: tuple[FieldChange, ...], status_path: tuple[str, ...] = ()) -> RecordPlan:
    action = Action.UPDATE if changes else Action.UNCHANGED
    return RecordPlan(ref=f"{block}/{code}", block=block, entity=entity, key=(code,), action=action,
                      payload={c.field: c.new for c in changes}, source=CellRef(f"{block}.xlsx", sheet, row=row),
                      row=row, live_id=live_id, live_updated_time=1_700_000_000_000, changes=changes,
                      status_path=status_path)


def _unchanged(block: str, entity: str, sheet: str, row: int, code: str) -> RecordPlan:
    return RecordPlan(ref=f"{block}/{code}", block=block, entity=entity, key=(code,), action=Action.UNCHANGED,
                      payload={}, source=CellRef(f"{block}.xlsx", sheet, row=row), row=row, live_id=f"id-{code}")


def first_load(total: int = 17_000) -> Plan:
    """A first load of `total` records of seven fields in two blocks, and one update of a live record:
    a unit renamed and moved to another course, in the second block, after 16,000 courses' creates."""
    courses = tuple(_create("courses", "course", "Courses", row, f"C{row:05d}", "SCI") for row in range(2, 16_002))
    units = [_create("units", "subject", "Units", row, f"U{row:05d}", f"C{row % 97 + 2:05d}")
             for row in range(2, total - 16_000 + 1)]
    moved = (FieldChange("name", "Statistics I", "Statistics 1"), FieldChange("parent", "C00002", "C00003"))
    units.insert(700, _update("units", "subject", "Units", 9_999, "U-LIVE", "id-live-1", moved))
    blocks = (
        BlockPlan("courses", "course", "courses.xlsx", "Courses", courses, key_fields=("code",),
                  field_rules=rules("mappings/courses.yaml", 12)),
        BlockPlan("units", "subject", "units.xlsx", "Units", tuple(units), key_fields=("code",),
                  field_rules=rules("mappings/units.yaml", 25)),
    )
    return Plan("sandbox", "5.1.0", "http://127.0.0.1:1", {"courses.xlsx": "sha256:" + "ab" * 32,
                                                          "units.xlsx": "sha256:" + "cd" * 32}, blocks,
                digest=DIGEST)


def no_op(total: int = 20_000) -> Plan:
    """Nothing to do over collections of `total` records: as many unchanged, and as many not managed here."""
    units = tuple(_unchanged("units", "subject", "Units", row, f"U{row:05d}") for row in range(2, total + 2))
    others = tuple(NotInSource((f"X{n:05d}",), f"id-x-{n}") for n in range(total))
    blocks = (BlockPlan("units", "subject", "units.xlsx", "Units", units, not_in_source_records=others,
                        key_fields=("code",), field_rules=rules("mappings/units.yaml", 25)),)
    return Plan("sandbox", "5.1.0", "http://127.0.0.1:1", {"units.xlsx": "sha256:" + "cd" * 32}, blocks, digest=DIGEST)


def cycle(changes: int = 70) -> Plan:
    """A cycle's `changes`: renames, a field filled, status moves (one only the steps), creates, a record
    dropped from the source and 5 records not managed here, among 500 unchanged records."""
    records: list[RecordPlan] = []
    for n in range(changes):
        row, code = n + 2, f"U{n:05d}"
        if n % 7 == 6:
            records.append(_create("units", "subject", "Units", row, f"N{n:05d}", "C00002"))
        elif n % 10 == 3:
            records.append(_update("units", "subject", "Units", row, code, f"id-{code}",
                                   (FieldChange("custom_attributes.Level", None, "2"),)))
        elif n == 8:
            records.append(_update("units", "subject", "Units", row, code, f"id-{code}", (), ("READY", "ACTIVE")))
        else:
            records.append(_update("units", "subject", "Units", row, code, f"id-{code}",
                                   (FieldChange("name", f"Unit {n}", f"Unit {n} (revised)"),)))
    records += [_unchanged("units", "subject", "Units", row, f"K{row:05d}") for row in range(100, 600)]
    dropped = (DroppedRecord(("U-OLD",), "id-old", "2026-03-01T10:00:00+00:00", name="Old unit"),)
    others = tuple(NotInSource((f"X{n}",), f"id-x-{n}") for n in range(5))
    blocks = (BlockPlan("units", "subject", "units.xlsx", "Units", tuple(records), not_in_source_records=others,
                        key_fields=("code",), field_rules=rules("mappings/units.yaml", 25), dropped=dropped),)
    return Plan("sandbox", "5.1.0", "http://127.0.0.1:1", {"units.xlsx": "sha256:" + "cd" * 32}, blocks, digest=DIGEST)
