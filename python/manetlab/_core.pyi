"""The native module built from crates/manetlab-py (PyO3, via maturin).

Everything here takes and returns JSON text, so the core never sees Python
objects; ``manetlab.scenario`` and ``manetlab.results`` wrap it for users.
"""

import os
from collections.abc import Callable, Iterable, Sequence

# PyO3 lists what the module adds, in the order lib.rs adds it.
__all__ = [
    "__version__",
    "__build_git_commit__",
    "ScenarioError",
    "InternalError",
    "default_max_memory_bytes",
    "estimate_memory_bytes",
    "_panic_for_tests",
    "param_table",
    "validate",
    "run",
    "write_parquet",
]

__version__: str
"""Version of manetlab-core; recorded as ``manetlab_version`` in every result."""

__build_git_commit__: str | None
"""The git commit the extension was built from (``-dirty`` with uncommitted
changes to tracked files), or None when built outside a git checkout."""

class ScenarioError(ValueError):
    """A scenario that cannot be run.

    ``str(err)`` is one line, ``"key.path: what is wrong (allowed: ...)"``; the
    path is ``(file)`` for unreadable files and ``(top level)`` for the root.
    """

class InternalError(RuntimeError):
    """A bug in manetlab: the core panicked.

    ``str(err)`` is one line: ``"internal error in manetlab VERSION: what at
    file:line; this is a bug, please report it with the scenario and seed"``.
    Raised by `run` and `validate` instead of PyO3's PanicException.
    """

def default_max_memory_bytes() -> int:
    """The memory limit of a run that names none: ``MANETLAB_MAX_MEMORY``
    (bytes) if set, else half of this machine's physical memory."""

def estimate_memory_bytes(scenario_json: str) -> int:
    """The core's estimate of a scenario's peak memory (bytes): what `run`
    compares with its limit."""

def _panic_for_tests(message: str) -> None:
    """Panic in the core with `message`, inside the guard `run` and `validate`
    use: raises InternalError. For tests only (tests/test_security_core.py)."""

def param_table() -> str:
    """Every parameter the core's models declare, as a JSON list of rows
    (``section``, ``key``, ``unit``, ``scale``, ``allowed``, ``defaults`` per
    fidelity profile, ``source``, ``ns2_tcl``, ``doc``); export-ns2's mapping
    of keys to ns-2 Tcl variables reads it."""

def validate(scenario_json: str, base_dir: str | None = None, allow_outside: bool = False) -> str:
    """Parse and validate a scenario given as JSON text.

    With `base_dir` (the scenario file's folder), an ns-2 movement file named by
    ``mobility.path`` is read from there into ``mobility.ns2_text`` first, and an
    ns-2 traffic file named by ``traffic.ns2_file`` into ``traffic.ns2_text``;
    such a file must lie inside `base_dir`'s tree unless `allow_outside`.
    Returns the normalised scenario as JSON (defaults filled in; a traffic
    file's flows appended to ``flows``).
    Raises ScenarioError naming the first offending key.
    """

def run(
    scenario_json: str,
    out_dir: str | None = None,
    progress: Callable[[float, int], object] | None = None,
    keep_partial: bool = False,
    max_memory_bytes: int | None = None,
) -> str:
    """Validate and run a scenario given as JSON text; releases the GIL.

    Trace files the scenario's ``[outputs]`` asks for are written into `out_dir`
    (required when it asks for any); OSError if they cannot be written.

    Every ~50 ms of wall time the run takes the GIL to run pending signal
    handlers and to call ``progress(sim_time_s, events)``. If either raises
    (Ctrl-C: KeyboardInterrupt), the run stops and the exception propagates; with
    `keep_partial` the results up to the stop are returned instead, marked
    ``"partial": true`` with ``"stopped_at_s"``.

    Returns the results as JSON text: exactly the bytes of ``summary.json`` (the
    core's text with ``"partial"`` as first member).
    Raises ScenarioError if the scenario is invalid, or if the core's estimate
    of the run's peak memory exceeds `max_memory_bytes` (default:
    `default_max_memory_bytes()`); InternalError if the core panics.
    """

def write_parquet(path: str | os.PathLike[str], columns: Iterable[tuple[str, str, Sequence[object]]]) -> None:
    """Write a table as a Parquet file (uncompressed; byte-identical for identical
    input): `columns` is a list of ``(name, kind, values)``, kind one of "int64",
    "float64", "bool", "str", "null"; None in `values` is a missing value (not
    allowed in "int64"). All columns have the same length. Releases the GIL.

    Raises ValueError for an unknown kind, a value of the wrong type or columns of
    different lengths; OSError if the file cannot be written.
    """
