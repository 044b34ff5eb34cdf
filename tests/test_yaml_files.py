"""The one YAML reader: its events may come from libyaml or from PyYAML's own parser (picked at
import); either way a document reads as PyYAML's plain safe loader reads it, within the bounds."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from loader.yaml_files import load_marked

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                     st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Co")), max_size=20))
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text("abcxyz_", min_size=1, max_size=6), inner,
                                                                max_size=4),
    max_leaves=30,
)


@given(_DOCUMENTS, st.sampled_from([None, True]))
def test_a_document_reads_as_pyyamls_plain_safe_loader_reads_it(document: Any, flow: bool | None) -> None:
    text = yaml.safe_dump({"root": document}, default_flow_style=flow, allow_unicode=True)
    assert load_marked(text, "f.yaml").data == yaml.load(text, Loader=yaml.SafeLoader)


def test_places_are_the_lines_and_columns_of_the_text() -> None:
    doc = load_marked("a:\n  - b: 1\n  - 'c'\n", "f.yaml")
    assert (doc.values[("a", 0, "b")].line, doc.values[("a", 0, "b")].col) == (2, 8)
    assert (doc.values[("a", 1)].line, doc.values[("a", 1)].col) == (3, 5)
