"""The parts of the URLs the client sends: item paths filled with an id, and query values."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote


def fill_path(template: str, ident: str) -> str:
    """An item path (`/subjects/{id}`) with the record's id or code, quoted."""
    return template.replace("{id}", quote(str(ident), safe=""))


def query_value(value: Any) -> str:
    """A filter's value as a query parameter: booleans as the service spells them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
