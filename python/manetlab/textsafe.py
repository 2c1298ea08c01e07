"""Text that came from an input file, made safe to print on a terminal or quote in a message.

Names and other user text may hold any printable Unicode (docs/scenarios.md), and a
file read from elsewhere may hold anything. Before such text reaches a terminal or a
one-line error message:

* `printable(s)`: every control or format character (Unicode categories Cc, Cf, Cs,
  Co, Cn, Zl, Zp: newlines, tabs, escape sequences, bidi overrides, unassigned code
  points) is written as a visible escape: ``\\n``, ``\\r``, ``\\t``, ``\\xHH``,
  ``\\uXXXX`` or ``\\UXXXXXXXX``. Everything else is kept, so printable names show
  as they are.
* `one_line(s, limit)`: `printable(s)`, cut to at most `limit` characters (an escape is
  never split) with ``...`` marking the cut: a bounded excerpt for an error message.

Writers of other formats have their own escaping (Tcl: `manetlab.ns2.tcl`).
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable", "one_line", "is_unsafe_char"]

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
    if o <= 0xFF:
        return f"\\x{o:02x}"
    if o <= 0xFFFF:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def printable(s: object) -> str:
    """`s` (as text) with every control or format character written as an escape."""
    text = s if isinstance(s, str) else str(s)
    if not any(is_unsafe_char(c) for c in text):
        return text
    return "".join(_escape(c) if is_unsafe_char(c) else c for c in text)


def one_line(s: object, limit: int = 200) -> str:
    """`printable(s)` of at most `limit` characters (plus ``...`` when cut)."""
    text = s if isinstance(s, str) else str(s)
    out: list[str] = []
    n = 0
    for c in text:
        piece = _escape(c) if is_unsafe_char(c) else c
        if n + len(piece) > limit:
            out.append("...")
            break
        out.append(piece)
        n += len(piece)
    return "".join(out)
