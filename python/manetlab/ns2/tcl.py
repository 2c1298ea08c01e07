"""Tcl quoting for the scripts `export_ns2` writes: text from a scenario is data, never code.

A scenario's name, its flows' names and its file's path may hold any character
(names: any printable Unicode; paths and dicts built in code: anything). In a Tcl
script such text must never end a command, start one, or be substituted. Two
forms, both ASCII-only so that the script means the same under any system
encoding ns-2's Tcl reads it with:

* `tcl_word(s)`: one Tcl word whose value is exactly `s` (Tcl 8 rules, the
  "Tcl(n)" manual's 12 rules), to stand alone as an argument of a command,
  separated by spaces (not inside a ``"..."`` string, where braces do not quote):

  - a bare word when `s` is made only of ``A-Z a-z 0-9 _ . / : + - , = @ %``
    (nothing there is special to the parser anywhere in a word);
  - else ``{s}`` when `s` is printable ASCII without a backslash and its braces
    nest (rule [6]: inside braces nothing is substituted; only a backslash-newline
    and unbalanced braces could end or change the word, and both are excluded);
  - else every character but ``A-Z a-z 0-9 _`` backslash-escaped (rule [9]): ASCII
    punctuation and space as ``\\`` + the character (which stands for itself:
    Tcl's special backslash letters are all letters or digits, never punctuation),
    newline, CR and tab as ``\\n \\r \\t``, every other character as ``\\uXXXX``
    with exactly four hex digits (characters beyond U+FFFF as a UTF-16 surrogate
    pair ``\\uD83D\\uDE00``, which Tcl 8.6 joins back; ``\\xHH`` is not used: Tcl 8.5
    reads every following hex digit into it).

* `tcl_comment(text)`: one comment line, ``# `` + `text` with ``\\``, ``{``, ``}``
  backslash-escaped and newline, CR, tab, every other control character and
  every non-ASCII character written as the escapes above. A Tcl comment ends at
  the first newline not preceded by an odd number of backslashes (rule [10]):
  the line holds no newline and every backslash in it is followed by another
  character, so it cannot continue onto the next line; escaped braces keep it
  harmless even inside a braced body (where a comment's braces still count).
"""

from __future__ import annotations

import string

__all__ = ["tcl_word", "tcl_comment", "BARE_CHARS"]

#: Characters a word may hold unquoted: none is special to Tcl's parser anywhere in a word.
BARE_CHARS = frozenset(string.ascii_letters + string.digits + "_./:+-,=@%")
_WORD_CHARS = frozenset(string.ascii_letters + string.digits + "_")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _u(c: str) -> str:
    """`c` as Tcl ``\\uXXXX`` escapes (a surrogate pair beyond the BMP)."""
    o = ord(c)
    if o <= 0xFFFF:
        return f"\\u{o:04x}"
    o -= 0x10000
    return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"


def _braces_nest(s: str) -> bool:
    depth = 0
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _printable_ascii(c: str) -> bool:
    return " " <= c <= "~"


def tcl_word(s: object) -> str:
    """`s` (as text) as one Tcl word whose value is exactly `s`."""
    text = s if isinstance(s, str) else str(s)
    if text and all(c in BARE_CHARS for c in text):
        return text
    if "\\" not in text and all(_printable_ascii(c) for c in text) and _braces_nest(text):
        return "{" + text + "}"
    out = []
    for c in text:
        if c in _WORD_CHARS:
            out.append(c)
        elif _printable_ascii(c):
            out.append("\\" + c)
        elif c in _SHORT:
            out.append(_SHORT[c])
        else:
            out.append(_u(c))
    return "".join(out)


def tcl_comment(text: object) -> str:
    """`text` as one Tcl comment line (``# ...``, no newline at its end)."""
    t = text if isinstance(text, str) else str(text)
    out = ["# "]
    for c in t:
        if c in "\\{}":
            out.append("\\" + c)
        elif _printable_ascii(c):
            out.append(c)
        elif c in _SHORT:
            out.append(_SHORT[c])
        else:
            out.append(_u(c))
    return "".join(out)
