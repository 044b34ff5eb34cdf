from typing import Any

from loader.report.pull_table import records_to_table


def test_nested_values_become_named_columns_with_identifying_fields_first() -> None:
    records: list[dict[str, Any]] = [
        {
            "id": "u1",
            "name": "Bachelor of Science",
            "code": "BSC",
            "parent": {"id": "s1"},
            "custom_attributes": {"Faculty": "Science", "CRICOS": "012345A"},
            "metadata": {"created": {"time": 1}},
            "children": [{"id": "c1"}],
        },
        {"id": "u2", "code": "BA", "name": "Bachelor of Arts", "custom_attributes": {"Faculty": "Arts"}},
    ]
    table = records_to_table("course", records)
    assert table.header == (
        "id", "code", "name", "parent.id", "custom_attributes.CRICOS", "custom_attributes.Faculty",
    )
    assert table.rows == (
        ("u1", "BSC", "Bachelor of Science", "s1", "012345A", "Science"),
        ("u2", "BA", "Bachelor of Arts", None, None, "Arts"),
    )


def test_lists_are_joined_so_a_mapping_can_split_them_back() -> None:
    table = records_to_table("arrangement", [{"id": "a", "subjects_awarded": ["x", "y"], "tags": []}])
    assert table.header == ("id", "subjects_awarded", "tags")
    assert table.rows == (("a", "x; y", ""),)
