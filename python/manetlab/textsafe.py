"""Text that came from an input file, made safe to print on a terminal or quote in a message.

Names and other user text may hold any printable Unicode (docs/scenarios.md), and a
file read from elsewhere may hold anything. Before such text reaches a terminal or a
one-line error message, every control or format character (Unicode categories Cc,
Cf, Cs, Co, Cn, Zl, Zp: newlines, tabs, escape sequences, bidi overrides, unassigned
code points) is written as a visible escape in the core's style (``\\n``, ``\\r``,
``\\t``, ``\\xHH`` below U+0100, else ``\\u{HHHH}``), so a message that mixes the
core's text and ours reads alike. Everything else is kept, so printable names show
as they are.

* `printable(s)`: the whole text, escaped.
* `excerpt(s, limit)`: escaped, at most `limit` characters of `s`, then ``…``: a
  bounded excerpt for an error message (MAX_EXCERPT_CHARS by default).
* `quote(s, limit)`: `excerpt` in double quotes, ``"`` and ``\\`` escaped too.

This is the one implementation: `manetlab.scenario`, `manetlab.safeio` (paths) and
the CLI's error line use it. Writers of other formats have their own escaping (Tcl:
`manetlab.ns2.tcl`; HTML: `manetlab._html`; CSV: `manetlab.safeio.csv_text`).
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_EXCERPT_CHARS", "excerpt", "is_unsafe_char", "printable", "quote"]

#: Most characters of a value a message quotes.
MAX_EXCERPT_CHARS = 60

#: Unicode categories written as escapes: controls, format characters (bidi
#: overrides, zero-width joiners), surrogates, private use, unassigned, line and
#: paragraph separators.
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def is_unsafe_char(c: str) -> bool:
    """True for a character `printable` escapes."""
    return unicodedata.category(c) in UNSAFE_CATEGORIES


def _escape(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{{{o:04x}}}"


def _escaped(text: str, limit: int | None, in_quotes: bool) -> str:
    out = []
    for i, c in enumerate(text):
        if limit is not None and i == limit:
            out.append("…")
            break
        if in_quotes and c in '"\\':
            out.append("\\" + c)
        elif is_unsafe_char(c):
            out.append(_escape(c))
        else:
            out.append(c)
    return "".join(out)


def printable(s: object) -> str:
    """`s` (as text) with every control or format character written as an escape."""
    text = s if isinstance(s, str) else str(s)
    if not any(is_unsafe_char(c) for c in text):
        return text
    return _escaped(text, None, False)


def excerpt(s: object, limit: int = MAX_EXCERPT_CHARS) -> str:
    """`printable(s)` of at most `limit` characters of `s` (then ``…``)."""
    return _escaped(s if isinstance(s, str) else str(s), limit, False)


def quote(s: object, limit: int = MAX_EXCERPT_CHARS) -> str:
    """`excerpt` in double quotes, with ``"`` and ``\\`` escaped too."""
    return '"' + _escaped(s if isinstance(s, str) else str(s), limit, True) + '"'
