"""manetlab: TCP over MANETs, simulated by a deterministic Rust core.

    >>> import manetlab
    >>> result = manetlab.run("examples/cbr_chain.toml", seed=2)
    >>> print(result.table())
    >>> result.flows            # a pandas DataFrame, one row per flow
    >>> result.write("results/chain")
    >>> manetlab.load_result("results/chain").flows

See docs/python.md for the API and docs/scenarios.md for scenario keys.
"""

from manetlab._core import ScenarioError
from manetlab._core import __version__ as __version__
from manetlab.results import Result, ResultFolderError, load_result, run
from manetlab.scenario import Scenario, apply_overrides, load_scenario, parse_set
from manetlab.stats import improvement_pct, jain_index, paired_improvements
from manetlab.ns2 import crosscheck, export_ns2
from manetlab.study import Study
from manetlab import reproduce as reproduce

__all__ = [
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
