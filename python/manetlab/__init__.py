"""manetlab: TCP over MANETs, simulated by a deterministic Rust core.

    >>> import manetlab
    >>> result = manetlab.run("examples/cbr_chain.toml", seed=2)
    >>> print(result.table())
    >>> result.flows            # a pandas DataFrame, one row per flow
    >>> result.write("results/chain")
    >>> manetlab.load_result("results/chain").flows

See docs/python.md for the API and docs/scenarios.md for scenario keys.
"""

from typing import TYPE_CHECKING, Any

from manetlab._core import InternalError, ScenarioError
from manetlab._core import __version__ as __version__
from manetlab.results import Result, ResultFolderError, load_result, run
from manetlab.scenario import Scenario, apply_overrides, load_scenario, parse_set
from manetlab.stats import improvement_pct, jain_index, paired_improvements

if TYPE_CHECKING:
    # What __getattr__ below imports on first use, for type checkers.
    from manetlab import reproduce as reproduce
    from manetlab.ns2.crosscheck import crosscheck as crosscheck
    from manetlab.ns2.export import export_ns2 as export_ns2
    from manetlab.study import Study as Study

# Imported on first use (PEP 562): the study store, ns-2 export and the paper
# reproductions pull in sqlite3, multiprocessing and more, which `manetlab run`
# does not need (start-up time, issue 15).
_LAZY = {"Study": ("manetlab.study", "Study"), "crosscheck": ("manetlab.ns2", "crosscheck"), "export_ns2": ("manetlab.ns2", "export_ns2"), "reproduce": ("manetlab.reproduce", None)}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = importlib.import_module(module)
        if attr is not None:
            value = getattr(value, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'manetlab' has no attribute {name!r}")

__all__ = [
    "InternalError",
    "Result",
    "ResultFolderError",
    "Scenario",
    "ScenarioError",
    "Study",
    "apply_overrides",
    "crosscheck",
    "export_ns2",
    "improvement_pct",
    "jain_index",
    "load_result",
    "load_scenario",
    "paired_improvements",
    "parse_set",
    "reproduce",
    "run",
]
