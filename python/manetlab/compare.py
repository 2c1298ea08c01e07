"""Paired comparison of TCP variants on one scenario (common random numbers).

Every variant runs the same scenario with the same seed, so it sees the same
mobility, the same cross traffic and the same random draws everywhere except in
its own TCP (docs/kernel.md); only the flow's transport changes. The comparison
prints the flow's metrics side by side with each variant's improvement over the
first (paper 000's definition, `manetlab.stats.improvement_pct`), and writes the
runs, overlay figures (sequence number and window against time) and an HTML report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from manetlab import _html
from manetlab.results import Result, run
from manetlab.scenario import Overrides, Scenario, ScenarioError, load_scenario
from manetlab.stats import improvement_pct

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
    flow: int
    transports: list[str]
    results: list[Result]
    out_dir: Path | None = None

    def value(self, i: int, key: str) -> float | None:
        return _metric(self.results[i].summary["flows"][self.flow], key)

    def improvement(self, i: int, key: str) -> float | None:
        base, new = self.value(0, key), self.value(i, key)
        if base is None or new is None or base == 0:
            return None
        return improvement_pct(new, base)

    def table(self) -> str:
        """The flow's metrics per variant, and improvement % over the first."""
        head = ["metric", *self.transports, *(f"{t} vs {self.transports[0]}" for t in self.transports[1:])]
        rows = []
        for key, label in METRICS:
            vals = [self.value(i, key) for i in range(len(self.results))]
            cells = ["-" if v is None else f"{v:.4g}" for v in vals]
            imps = [self.improvement(i, key) for i in range(1, len(self.results))]
            rows.append([label, *cells, *("-" if x is None else f"{x:+.1f}%" for x in imps)])
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
            for t, r in zip(self.transports, self.results):
                d = staging / _safe(t)
                d.mkdir()
                r._write_into(d, None)
            figs = [p for p in self.figures(staging) if p.suffix == ".svg"]
            imgs = "".join(f"<figure>{_html.svg_img(p.read_text(encoding='utf-8'), p.stem)}</figure>" for p in figs)
            runs = "".join(f'<li><a href="{_html.href(_safe(t) + "/summary.json")}">{_html.text(t)}</a></li>' for t in self.transports)
            s = self.results[0].summary
            page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
{_html.csp_meta(styles=[_CSS], images=True)}
<title>manetlab comparison</title>
<style>{_CSS}</style></head>
<body><h1>{_html.text(s.get('scenario_name') or 'comparison')}: flow {self.flow}</h1>
<p>seed {_html.number(s['seed'], 'd')}, {_html.number(s['duration_s'])} s simulated; same seed for every variant (common random numbers).</p>
<pre>{_html.text(self.table())}</pre>{imgs}<h2>runs</h2><ul>{runs}</ul></body></html>
"""
            with safeio.create_new(staging / "report.html", "w") as f:
                f.write(page)
            # The manifest: which folder holds which variant (the .manetlab marker says the folder is a comparison).
            manifest = {"flow": self.flow, "seed": s["seed"], "scenario_name": s.get("scenario_name"), "runs": {t: _safe(t) for t in self.transports}}
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


def compare(
    scenario: Scenario | str | os.PathLike[str],
    flow: int,
    transports: Sequence[str],
    seed: int | None = None,
    overrides: Overrides | None = None,
    *,
    progress: bool | None = None,
) -> Comparison:
    """Run `scenario` once per TCP variant in `transports` for flow `flow`.

    At least two distinct variants are needed (the first is the baseline); a bad
    list raises ScenarioError naming ``--transports``."""
    transports = list(transports)
    if len(transports) < 2:
        raise ScenarioError(f"--transports: {' '.join(transports) or 'nothing'} is one variant (allowed: two or more; the first is the baseline)")
    folders: dict[str, str] = {}
    for t in transports:
        if _safe(t) in folders:
            raise ScenarioError(f"--transports: {t} is given twice (allowed: each variant once; equal runs on one seed are identical)")
        folders[_safe(t)] = t
    base = scenario if isinstance(scenario, Scenario) else load_scenario(scenario, overrides)
    if isinstance(scenario, Scenario) and overrides:
        base = base.with_overrides(overrides)
    results = []
    for t in transports:
        ov: dict[str, Any] = {f"flows[{flow}].transport": t, f"flows[{flow}].tcp.trace": True}
        if seed is not None:
            ov["seed"] = seed
        results.append(run(base.with_overrides(ov), progress=progress))
    return Comparison(flow, transports, results)
