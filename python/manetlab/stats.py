"""Statistics the papers report: fairness and per-scenario improvement.

Definitions (docs/metrics.md):

* Jain's fairness index (Jain, Chiu, Hawe 1984): (Σx)² / (n·Σx²), 1 when all equal,
  1/n when one flow takes everything.
* Improvement % (paper 000, §4): for one scenario, (new − base) / base · 100, where
  paper 000 compares the highest ACK number of ABRA (new) with NewReno's (base).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["jain_index", "improvement_pct", "paired_improvements"]


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index of non-negative allocations (e.g. per-flow throughput)."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("jain_index needs at least one value")
    if any(x < 0 for x in xs):
        raise ValueError("jain_index is defined for non-negative values")
    total, squares = sum(xs), sum(x * x for x in xs)
    if squares == 0:
        return 1.0  # nobody got anything: equally (un)served
    return total * total / (len(xs) * squares)


def improvement_pct(new: float, base: float) -> float:
    """Improvement of `new` over `base` in percent, as paper 000 defines it."""
    if base == 0:
        raise ValueError("improvement over a base of 0 is undefined")
    return (new - base) / base * 100.0


def paired_improvements(new: Sequence[float], base: Sequence[float]) -> list[float]:
    """Per-scenario improvements of paired runs (same scenario and seed in both lists)."""
    if len(new) != len(base):
        raise ValueError(f"paired lists differ in length ({len(new)} vs {len(base)})")
    return [improvement_pct(n, b) for n, b in zip(new, base)]
