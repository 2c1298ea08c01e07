"""Paired comparison of TCP variants on one scenario (common random numbers).

Every variant runs the same scenario with the same seed, so it sees the same
mobility, the same cross traffic and the same random draws everywhere except in
its own TCP (docs/kernel.md); only the flow's transport changes. The comparison
prints the flow's metrics side by side with each variant's improvement over the
first (paper 000's definition, `manetlab.stats.improvement_pct`), and writes the
runs, overlay figures (sequence number and window against time) and an HTML report.

With several seeds every variant runs on each seed (pairs per seed), and the table
gives each variant's mean over the seeds and, against the first variant, the mean
paired difference with its 95 % Student-t interval (`manetlab.stats.paired_ci`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from manetlab import _html
from manetlab.results import Result, run
from manetlab.scenario import Overrides, Scenario, ScenarioError, load_scenario
from manetlab.stats import improvement_pct, paired_ci

__all__ = ["Comparison", "compare"]

# (summary key, label, where to find it): the rows of the comparison table.
METRICS: list[tuple[str, str]] = [
    ("throughput_kbps", "throughput (kbit/s)"),
    ("highest_ack_segs", "highest ACK (segments)"),
    ("retransmissions", "retransmissions"),
    ("timeouts", "timeouts"),
    ("delay_mean_s", "mean delay (s)"),
    ("jitter_mean_s", "jitter (s)"),
]

_CSS = "body{font-family:sans-serif;max-width:1100px;margin:2em auto}pre{background:#f6f6f6;padding:1em}img{max-width:100%;height:auto}"


def _metric(flow: dict[str, Any], key: str) -> float | None:
    tcp = flow.get("tcp") or {}
    value = flow.get(key, tcp.get(key))
    return None if value is None else float(value)


@dataclass
class Comparison:
    """`results`: the first seed's runs, one per variant (in `transports` order);
    `seed_results`: every seed's (`seeds` order), the first being `results`."""

    flow: int
    transports: list[str]
    results: list[Result]
    out_dir: Path | None = None
    seeds: list[int] = field(default_factory=list)
    seed_results: list[list[Result]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.seed_results:
            self.seed_results = [self.results]
        if not self.seeds:
            self.seeds = [int(rs[0].summary["seed"]) for rs in self.seed_results]

    def value(self, i: int, key: str) -> float | None:
        """Variant i's value of `key`: the mean over the seeds that measured it."""
        vals = [v for v in self.values(i, key) if v is not None]
        return sum(vals) / len(vals) if vals else None

    def values(self, i: int, key: str) -> list[float | None]:
        """Variant i's value of `key` on each seed."""
        return [_metric(rs[i].summary["flows"][self.flow], key) for rs in self.seed_results]

    def improvement(self, i: int, key: str) -> float | None:
        """Variant i's improvement % over the first, of the (mean) values."""
        base, new = self.value(0, key), self.value(i, key)
        if base is None or new is None or base == 0:
            return None
        return improvement_pct(new, base)

    def difference(self, i: int, key: str) -> tuple[float, float, float] | None:
        """Variant i − the first: the mean paired difference over the seeds where
        both measured `key`, and its 95 % t interval (mean, low, high)."""
        pairs = [(a, b) for a, b in zip(self.values(i, key), self.values(0, key), strict=True) if a is not None and b is not None]
        if not pairs:
            return None
        return paired_ci([a for a, _ in pairs], [b for _, b in pairs])

    def table(self) -> str:
        """The flow's metrics per variant, and improvement % over the first; with
        several seeds, means and the paired difference's 95 % interval."""
        base = self.transports[0]
        several = len(self.seed_results) > 1
        head = ["metric", *(f"{t} (mean)" if several else t for t in self.transports),
                *(f"{t} vs {base}" for t in self.transports[1:])]
        if several:
            head += [f"{t} - {base} [95% CI]" for t in self.transports[1:]]
        rows = []
        for key, label in METRICS:
            vals = [self.value(i, key) for i in range(len(self.transports))]
            cells = ["-" if v is None else f"{v:.4g}" for v in vals]
            imps = [self.improvement(i, key) for i in range(1, len(self.transports))]
            row = [label, *cells, *("-" if x is None else f"{x:+.1f}%" for x in imps)]
            if several:
                for i in range(1, len(self.transports)):
                    d = self.difference(i, key)
                    row.append("-" if d is None else f"{d[0]:+.4g} [{d[1]:+.4g}, {d[2]:+.4g}]")
            rows.append(row)
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

        return "\n".join([line(head), *(line(r) for r in rows)])

    def figures(self, out: Path) -> list[Path]:
        """Sequence number, congestion window and throughput against time, every
        variant overlaid; each variant has its own line style and width so
        identical stretches stay visible (the widest is drawn first)."""
        from manetlab.plots import STYLES, ack_throughput, extend_to_end, pyplot, save_figure

        plt = pyplot()

        paths = []
        end_s = float(self.results[0].summary["duration_s"])
        figures = (
            ("seq_segs", "sequence number (segments)", "compare_seq"),
            ("cwnd_segs", "congestion window (segments)", "compare_cwnd"),
            (None, "throughput (kbit/s, ACKed data per interval)", "compare_throughput"),
        )
        for key, ylabel, name in figures:
            fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
            for i, (t, r) in enumerate(zip(self.transports, self.results)):
                f = r.summary["flows"][self.flow]
                tr = f["tcp"]["trace"]
                style = STYLES[i % len(STYLES)]
                if key is None:
                    xs, ys = ack_throughput(f, end_s)
                    ax.step(xs, ys, where="post", label=t, **style)
                else:
                    xs, ys = extend_to_end(tr["t_s"], tr[key], end_s)
                    ax.step(xs, ys, where="post", label=t, **style)
            ax.set_xlabel("time (s)")
            ax.set_ylabel(ylabel)
            ax.set_xlim(0, end_s)
            ax.set_title(f"flow {self.flow}: {', '.join(self.transports)} (seed {self.results[0].summary['seed']})", fontsize=10)
            ax.legend(fontsize=8)
            paths += save_figure(fig, out, name)
            plt.close(fig)
        return paths

    def write(self, out: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write each run into ``out/<transport>/``, the figures and ``out/report.html``.

        Like a single result, the folder is built under a temporary sibling name
        and renamed into place when complete; a previous comparison there is
        replaced whole. Any other existing folder is refused (FolderNotOwnedError,
        an OSError) unless `force` (`manetlab.results.Result.write`)."""
        from manetlab import safeio
        from manetlab.results import _replace_dir, _staging_dir, write_marker

        final = Path(out)
        staging = _staging_dir(final, "comparison", force)
        try:
            write_marker(staging, "comparison")
            several = len(self.seed_results) > 1
            folders: dict[str, Any] = {}
            for i, t in enumerate(self.transports):
                d = staging / _safe(t)
                d.mkdir()
                if not several:
                    self.results[i]._write_into(d, None)
                    folders[t] = _safe(t)
                    continue
                # One folder per seed: OUT/<variant>/seed<N>/.
                folders[t] = {}
                for seed, rs in zip(self.seeds, self.seed_results, strict=True):
                    (d / f"seed{seed}").mkdir()
                    rs[i]._write_into(d / f"seed{seed}", None)
                    folders[t][str(seed)] = f"{_safe(t)}/seed{seed}"
            figs = [p for p in self.figures(staging) if p.suffix == ".svg"]
            imgs = "".join(f"<figure>{_html.svg_img(p.read_text(encoding='utf-8'), p.stem)}</figure>" for p in figs)
            if several:
                runs = "".join(
                    f"<li>{_html.text(t)}: "
                    + ", ".join(f'<a href="{_html.href(f"{folders[t][str(seed)]}/summary.json")}">seed {_html.number(seed, "d")}</a>' for seed in self.seeds)
                    + "</li>"
                    for t in self.transports
                )
                seeds_text = (f"{_html.number(len(self.seeds), 'd')} seeds ({_html.text(_seed_list(self.seeds))}); every variant on each seed "
                              f"(common random numbers); figures of seed {_html.number(self.seeds[0], 'd')}")
            else:
                runs = "".join(f'<li><a href="{_html.href(_safe(t) + "/summary.json")}">{_html.text(t)}</a></li>' for t in self.transports)
            s = self.results[0].summary
            if not several:
                seeds_text = f"seed {_html.number(s['seed'], 'd')}; same seed for every variant (common random numbers)"
            page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{_html.csp_meta(styles=[_CSS], images=True)}
<title>manetlab comparison</title>
<style>{_CSS}</style></head>
<body><h1>{_html.text(s.get('scenario_name') or 'comparison')}: flow {self.flow}</h1>
<p>{seeds_text}; {_html.number(s['duration_s'])} s simulated.</p>
<pre>{_html.text(self.table())}</pre>{imgs}<h2>runs</h2><ul>{runs}</ul></body></html>
"""
            with safeio.create_new(staging / "report.html", "w") as f:
                f.write(page)
            # The manifest: which folder holds which variant (the .manetlab marker says the folder is a comparison).
            manifest: dict[str, Any] = {"flow": self.flow, "seed": s["seed"], "scenario_name": s.get("scenario_name"), "runs": folders}
            if several:
                manifest["seeds"] = self.seeds
            with safeio.create_new(staging / "comparison.json", "w") as f:
                f.write(json.dumps(manifest, indent=1) + "\n")
            _replace_dir(staging, final, "comparison", force)
        except BaseException:
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
            raise
        self.out_dir = final
        return final / "report.html"


def _safe(name: str) -> str:
    return name.replace("+", "plus").replace("/", "_")


def _seed_list(seeds: Sequence[int]) -> str:
    """[1, 2, 3, 7] -> "1-3,7"."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(str(seeds[i]) if i == j else f"{seeds[i]}-{seeds[j]}")
        i = j + 1
    return ",".join(parts)


def compare(
    scenario: Scenario | str | os.PathLike[str],
    flow: int,
    transports: Sequence[str],
    seed: int | None = None,
    overrides: Overrides | None = None,
    *,
    seeds: Sequence[int] | None = None,
    progress: bool | None = None,
) -> Comparison:
    """Run `scenario` once per TCP variant in `transports` for flow `flow`, on
    `seed` (default: the scenario's) or on each of `seeds`.

    At least two distinct variants are needed (the first is the baseline); a bad
    list raises ScenarioError naming ``--transports``. `progress` (None: when
    stderr is a terminal) shows a bar of finished runs on stderr, with the last
    one's seed, variant and time, above each run's own progress line."""
    transports = list(transports)
    if len(transports) < 2:
        raise ScenarioError(f"--transports: {' '.join(transports) or 'nothing'} is one variant (allowed: two or more; the first is the baseline)")
    folders: dict[str, str] = {}
    for t in transports:
        if _safe(t) in folders:
            raise ScenarioError(f"--transports: {t} is given twice (allowed: each variant once; equal runs on one seed are identical)")
        folders[_safe(t)] = t
    if seed is not None and seeds is not None:
        raise ScenarioError("--seeds: give --seed or --seeds, not both")
    if seeds is not None and not seeds:
        raise ScenarioError("--seeds: no seed given")
    base = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, overrides)
    if isinstance(scenario, Scenario) and overrides:
        base = base.with_overrides(overrides)
    seed_list: list[int | None] = list(seeds) if seeds is not None else [seed]
    from tqdm import tqdm

    bar = tqdm(total=len(seed_list) * len(transports), desc="compare", unit="run", file=sys.stderr, dynamic_ncols=True,
               disable=(None if progress is None else not progress))
    seed_results: list[list[Result]] = []
    try:
        for k, sd in enumerate(seed_list):
            results = []
            for t in transports:
                ov: dict[str, Any] = {f"flows[{flow}].transport": t, f"flows[{flow}].tcp.trace": True}
                if sd is not None:
                    ov["seed"] = sd
                t0 = time.monotonic()
                r = run(base.with_overrides(ov), progress=progress)
                results.append(r)
                bar.set_postfix_str(f"seed {r.summary['seed']} ({k + 1}/{len(seed_list)}) {t} done ({time.monotonic() - t0:.1f} s)", refresh=False)
                bar.update(1)
                bar.refresh()  # every finished run shown, however close together they end
            seed_results.append(results)
    finally:
        bar.close()
    return Comparison(flow, transports, seed_results[0], seeds=[int(rs[0].summary["seed"]) for rs in seed_results], seed_results=seed_results)
