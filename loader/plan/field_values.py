"""Whether a desired field value is the live one under the field's rules, and the form it is sent in.

Pure. A field's value is compared as the service holds it: a reference by its id (`{"id": ...}`
or the id itself), a set-like list in any order, texts and dates normalised (`loader.plan.compare`).
An id not known yet (a PendingId, of a record this plan creates) is never the live value.
"""

from __future__ import annotations

from typing import Any

from loader.plan.compare import normalise, same, sorted_list
from loader.plan.model import PendingId
from loader.plan.resolve import all_text
from loader.profile import EntityProfile


def unshape(value: Any) -> Any:
    """A reference's value as its id: `{"id": x}` as x, lists of them item by item."""
    if isinstance(value, dict) and len(value) == 1 and "id" in value:
        return value["id"]
    if isinstance(value, (list, tuple)):
        return [unshape(v) for v in value]
    return value


def same_as_live(value: Any, live_value: Any, name: str, entity: EntityProfile) -> bool:
    """Whether `value`, field `name`'s desired value (references resolved), is `live_value` already."""
    # The common cases first: equal texts, and equal references {"id": text}, are the same value
    # under every rule below (normalising equal texts gives equal forms; a one-item set of it too).
    if type(value) is str:
        if type(live_value) is str:
            if value == live_value:
                return True
            if _as_is(value) and _as_is(live_value):
                return False  # two different texts that normalise leaves as they are
    elif type(value) is dict and len(value) == 1 and type(value.get("id")) is str and value == live_value:
        return True
    elif type(value) is list and type(live_value) is list and name in entity.set_fields and all_text(value) \
            and all_text(live_value):
        # set_form of each, without the general walk; equal texts are equal normalised (an applicant's
        # deliveries in another order)
        return set(value) == set(live_value) or _text_set(value) == _text_set(live_value)
    plain = unshape(value)
    if isinstance(plain, PendingId) or (isinstance(plain, list) and any(isinstance(v, PendingId) for v in plain)):
        return False
    return same(plain, unshape(live_value), as_set=name in entity.set_fields)


def _as_is(text: str) -> bool:
    """Whether normalise(text) is text itself: neither empty nor possibly a date at midnight."""
    return text != "" and (len(text) < 10 or text[4] != "-")


def _text_set(texts: list[str]) -> set[Any]:
    """set_form(texts) of a list of texts: each normalised, the empty ones left out."""
    return {n for n in map(normalise, texts) if n is not None}


def send_form(value: Any, name: str, entity: EntityProfile) -> Any:
    """The value as a create or update sends it: a set-like list in a stable order, a tuple as a list."""
    if name in entity.set_fields and isinstance(value, (list, tuple)):
        return sorted_list(value)
    return list(value) if isinstance(value, tuple) else value
