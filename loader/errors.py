"""The loader's errors: one base, branches where the domain lives.

    LoaderError                      anything the user can act on (exit 1)
    ├── UsageError                   bad command-line use (exit 64)
    ├── ConfigError                  loader.yaml, environments, secrets
    ├── ProfileError                 the entity profile (package data or override)
    ├── MappingError                 a mapping file; carries file:line:col
    ├── SheetError                   a workbook or CSV; carries file › sheet › cell
    ├── PlanError                    a plan file that cannot be applied as asked
    └── ApiError (loader.api.errors) the service refused or could not be reached

Each error says what is wrong, where, and what to do (`hint`). Exit codes are
chosen in one place: `exit_code_for`.
"""

from __future__ import annotations

from loader.places import Place

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CHANGES = 2
EXIT_BUG = 3
EXIT_USAGE = 64
EXIT_INTERRUPTED = 130


class LoaderError(Exception):
    """An error the user can act on. `where` names the place, `hint` what to do."""

    def __init__(self, message: str, *, where: str | Place | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class UsageError(LoaderError):
    """The command line was used wrongly."""


class ConfigError(LoaderError):
    """loader.yaml or the environment it needs is wrong."""


class ProfileError(LoaderError):
    """The entity profile is invalid."""


class MappingError(LoaderError):
    """A mapping file is invalid; `where` is file:line:col."""


class SheetError(LoaderError):
    """A workbook or CSV cannot be read as asked; `where` is file › sheet › cell."""


class PlanError(LoaderError):
    """A plan cannot be made or applied as asked."""


def unwrap_error(error: BaseException) -> BaseException:
    """The error to answer for `error`: itself, or for an exception group (concurrent tasks that
    failed together), its first LoaderError (else its first interruption, else its first error)."""
    if not isinstance(error, BaseExceptionGroup):
        return error
    leaves: list[BaseException] = []
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if isinstance(current, BaseExceptionGroup):
            pending[:0] = list(current.exceptions)
        else:
            leaves.append(current)
    for wanted in (LoaderError, KeyboardInterrupt):
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    return leaves[0] if leaves else error


def exit_code_for(error: BaseException) -> int:
    """The process exit code for an error reaching the command line."""
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(error, UsageError):
        return EXIT_USAGE
    if isinstance(error, LoaderError):
        return EXIT_ERROR
    return EXIT_BUG
