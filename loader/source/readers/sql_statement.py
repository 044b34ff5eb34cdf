"""Which SQL a `sql:` source may run: one `SELECT` or `WITH … SELECT`, told before connecting.

The statement is tokenised (comments, quoted strings and identifiers, PostgreSQL dollar quotes,
`:name` parameters and words) rather than searched as text, so a keyword inside a string or a
quoted column name ("update") is no keyword. Refused: more than one statement, a first word other
than SELECT or WITH, and any word that writes or locks (`INSERT`, `UPDATE`, `DELETE`, `MERGE`,
`INTO`, `FOR UPDATE`, DDL ...), since PostgreSQL runs `WITH x AS (DELETE … RETURNING …) SELECT`.
This check is the early, readable refusal; the read-only transaction the reader opens is the
guard that holds whatever a dialect's grammar allows.
"""

from __future__ import annotations

import re

from loader.errors import SheetError

_TOKENS = re.compile(
    r"""(?P<space>\s+)
    |(?P<comment>--[^\n]*|/\*.*?\*/)
    |(?P<string>'(?:[^']|'')*'|[eEnN]'(?:[^'\\]|\\.|'')*')
    |(?P<quoted>"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\])
    |(?P<dollar>\$(?P<tag>[A-Za-z_]\w*)?\$.*?\$(?P=tag)?\$)
    |(?P<param>(?<!:):[A-Za-z_]\w*)
    |(?P<word>[A-Za-z_][A-Za-z0-9_$#]*)
    |(?P<semicolon>;)
    |(?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)
_UNCLOSED = re.compile(r"'|\"|/\*|\$[A-Za-z_]?\w*\$")
WRITING_WORDS = frozenset({
    "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "INTO", "CREATE", "ALTER", "DROP", "TRUNCATE", "GRANT",
    "REVOKE", "CALL", "EXEC", "EXECUTE", "COPY", "LOCK", "ATTACH", "DETACH", "PRAGMA", "VACUUM", "REINDEX",
    "SET", "RESET", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "LISTEN", "NOTIFY",
})
_HINT = "write one SELECT (or WITH … SELECT) statement; the loader only reads"


def words_of(sql: str, where: str) -> list[str]:
    """The statement's words, upper-cased, in order; `;` as a word of its own. Strings, quoted names,
    comments and parameters are left out. Raises SheetError for a quote or comment never closed."""
    words: list[str] = []
    for match in _TOKENS.finditer(sql):
        kind = match.lastgroup
        if kind == "word":
            words.append(match.group().upper())
        elif kind == "semicolon":
            words.append(";")
        elif kind == "other" and _UNCLOSED.match(sql, match.start()):
            line = sql.count("\n", 0, match.start()) + 1
            raise SheetError(f"the query has a quote or comment opened on its line {line} that is never closed",
                             where=where, hint="close it, or write a quote inside a string twice ('')")
    return words


def check_select(sql: str, where: str) -> None:
    """Refuse anything but one SELECT or WITH … SELECT statement (SheetError naming `where`)."""
    words = words_of(sql, where)
    while words and words[-1] == ";":
        words.pop()
    if not words:
        raise SheetError("the query is empty", where=where, hint=_HINT)
    if ";" in words:
        raise SheetError("the query holds more than one statement (a `;` inside it)", where=where, hint=_HINT)
    if words[0] not in ("SELECT", "WITH"):
        raise SheetError(f"the query is a {words[0]} statement, not a SELECT", where=where, hint=_HINT)
    if words[0] == "WITH" and "SELECT" not in words:
        raise SheetError("the query's WITH clause is followed by no SELECT", where=where, hint=_HINT)
    writing = next((word for word in words if word in WRITING_WORDS), None)
    if writing is not None:
        shown = "FOR UPDATE" if writing == "UPDATE" and "FOR" in words else writing
        raise SheetError(f"the query holds {shown}, which writes or locks: only reading queries run",
                         where=where, hint=_HINT)
