"""Where the code of an SQL statement is, and where its literals and comments are.

``drasnap query`` checks the names a statement uses (``pg_read_file``, ``set_config``...)
before it sends the statement anywhere, so it must find the same names the server's parser
will: a name inside a string literal, a quoted name or a comment is not a call, and text the
server reads as code must not be taken for a literal. A regular expression on the raw text gets
this wrong both ways (``'it''s'``, ``E'\\''``, ``$$...$$``, nested ``/* /* */ */``), so each
dialect has a scanner that follows its lexer's rules for the things that hide text:

- PostgreSQL (``src/backend/parser/scan.l``): ``--`` and nested ``/* */`` comments;
  ``'...'`` with ``''``, continued across a newline (``quotecontinue``); ``E'...'`` with
  backslash escapes; ``B'...'``/``X'...'`` (no quote inside); ``U&'...'``; ``$tag$...$tag$``;
  ``"..."`` names with ``""``; identifiers that may hold ``$`` (``a$$b`` is one name, not a
  dollar quote). Plain ``'...'`` strings are read with ``standard_conforming_strings`` on, which
  ``store.queries.readonly`` sets on the query's transaction so the server reads them the same way.
- SQLite (``tokenize.c``): ``--`` and unnested ``/* */`` comments; ``'...'`` with ``''``;
  names in ``"..."``, ``[...]`` or backquotes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drasnap.store.errors import InvalidValueError

__all__ = ["Token", "pg_tokens", "sqlite_code"]


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a PostgreSQL statement.

    ``kind``: ``word`` (an unquoted name or keyword, its ASCII letters lower-cased as the
    server folds them), ``name`` (a quoted name, as written between the quotes), ``string``,
    ``number``, ``param`` (``$1``), ``;`` or ``op`` (any other character).
    """

    kind: str
    text: str
    pos: int


def _ident_start(c: str) -> bool:
    # scan.l ident_start: [A-Za-z\200-\377_] (every non-ASCII character counts as a letter)
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z") or ord(c) >= 0x80


def _ident_cont(c: str) -> bool:
    # scan.l ident_cont: ident_start, digits and "$"
    return _ident_start(c) or ("0" <= c <= "9") or c == "$"


# scan.l quotecontinue: a string goes on after whitespace holding a newline ("--" comments
# allowed in it), then a quote: 'a'<newline>'b' is the one string 'ab'.
_QUOTE_CONTINUE = re.compile(r"(?:[ \t\f]|--[^\n\r]*)*[\n\r](?:[ \t\n\r\f\v]+|--[^\n\r]*[\n\r])*'")
# scan.l dolqdelim: $$ or $tag$, the tag an identifier without "$".
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9\u0080-\U0010ffff]*)?\$")
_PARAM = re.compile(r"\$[0-9]+")
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _unterminated(what: str, pos: int) -> InvalidValueError:
    return InvalidValueError(
        f"the query has an unterminated {what} (from character {pos + 1}): close it"
    )


def _string_end(sql: str, start: int, style: str) -> int:
    """The index after the string literal whose opening quote is at ``start``.

    ``style``: ``plain`` ('' is a quote), ``escape`` (E'': backslash escapes too) or ``bits``
    (B''/X'': no quote inside).
    """
    i = start + 1
    n = len(sql)
    while True:
        while i < n:
            c = sql[i]
            if c == "\\" and style == "escape":
                i += 2
                continue
            if c == "'":
                if style != "bits" and i + 1 < n and sql[i + 1] == "'":
                    i += 2
                    continue
                break
            i += 1
        else:
            raise _unterminated("string literal", start)
        i += 1  # past the closing quote
        more = _QUOTE_CONTINUE.match(sql, i)
        if more is None:
            return i
        i = more.end()


def pg_tokens(sql: str) -> list[Token]:
    """The tokens of ``sql`` as PostgreSQL's lexer splits them (comments and whitespace left
    out).

    Raises:
        InvalidValueError: an unterminated string, comment, quoted name or dollar quote, or a
            ``U&"..."`` name (its escapes could spell any name; write the name plainly).
    """
    tokens: list[Token] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in " \t\n\r\f\v":
            i += 1
        elif sql.startswith("--", i):
            end = min((p for p in (sql.find("\n", i), sql.find("\r", i)) if p >= 0), default=n)
            i = end
        elif sql.startswith("/*", i):
            depth, j = 1, i + 2
            while depth:
                if j >= n:
                    raise _unterminated("comment", i)
                if sql.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif sql.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            i = j
        elif c == "'":
            end = _string_end(sql, i, "plain")
            tokens.append(Token("string", sql[i:end], i))
            i = end
        elif c == '"':
            j = i + 1
            while True:
                j = sql.find('"', j)
                if j < 0:
                    raise _unterminated("quoted name", i)
                if sql.startswith('""', j):
                    j += 2
                    continue
                break
            tokens.append(Token("name", sql[i + 1 : j].replace('""', '"'), i))
            i = j + 1
        elif c == "$":
            digits = _PARAM.match(sql, i)
            tag = _DOLLAR_TAG.match(sql, i)
            if digits:
                tokens.append(Token("param", digits.group(0), i))
                i += len(digits.group(0))
            elif tag:
                close = sql.find(tag.group(0), tag.end())
                if close < 0:
                    raise _unterminated(f"dollar-quoted string {tag.group(0)}", i)
                end = close + len(tag.group(0))
                tokens.append(Token("string", sql[i:end], i))
                i = end
            else:
                tokens.append(Token("op", c, i))
                i += 1
        elif _ident_start(c):
            j = i + 1
            while j < n and _ident_cont(sql[j]):
                j += 1
            word = sql[i:j]
            following = sql[j : j + 2]
            if len(word) == 1 and word in "eEnNbBxX" and following[:1] == "'":
                style = {"e": "escape", "n": "plain"}.get(word.lower(), "bits")
                end = _string_end(sql, j, style)
                tokens.append(Token("string", sql[i:end], i))
                i = end
            elif len(word) == 1 and word in "uU" and following == "&'":
                end = _string_end(sql, j + 1, "plain")
                tokens.append(Token("string", sql[i:end], i))
                i = end
            elif len(word) == 1 and word in "uU" and following == '&"':
                raise InvalidValueError(
                    f'drasnap query does not take Unicode-escaped names (U&"..." at character '
                    f"{i + 1}) on PostgreSQL: write the name plainly"
                )
            else:
                # (The server folds only ASCII letters of an unquoted name: downcase_identifier.)
                tokens.append(Token("word", word.translate(_ASCII_LOWER), i))
                i = j
        elif c.isdigit() or (c == "." and sql[i + 1 : i + 2].isdigit()):
            number = _NUMBER.match(sql, i)
            assert number is not None
            # Letters right after a number start a word of their own (an error from
            # PostgreSQL 15 on, a separate token before): either way not part of the number.
            tokens.append(Token("number", number.group(0), i))
            i = number.end()
        elif c == ";":
            tokens.append(Token(";", c, i))
            i += 1
        else:
            tokens.append(Token("op", c, i))
            i += 1
    return tokens


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def sqlite_code(sql: str) -> str:
    """``sql`` with comments removed and string literals and quoted names blanked (so their
    semicolons and keywords do not count), as SQLite's tokenizer reads them."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "-" and sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/" and sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
            continue
        if c in "'\"`[":
            close = "]" if c == "[" else c
            j = i + 1
            while j < n:
                if sql[j] == close:
                    if close != "]" and j + 1 < n and sql[j + 1] == close:
                        j += 2  # a doubled quote inside the literal
                        continue
                    break
                j += 1
            out.append(" x ")
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)
