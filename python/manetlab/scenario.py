"""Scenario files: reading, overrides, and validation through the core.

The Rust core owns the schema and every semantic check; this module only turns
a file (TOML or JSON) or a dict into JSON text for it. What the core cannot see
is checked here, with the same one-line "key.path: what is wrong" wording and the
same exception class: unreadable files, syntax errors, values JSON cannot carry
(nan, inf, TOML dates), and override paths that lead nowhere.

Scenario and study files are untrusted data. Files are read only when they are
regular files (FIFOs, devices and directories are refused without blocking) of
at most `MAX_SCENARIO_FILE_BYTES`; files a scenario or study names must also lie
inside the folder tree of the file naming them unless ``allow_outside=True``
(docs/scenarios.md#files-a-scenario-names). Messages quote at most a bounded,
escaped excerpt of a value (`excerpt`, `quote`).
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import numbers
import os
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from manetlab import _core, safeio
from manetlab._core import ScenarioError
from manetlab.textsafe import MAX_EXCERPT_CHARS, excerpt, quote

__all__ = ["Scenario", "ScenarioError", "apply_overrides", "check_name", "excerpt", "load_scenario", "parse_set", "quote"]

Overrides = Mapping[str, Any]


class Scenario:
    """A validated scenario: constructing one always runs the core's checks.

    ``data`` is the scenario as written (after overrides), ``normalized`` the
    core's normalised form with every default filled in, ``source`` the file it
    came from (or None). Files the scenario names (an ns-2 movement or traffic
    file) are read relative to the folder of ``source`` and must lie inside its
    tree unless ``allow_outside`` (kept for `with_overrides`).
    """

    __slots__ = ("_json", "allow_outside", "data", "normalized", "source")

    def __init__(self, data: Mapping[str, Any], source: str | os.PathLike[str] | None = None, *, allow_outside: bool = False) -> None:
        _check_nesting(data)
        plain = _plain(data, "")
        # Files a scenario names (an ns-2 movement file) are relative to its folder.
        base_dir = str(Path(source).resolve().parent) if source is not None else None
        # allow_nan=False cannot trip: _plain has already rejected non-finite floats.
        self._json: str = _core.validate(json.dumps(plain, allow_nan=False), base_dir, bool(allow_outside))
        self.data: dict[str, Any] = plain
        self.normalized: dict[str, Any] = json.loads(self._json)
        self.source: Path | None = Path(source) if source is not None else None
        self.allow_outside: bool = bool(allow_outside)

    def to_json(self) -> str:
        """The normalised scenario as JSON text (what `_core.run` is given)."""
        return self._json

    def with_overrides(self, overrides: Overrides | None) -> Scenario:
        """A new, re-validated Scenario with `overrides` applied; self is unchanged."""
        return Scenario(apply_overrides(self.data, overrides), self.source, allow_outside=self.allow_outside)

    @property
    def seed(self) -> int:
        return int(self.normalized["seed"])

    @property
    def name(self) -> str | None:
        return self.normalized.get("name")

    @property
    def duration_s(self) -> float:
        return float(self.normalized["duration_s"])

    @property
    def label(self) -> str:
        """The scenario's name, else its file's path, else "scenario"."""
        return self.name or (str(self.source) if self.source else "scenario")

    def __repr__(self) -> str:
        return f"Scenario({self.label!r}, seed={self.seed})"


def load_scenario(path: str | os.PathLike[str], overrides: Overrides | None = None, *, allow_outside: bool = False) -> Scenario:
    """Read a TOML or JSON scenario file, apply `overrides`, validate.

    Any problem raises ScenarioError with a one-line message naming the key path
    (``(file)`` for problems with the file itself). Files the scenario names must
    lie inside its folder tree unless `allow_outside`.
    """
    data = _read(Path(path))
    return Scenario(apply_overrides(data, overrides), path, allow_outside=allow_outside)


def apply_overrides(data: Any, overrides: Overrides | None) -> Any:
    """Return a deep copy of `data` with each ``{"a.b[0].c": value}`` set.

    A new key may be created (the core then judges it); a path through a list
    index that does not exist or through a value that is not a table/list is
    a ScenarioError naming the path.
    """
    _check_nesting(data)
    data = copy.deepcopy(data)
    for path, value in (overrides or {}).items():
        _set_path(data, path, value)
    return data


def parse_set(assignment: str) -> tuple[str, Any]:
    """Parse a CLI ``key.path=value``; the value is read as a TOML value
    (``5``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``, ``{kind = "chain", spacing_m = 10}``),
    and anything that is not one is taken as a plain string."""
    key, sep, raw = assignment.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError(f"(--set): {show(assignment)} is not key.path=value (e.g. --set flows[0].rate_kbps=100)")
    return key, parse_value(raw.strip())


def parse_value(raw: str) -> Any:
    """A TOML value if `raw` is one, else the plain string."""
    try:
        parsed = tomllib.loads("v = " + raw)
    except tomllib.TOMLDecodeError:
        return raw
    except ValueError as e:
        raise ScenarioError(f"(--set): {_too_long(e)}") from None
    # "1\nx = 2" parses but is not one value: keep the text as written.
    return parsed["v"] if parsed.keys() == {"v"} else raw


# --- reading files --------------------------------------------------------


#: Largest scenario or study file read (bytes); a JSON scenario may also carry a
#: movement file's text (a result folder's scenario.json), up to MAX_REFERENCED_FILE_BYTES more.
MAX_SCENARIO_FILE_BYTES = 1 << 20
#: Largest movement or traffic file the core reads (bytes; the core's bound, for the docs and tests).
MAX_REFERENCED_FILE_BYTES = 64 << 20


def read_regular(path: Path, cap: int) -> bytes:
    """The bytes of `path`, a regular file of at most `cap` bytes (a link is
    followed: the file named on a command line is the user's own choice). A file
    that is not one raises `_NotReadable` with the reason (a sentence without the
    file's name); a missing or unreadable file raises OSError as open() would.
    FIFOs, devices, sockets and directories are refused without blocking
    (`safeio.open_regular`)."""
    try:
        fd = safeio.open_regular(path, follow_links=True)
    except safeio.NotRegularFile as e:
        raise _NotReadable(f"it is {e.kind}, not a regular file (allowed: regular files only)") from None
    with os.fdopen(fd, "rb") as f:
        raw = f.read(cap + 1)
    if len(raw) > cap:
        raise _NotReadable(f"larger than {_size(cap)} (allowed: at most that)")
    return raw


class _NotReadable(ValueError):
    """Why a file is not read (a sentence without the file's name)."""


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n % (1 << 20) == 0 else f"{n / (1 << 20):.1f} MB"


def resolve_named(folder: Path, name: str, allow_outside: bool) -> Path:
    """Where the file `name` that a file in `folder` names leads (relative to
    `folder`; an absolute name stands for itself), symbolic links resolved.
    Outside `folder`'s tree is refused unless `allow_outside` (raised as
    `_NotReadable`; FileNotFoundError when it does not exist)."""
    if not name:
        raise _NotReadable("an empty file name (allowed: a file name relative to the file that names it)")
    if "\x00" in name:
        raise _NotReadable("the name holds a NUL byte (allowed: a file name)")
    base = folder.resolve()
    real = (base / name).resolve(strict=True)
    if not allow_outside and not real.is_relative_to(base):
        raise _NotReadable(
            f"it is outside the folder of the file that names it, {quote(str(base))} (allowed: a file in that folder or below, "
            "symbolic links resolved; --allow-outside, or allow_outside=True in Python, reads it anyway)"
        )
    return real


def _read(path: Path) -> Any:
    """A scenario or study file's contents (TOML, or JSON by extension)."""
    shown = excerpt(str(path), 200)
    cap = MAX_SCENARIO_FILE_BYTES + (MAX_REFERENCED_FILE_BYTES if path.suffix.lower() == ".json" else 0)
    try:
        raw = read_regular(path, cap)
    except FileNotFoundError:
        raise ScenarioError(f"(file): {shown} does not exist") from None
    except _NotReadable as e:
        raise ScenarioError(f"(file): cannot read {shown}: {e}") from None
    except OSError as e:
        raise ScenarioError(f"(file): cannot read {shown} ({e.strerror})") from None
    except ValueError:
        # open() refuses a path with a NUL byte before asking the system.
        raise ScenarioError(f"(file): {show(str(path))} is not a file name (it contains a NUL byte)") from None
    path_text = shown
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(
            f"(file): {path_text} is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start}); is it a scenario file?"
        ) from None
    if "\x00" in text:
        raise ScenarioError(f"(file): {path_text} is binary data (NUL byte at offset {text.index(chr(0))}), not a scenario file")
    text = text.removeprefix("\ufeff")  # a UTF-8 BOM some editors write
    if not text.strip():
        # An empty file is an empty table: the core then names the missing keys.
        return {}
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"(file): {path_text} is not valid JSON: {e.msg} (at line {e.lineno}, column {e.colno})") from None
        except RecursionError:
            raise ScenarioError(f"(file): {path_text} is nested too deeply to read (allowed: at most {MAX_NESTING} levels of tables and lists)") from None
        except ValueError as e:
            raise ScenarioError(f"(file): {path_text}: {_too_long(e)}") from None
    else:
        # .toml, or any other extension: TOML is the documented format.
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            # The message already ends with "(at line L, column C)".
            raise ScenarioError(f"(file): {path_text} is not valid TOML: {_one_line(str(e))}") from None
        except RecursionError:
            raise ScenarioError(f"(file): {path_text} is nested too deeply to read (allowed: at most {MAX_NESTING} levels of tables and lists)") from None
        except ValueError as e:
            raise ScenarioError(f"(file): {path_text}: {_too_long(e)}") from None
    _check_nesting(data)
    return data


#: Deepest nesting of tables and lists a scenario may have (the core's bound too).
MAX_NESTING = 64


def _check_nesting(data: Any) -> None:
    """ScenarioError naming the top-level key under which `data` nests deeper than
    MAX_NESTING; iterative, so any depth is safe to check (the recursive steps
    after it, deepcopy and the JSON hand-over, then stay far from their limits)."""
    stack: list[tuple[Any, int, str | None]] = [(data, 0, None)]
    while stack:
        v, depth, top = stack.pop()
        if depth > MAX_NESTING:
            raise ScenarioError(
                f"{key_text(top) if top else '(top level)'}: nested more than {MAX_NESTING} levels deep (allowed: at most {MAX_NESTING} levels of tables and lists)"
            )
        if isinstance(v, Mapping):
            stack.extend((c, depth + 1, top if top is not None else str(k)) for k, c in v.items())
        elif isinstance(v, (list, tuple)):
            stack.extend((c, depth + 1, top) for c in v)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # TOML forbids a key twice; JSON parsers silently keep the last one. Be as strict as TOML.
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ScenarioError(f"(file): key {show(k)} appears twice in the same table")
        out[k] = v
    return out


def _one_line(s: str) -> str:
    return " ".join(s.split())


# --- what a message may quote, and what a name may be ----------------------

#: Most characters in a name (the core's bound for name and flows[].name).
MAX_NAME_CHARS = 200
#: Unicode general categories a name may not hold: control, format, line and paragraph separators.
CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})
NAME_RULE = "printable Unicode: no control or format characters (Unicode Cc, Cf, Zl, Zp), at most 200 characters"


