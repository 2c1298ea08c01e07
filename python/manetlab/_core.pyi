"""The native module built from crates/manetlab-py (PyO3, via maturin).

Everything here takes and returns JSON text, so the core never sees Python
objects; ``manetlab.scenario`` and ``manetlab.results`` wrap it for users.
"""

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

def validate(scenario_json: str, base_dir: str | None = None) -> str:
    """Parse and validate a scenario given as JSON text.

    With `base_dir` (the scenario file's folder), an ns-2 movement file named by
    ``mobility.path`` is read from there into ``mobility.ns2_text`` first, and an
    ns-2 traffic file named by ``traffic.ns2_file`` into ``traffic.ns2_text``.
    Returns the normalised scenario as JSON (defaults filled in; a traffic
    file's flows appended to ``flows``).
    Raises ScenarioError naming the first offending key.
    """

from collections.abc import Callable

def run(
    scenario_json: str,
    out_dir: str | None = None,
    progress: Callable[[float, int], object] | None = None,
    keep_partial: bool = False,
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
    Raises ScenarioError if the scenario is invalid.
    """
