"""`loader init WORKBOOK [--sheet NAME] [--entity ENTITY] [--out FILE] [--force]`: draft a mapping file.

`loader init --pack NAME [--force]` copies a pack instead (`loader.commands.init_pack`).

The draft (loader.source.draft) matches the header row's columns to an entity's fields by name
(headers with line breaks folded to one line), proposes the key, references, `pii: true` and value
steps (`strip`, and `collapse_spaces` where values hold line breaks or runs of spaces), lists
unmatched columns as comments, and carries the `$schema` line. A sheet `loader pull` wrote maps
back as it came: `custom_attributes.X` columns to the custom attribute X, the fields the service
sets (`id`, `type`, ...) left out, and no value steps, so planning it proposes nothing.
It never overwrites a file unless --force. In a folder without loader.yaml it drafts all the same,
saying first that the folder is no project (and, in the loader's checkout, that its sandbox holds
the sample records): a project of one's own is a folder with a loader.yaml, its sandbox empty.

When the draft validates as written (exit 0), and when it does not (exit 1):
- The entity is guessed only with a clear margin: the best entity's score must be at least 1.5
  times the second's and 1 more. Otherwise nothing is written; the three best entities are printed
  with their scores, and the command exits 64 asking for `--entity` (and `--sheet`).
- The key must be unique: when a few of the key field's values repeat, the draft keeps that column
  (the natural key) and the command exits 1 naming each repeated value and its rows. When most
  repeat, the key field reads a column whose
  values are unique on every row, else a template of two columns whose pairs are; the draft says
  so in a note and validates. When no column nor pair is unique, the draft is written with the key
  marked `# CHOOSE`, and the command exits 1 saying so.
- Otherwise the draft is validated as `loader validate` would: exit 0 when it validates, else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib.resources import as_file, files
from pathlib import Path

from loader.commands.init_pack import copy_pack
from loader.config import Config
from loader.console import clean
from loader.environments import default_seed
from loader.errors import EXIT_ERROR, EXIT_OK, UsageError
from loader.files.inputs import read_regular_file
from loader.files.package_data import pack_names
from loader.files.safe_write import write_text
from loader.plan.feed_fetching import fetch_feed
from loader.plan.mapping_tests.draft_test import draft_tests
from loader.profile import Profile
from loader.source.draft import (
    DraftBlock,
    clear_guess,
    draft_block,
    draftable_entities,
    is_pulled,
    rank_entities,
)
from loader.source.draft_pulled import pulled_ids_of, refs_by_pulled_ids
from loader.source.draft_records import read_tree, with_paths
from loader.source.draft_sample import Sample, sample_of
from loader.source.draft_yaml import render_draft
from loader.source.readers import SheetData, has_sheets, limits, read_sheet, sheet_names
from loader.source.readers.csv import windows_1252_likely
from loader.source.sources import read_sources
from loader.words import plural

EPILOG = """\
outcomes:
  exit 0   the draft is written and validates as `loader validate` would
  exit 1   the draft is written but does not validate yet (a key column that is not unique is
           marked `# CHOOSE`; a few repeated key values are named with their rows); or the
           workbook cannot be read (the message names the file)
  exit 64  the entity is not clear (the best must score at least 1.5 times the second and 1
           more): nothing is written; the three best are printed, pass --entity

a workbook `loader pull` wrote maps back as it came: a `custom_attributes.X` column becomes the
custom attribute with label X; `id`, `type`, `metadata` and `children` are left out.

