"""A history line's fingerprint is held by plans and compared by apply: a line keeps the fingerprint
plans made before hold for it, and no line has the fingerprint of no line."""

from __future__ import annotations

from loader.history.lines import FieldMark, HistoryLine, Owner, line_digest

PLAIN = HistoryLine('["P1"]', "AAAAAAAAQACAAQAAAAAAAA", 1_795_938_594_953, "43c4dbe6-f3f0-5e35-a941-487e033492ed",
                    {"name": FieldMark(Owner("curriculum.yaml", "programs"), "kea52UptwDgF"),
                     "code": FieldMark(Owner("curriculum.yaml", "programs"), "AgrRLiFJsKTc")})


def test_no_line_has_the_fingerprint_none_and_a_plain_line_keeps_its_fingerprint() -> None:
    assert line_digest(None) == "none"
    assert line_digest(PLAIN) == "be691719b2b8a52e"  # as plans made before hold it
    renumbered = HistoryLine(PLAIN.key, PLAIN.live_id, PLAIN.updated_time, PLAIN.updated_user, PLAIN.fields,
                             ('["P0"]',))
    assert line_digest(renumbered) not in ("none", line_digest(PLAIN))
