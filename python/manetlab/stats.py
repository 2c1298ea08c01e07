"""Statistics the papers report: fairness and per-scenario improvement.

Definitions (docs/metrics.md):

* Jain's fairness index (Jain, Chiu, Hawe 1984): (Σx)² / (n·Σx²), 1 when all equal,
  1/n when one flow takes everything.
* Improvement % (paper 000, §4): for one scenario, (new − base) / base · 100, where
  paper 000 compares the highest ACK number of ABRA (new) with NewReno's (base).
* Mean, sample standard deviation (n − 1) and the two-sided Student-t confidence
  interval mean ± t(1 − α/2, n − 1) · sd / √n (`mean_ci`); for paired samples the
  same of the per-pair differences (`paired_ci`). The t quantile is computed here
  (regularised incomplete beta function, bisection) so scipy is not needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = ["MeanCI", "jain_index", "improvement_pct", "mean_ci", "paired_ci", "paired_improvements", "t_quantile"]


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


# --------------------------------------------------------------------------- Student t


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1.0 - x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: float) -> float:
    p = 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - p if t > 0 else p


def t_quantile(p: float, df: float) -> float:
    """Student-t quantile (e.g. p = 0.975, df = 19 -> 2.093), by bisection on the CDF."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("t_quantile needs 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2.0


def paired_ci(ours: Iterable[float], theirs: Iterable[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean of the paired differences ours − theirs and its `level` t confidence
    interval: (mean, low, high); low = high = mean for a single pair."""
    d = [float(a) - float(b) for a, b in zip(ours, theirs, strict=True)]
    if not d:
        raise ValueError("paired_ci needs at least one pair")
    n = len(d)
    mean = sum(d) / n
    if n == 1:
        return mean, mean, mean
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


class MeanCI(NamedTuple):
    """n, mean, sample standard deviation and the confidence interval's bounds."""

    n: int
    mean: float
    sd: float
    ci_low: float
    ci_high: float


def mean_ci(values: Iterable[float], level: float = 0.95) -> MeanCI:
    """Mean, sample sd and the `level` Student-t confidence interval of `values`.

    NaN values (a metric a run could not measure, e.g. a delay with nothing
    received) are left out and `n` counts the rest. With one value the sd and
    the interval are NaN (undefined), with none everything is NaN.
    """
    xs = [float(v) for v in values]
    xs = [x for x in xs if not math.isnan(x)]
    n = len(xs)
    nan = math.nan
    if n == 0:
        return MeanCI(0, nan, nan, nan, nan)
    mean = math.fsum(xs) / n
    if n == 1:
        return MeanCI(1, mean, nan, nan, nan)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return MeanCI(n, mean, sd, mean - half, mean + half)