run it in a project of your own: a folder holding a loader.yaml (empty will do) and mappings/;
without loader.yaml the folder is no project and `init` says so.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("workbook", metavar="WORKBOOK", type=Path, nargs="?",
                        help="the workbook (.xlsx, .xlsm) or CSV file")
    parser.add_argument("--pack", metavar="NAME",
                        help=f"copy a tested pack into the project instead: {', '.join(pack_names())}")
    parser.add_argument("--sheet", metavar="NAME", help="only this sheet (default: every sheet with a header row)")
    parser.add_argument("--entity", metavar="ENTITY", help="the entity its rows become (default: guessed)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="the mapping file (default: mappings/<workbook>.yaml)")
    parser.add_argument("--force", action="store_true", help="replace FILE if it exists")
    parser.add_argument("--encoding", metavar="NAME",
                        help="a CSV file's encoding, e.g. cp1252 (default: UTF-8; Windows-1252 is detected)")
    parser.add_argument("--delimiter", metavar="CHAR", help="a CSV file's delimiter (default: sniffed among , ; tab |)")
    parser.add_argument("--records", metavar="PATH",
                        help="draft from a JSON or XML file: where its records are (JSONPath \"$.items[*]\"; "
                             "XML \"//x:course\", x the default namespace)")


@dataclass(frozen=True)
class InitRequest:
    workbook: Path
    sheet: str | None
    entity: str | None
    out: Path  # the mapping file to write
    force: bool
    pack: str | None = None  # --pack: copy this pack (no workbook then)
    encoding: str | None = None  # a CSV file's
    delimiter: str | None = None
    records: str | None = None  # --records: the WORKBOOK is a JSON or XML file, its records here


def request_from(args: argparse.Namespace) -> InitRequest:
    pack: str | None = getattr(args, "pack", None)
    if (args.workbook is None) == (pack is None):
        raise UsageError("give a WORKBOOK to draft a mapping from, or --pack NAME", hint="run `loader init --help`")
    if pack is not None:
        return InitRequest(Path(), None, None, Path(), args.force, pack)
    workbook: Path = args.workbook
    out: Path = args.out or Path("mappings") / f"{workbook.stem.lower().replace(' ', '-')}.yaml"
    delimiter = getattr(args, "delimiter", None)
    if delimiter is not None and len(delimiter) != 1:
        raise UsageError(f"--delimiter {delimiter!r}: give one character", hint="e.g. --delimiter ';'")
    return InitRequest(workbook, args.sheet, args.entity, out, args.force,
                       encoding=getattr(args, "encoding", None), delimiter=delimiter,
                       records=getattr(args, "records", None))


def run(request: InitRequest, config: Config) -> int:
    if request.pack is not None:
        return copy_pack(request.pack, config, force=request.force)
    workbook, out = request.workbook, request.out
    if out.exists() and not request.force:
        raise UsageError(f"{out} exists; not overwriting it", hint="pass --force to replace it, or --out another file")
    entities = draftable_entities(config.profile)
    if request.entity is not None and request.entity not in entities:
        raise UsageError(f"--entity {request.entity!r} is not an entity loader can write",
                         hint=f"one of: {', '.join(entities)}")
    if config.path is None:
        print(outside_a_project(config), file=sys.stderr)
    display = os.path.relpath(workbook)
    tree = None
    if request.records is not None:
        tree = read_tree(workbook, request.records, _relative(workbook, out.parent))
        drafted = _drafted(tree.data, display, request.entity, config.profile, tree.paths)
        reading: dict[str, str] = {}
    else:
        reading = _csv_reading(request, display)
        drafted = _draft(workbook, display, request.sheet, request.entity, config.profile, reading)
    blocks = [block for block, _ in drafted]
    out.parent.mkdir(parents=True, exist_ok=True)
    text = render_draft(blocks, source=_relative(workbook, out.parent), schema_path=_schema_path(out),
                        workbook=workbook.name, reading=reading, tree=tree.source if tree else None)
    write_text(out, text, private=False)
    _print_summary(blocks, out)
    shown = clean(str(out))
    unresolved = [b.name for b in blocks if b.key_unresolved]
    if unresolved:
        print(f"The draft does not validate yet: no column of {', '.join(unresolved)} is unique; choose the key "
              f"(the line marked CHOOSE in {shown}), then `loader validate {shown}`.", file=sys.stderr)
        return EXIT_ERROR
    sources = read_sources([out], config.profile, fetch=fetch_feed)
    if tree is None:  # a draft test gives rows of a sheet; a tree's would need its documents
        _write_draft_tests(out, drafted, config.profile)
    if any(b.duplicates for b in blocks):
        _print_duplicates(blocks, display, shown)
        return EXIT_ERROR
    if sources.has_errors:
        print(f"The draft does not validate yet: run `loader validate {shown}` and fix what it names.", file=sys.stderr)
        return EXIT_ERROR
    print(f"It validates. Next: review it, then `loader plan {shown}`.")
    return EXIT_OK


def _print_duplicates(blocks: list[DraftBlock], display: str, shown: str) -> None:
    """The natural key's repeated values, as errors: a record per key, so each must be fixed in the workbook."""
    for block in blocks:
        if not block.duplicates:
            continue
        where = f"{display} › {block.sheet}" if block.sheet else display
        column = next((f.column for f in block.fields if f.name == block.key[0]), "")
        print(f"loader: error: {clean(where)}: the key column {clean(column)!r} repeats "
              f"{clean('; '.join(block.duplicates))}", file=sys.stderr)
    print(f"The draft keeps the natural key (its values are unique but for these); give each repeated row its "
          f"own code in the workbook (or remove the extra row), then `loader validate {shown}`.", file=sys.stderr)


def outside_a_project(config: Config) -> str:
    """What `init` says in a folder without loader.yaml: it is not a project, and what its sandbox holds."""
    seed = default_seed(config)
    where = f"note: {config.root} has no loader.yaml, so it is not a loader project"
    guide = "(see 'Start a project of your own' in docs/init.md)"
    if seed is not None and seed.is_file():
        return (f"{where}: its built-in sandbox is seeded with the loader's sample records ({os.path.relpath(seed)}), "
                "which every plan of your data would list as 'not in source', and a code of yours may clash with "
                "one. Start a project of your own in a new folder holding a loader.yaml (empty will do) and run "
                f"`loader init` there {guide}.")
    return f"{where}. To make it one, add a loader.yaml here (empty will do; environments go there) {guide}."


def _write_draft_tests(out: Path, drafted: list[tuple[DraftBlock, Sample]], profile: Profile) -> None:
    """A first test beside the draft (never over a test that is there), said once: a person reviews it."""
    tests = {path: text for path, text in draft_tests(out, drafted, profile).items() if not path.exists()}
    for path, text in tests.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, text, private=False)
        print(f"wrote {path}")
    if tests:
        print(f"{plural(len(tests), 'draft test')}: review {'it' if len(tests) == 1 else 'them'} "
              "(synthetic values; remove `draft: true` once the cases say what the mapping must do)")


