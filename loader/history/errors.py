"""What can be wrong with a history, each with what to do.

    LoaderError (loader.errors)
    └── HistoryError              a history folder cannot be read or used as asked
        ├── HistoryKeyError       the key is missing, or does not match the history's fingerprint
        ├── AnotherDatabaseError  most recorded ids are missing live: the history is of another database
        └── HistoryBehindError    the service holds writes of the loader that the history lacks
"""

from __future__ import annotations

from loader.errors import LoaderError
from loader.words import plural


class HistoryError(LoaderError):
    """A history folder cannot be read or used as asked; `where` is the file."""


class HistoryKeyError(HistoryError):
    """The history key is missing or is not the one the history was written with."""


class AnotherDatabaseError(HistoryError):
    """The history describes another database (a reset sandbox, a refreshed Test)."""


class HistoryBehindError(HistoryError):
    """The service holds the loader's own writes that this history does not know about."""


def wrong_key(fingerprint: str, variable: str | None, where: str) -> HistoryKeyError:
    """The error for a key whose fingerprint is not the history's."""
    name = variable or "the history key's variable"
    return HistoryKeyError(
        f"the history key does not match this history (fingerprint {fingerprint})",
        where=where,
        hint=f"set {name} to the key it was written with, or run `loader history rekey`",
    )


def missing_key(variable: str | None, where: str) -> HistoryKeyError:
    """The error for a history (or an entity with personal fields) that needs a key none gave."""
    if variable:
        hint = f"set {variable} to the history key (a long random text kept as a secret)"
    else:
        hint = "name the key's variable in loader.yaml: `history: {key: {env: NAME}}`, and set it"
    return HistoryKeyError("a history key is needed: personal values are kept only as keyed digests",
                           where=where, hint=hint)


def another_database(missing: int, recorded: int, entity: str, where: str) -> AnotherDatabaseError:
    """The error for a history whose recorded ids are mostly missing live."""
    return AnotherDatabaseError(
        f"the history describes another database: {missing} of {recorded} recorded {entity} ids are not live "
        "(a reset sandbox or a refreshed environment?)",
        where=where,
        hint="if this environment was reset on purpose, run `loader history reset` and plan again",
    )


def history_behind(count: int, entity: str, where: str) -> HistoryBehindError:
    """The error for live records last written by the loader after their history lines."""
    return HistoryBehindError(
        f"the history is behind: {plural(count, f'{entity} record')} {'was' if count == 1 else 'were'} written by "
        "the loader after the history last saw them (an apply whose history was not committed?)",
        where=where,
        hint="fetch the latest history (git pull) and plan again",
    )
