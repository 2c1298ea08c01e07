"""Cross-checking manetlab against the real ns-2.35 (docs/ns2.md).

* `export_ns2(scenario, out_dir, seed=...)`: an ns-2 Tcl script, the movement file
  (manetlab's own writer) and flows.json, so ``ns run.tcl`` builds the same scenario.
* `metrics_from_dir(dir)` / `parse_trace(...)`: manetlab's metrics from ns-2's trace.
* `crosscheck(scenario, seeds="1-20", jobs=N)`: both simulators per seed, as a
  DataFrame; `summarize(df)` gives means, ratio and the paired 95 % CI.
"""

from manetlab.ns2.crosscheck import (
    Ns2NotFound,
    crosscheck,
    format_summary,
    ns_version,
    paired_ci,
    parse_seeds,
    summarize,
    t_quantile,
)
from manetlab.ns2.export import Ns2Export, Ns2Unsupported, export_ns2
from manetlab.ns2.trace import Ns2Metrics, metrics_from_dir, parse_trace

__all__ = [
    "Ns2Export",
    "Ns2Metrics",
    "Ns2NotFound",
    "Ns2Unsupported",
    "crosscheck",
    "export_ns2",
    "format_summary",
    "metrics_from_dir",
    "ns_version",
    "paired_ci",
    "parse_seeds",
    "parse_trace",
    "summarize",
    "t_quantile",
]