def _csv_reading(request: InitRequest, display: str) -> dict[str, str]:
    """How the draft reads a CSV file (`encoding:`, `delimiter:`): as given, and Windows-1252 when the
    file is not UTF-8 and holds its curly quotes and dashes (bytes 0x80-0x9F), said on stderr."""
    given = {"encoding": request.encoding, "delimiter": request.delimiter}
    if has_sheets(request.workbook):
        if any(given.values()):
            raise UsageError("--encoding and --delimiter are for a CSV file; a workbook has neither")
        return {}
    reading = {name: value for name, value in given.items() if value is not None}
    if request.encoding is None and windows_1252_likely(_csv_bytes(request.workbook)):
        print(f"{clean(display)}: not UTF-8; its bytes 0x80-0x9F are Windows-1252's curly quotes and dashes, "
              "so it is read as cp1252 (`encoding: cp1252` in the draft)", file=sys.stderr)
        reading["encoding"] = "cp1252"
    return dict(sorted(reading.items(), key=lambda item: item[0] != "encoding"))


def _csv_bytes(path: Path) -> bytes:
    """The CSV file's bytes; none when it cannot be read (reading it as a source then says why)."""
    try:
        return read_regular_file(path, limit=limits.CSV_BYTES.value())
    except OSError:
        return b""