def is_control_or_format(c: str) -> bool:
    """Whether the character `c` is in Unicode category Cc, Cf, Zl or Zp."""
    return unicodedata.category(c) in CONTROL_CATEGORIES


def show(v: Any) -> str:
    """Any value as a message may show it: a string as Python writes it
    (``'x'``), anything else as JSON, cut after MAX_EXCERPT_CHARS characters."""
    if isinstance(v, str):
        text = repr(v[:MAX_EXCERPT_CHARS]) + ("…" if len(v) > MAX_EXCERPT_CHARS else "")
    else:
        try:
            text = json.dumps(v, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(v)
        if len(text) > MAX_EXCERPT_CHARS:
            text = text[:MAX_EXCERPT_CHARS] + "…"
    # repr and JSON escape control characters, but JSON leaves format characters as they are.
    return excerpt(text, len(text))


def check_name(where: str, name: Any) -> None:
    """ScenarioError at `where` unless `name` is a string following the name rule
    (docs/scenarios.md#names), as the core checks scenario and flow names."""
    if not isinstance(name, str):
        raise ScenarioError(f"{where}: {show(name)} is not a string (allowed: {NAME_RULE})")
    bad = next(((i, c) for i, c in enumerate(name) if is_control_or_format(c)), None)
    if bad is not None:
        raise ScenarioError(f"{where}: {quote(name)} holds the control or format character U+{ord(bad[1]):04X} at character {bad[0] + 1} (allowed: {NAME_RULE})")
    if len(name) > MAX_NAME_CHARS:
        raise ScenarioError(f"{where}: {quote(name)} is {len(name)} characters long (allowed: {NAME_RULE})")


def key_text(path: str) -> str:
    """A key path as an error may name it (user-given keys can be long or odd)."""
    return excerpt(path, 200)


def _too_long(e: ValueError) -> str:
    """Python refuses to convert integers of more than 4300 digits (sys.int_info); say so plainly."""
    m = re.search(r"value has (\d+) digits", str(e))
    if m is None:
        raise e
    return f"an integer of {m.group(1)} digits is out of range (allowed: integers from -2^63 to 2^64-1)"


def _short(v: int) -> str:
    """An integer as a message can show it (10**4000 has no short decimal form)."""
    digits = len(str(abs(v))) if v.bit_length() < 10_000 else None
    if digits is None or digits > 30:
        return f"an integer of {'about ' + str(int(v.bit_length() * 0.30103)) if digits is None else digits} digits"
    return str(v)


# --- values the core can be given -----------------------------------------


def _plain(value: Any, path: str) -> Any:
    """A JSON-ready copy of `value`, or ScenarioError naming the first key JSON cannot carry."""
    where = key_text(path) or "(top level)"
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        v = int(value)  # also numpy integers
        if not -(2**63) <= v < 2**64:
            # The core reads 64-bit integers; a longer one would reach it as a JSON number it cannot hold.
            raise ScenarioError(f"{where}: {_short(v)} is out of range (allowed: integers from -2^63 to 2^64-1)")
        return v
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x):
            # nan and inf are legal TOML but have no JSON form, so the core would never see the key.
            raise ScenarioError(f"{where}: {x} is not a finite number (allowed: finite numbers)")
        return x
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{where}: key {show(k)} is not a string")
            out[k] = _plain(v, f"{path}.{k}" if path else k)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (datetime.date, datetime.time)):
        raise ScenarioError(f"{where}: a date/time ({value.isoformat()}) is not allowed in a scenario (use seconds, e.g. start_s = 1.5)")
    raise ScenarioError(f"{where}: a {type(value).__name__} cannot be written in a scenario (allowed: numbers, strings, booleans, lists, tables)")