def _draft(workbook: Path, display: str, sheet: str | None, entity: str | None, profile: Profile,
           reading: dict[str, str]) -> list[tuple[DraftBlock, Sample]]:
    if has_sheets(workbook) and workbook.is_file():
        names = [sheet] if sheet else sheet_names(workbook)
    else:
        names = [None]  # type: ignore[list-item]
    if entity is not None and len(names) > 1:
        names = names[:1]
    samples = [sample for name in names if (sample := sample_of(read_sheet(
        workbook, display, name, encoding=reading.get("encoding"), delimiter=reading.get("delimiter")))) is not None]
    ids = pulled_ids_of(samples, profile)
    blocks: list[tuple[DraftBlock, Sample]] = []
    taken: set[str] = set()
    for sample in samples:
        chosen = entity or _clear_entity(sample, profile, display, len(names) > 1)
        block = draft_block(sample, profile, chosen)
        while block.name in taken:
            block = draft_block(sample, profile, chosen, name=f"{block.name}_{len(taken)}")
        block = refs_by_pulled_ids(replace(block, entity_guessed=entity is None), sample, profile, ids)
        taken.add(block.name)
        blocks.append((block, sample))
    if not blocks:
        raise UsageError(f"{display}: no sheet with a header row in its first 30 rows",
                         hint="name the sheet with --sheet, or check the file")
    return blocks


def _drafted(data: SheetData, display: str, entity: str | None, profile: Profile,
             paths: Mapping[str, str]) -> list[tuple[DraftBlock, Sample]]:
    """The one block of a JSON or XML file's records, its columns named by their paths."""
    sample = sample_of(data)
    if sample is None:
        raise UsageError(f"{display}: its records hold no value", hint="check --records against the file")
    block = draft_block(sample, profile, entity or _clear_entity(sample, profile, display, False))
    return [with_paths(replace(block, entity_guessed=entity is None), sample, paths)]


def _clear_entity(sample: Sample, profile: Profile, display: str, several: bool) -> str:
    """The entity guessed with a clear margin, else a UsageError naming the three best with their scores."""
    if is_pulled(sample, profile) and sample.sheet:
        return sample.sheet  # `loader pull` names each sheet after its entity
    ranked = rank_entities(sample, profile)
    guess = clear_guess(ranked)
    if guess is not None:
        return guess
    where = f"{display} › {sample.sheet}" if sample.sheet else display
    best = ", ".join(f"{name} ({score:.1f})" for name, score in ranked[:3])
    sheet = f" --sheet {json.dumps(sample.sheet)}" if several and sample.sheet else ""
    raise UsageError(f"{where}: cannot tell which entity the rows are; the best matches are {best}",
                     hint=f"pass the entity:{sheet} --entity {ranked[0][0] if ranked else 'ENTITY'}")


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def _schema_path(out: Path) -> str:
    """The project's schemas/mapping.schema.json when there is one, else the one installed with loader."""
    local = Path("schemas") / "mapping.schema.json"
    if local.is_file():
        return _relative(local, out.parent)
    with as_file(files("loader.schemas") / "mapping.schema.json") as packaged:
        return _relative(packaged, out.parent)


def _print_summary(blocks: list[DraftBlock], out: Path) -> None:
    print(f"wrote {clean(str(out))}")  # a name given: no control character reaches the terminal
    for block in blocks:
        where = f"sheet {block.sheet!r}, " if block.sheet else ""
        guessed = " (guessed)" if block.entity_guessed else ""
        print(f"  {block.name}: {block.entity}{guessed} from {where}header row {block.header_row}; "
              f"key {list(block.key)}")
        for f in block.fields:
            print(f"    {f.name:<20} ← {f.column or f.spec.get('template')!r} ({f.score:.0f}%)")
        for column in block.unmatched:
            print(f"    {'(unmatched)':<20}   {column!r}")
        for note in block.notes:
            print(f"    note: {note}")