# --- override paths -------------------------------------------------------

_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*)")
_INDEX = re.compile(r"\[([0-9]+)\]")


def _parse_path(path: str) -> list[str | int]:
    """``"flows[0].rate_kbps"`` -> ``["flows", 0, "rate_kbps"]``."""
    steps: list[str | int] = []
    for part in path.split("."):
        m = _SEGMENT.fullmatch(part)
        if not m:
            raise ScenarioError(
                f"{key_text(path) or '(--set)'}: not a key path (allowed: names joined by dots, with [N] list indices, e.g. flows[0].rate_kbps)"
            )
        steps.append(m.group(1))
        steps.extend(int(i) for i in _INDEX.findall(m.group(2)))
    return steps


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    return "a table" if isinstance(v, dict) else type(v).__name__


def _set_path(data: Any, path: str, value: Any) -> None:
    steps = _parse_path(path)
    cur = data
    walked = "(top level)"
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        if isinstance(step, int):
            if not isinstance(cur, list):
                raise ScenarioError(f"{key_text(path)}: cannot set it: {walked} is {_kind(cur)}, not a list")
            if step >= len(cur):
                n = len(cur)
                raise ScenarioError(f"{key_text(path)}: cannot set it: {walked} has {n} {'entry' if n == 1 else 'entries'}, so {walked}[{step}] does not exist")
            walked = f"{walked}[{step}]"
            if last:
                cur[step] = value
            else:
                cur = cur[step]
            continue
        if not isinstance(cur, dict):
            raise ScenarioError(f"{key_text(path)}: cannot set it: {walked} is {_kind(cur)}, not a table")
        walked = step if walked == "(top level)" else f"{walked}.{step}"
        if last:
            cur[step] = value
        elif step not in cur:
            if isinstance(steps[i + 1], int):
                raise ScenarioError(f"{key_text(path)}: cannot set it: there is no list {walked}")
            cur[step] = {}  # e.g. queue.limit_pkts=10 without a [queue] table: create it
            cur = cur[step]
        else:
            cur = cur[step]
