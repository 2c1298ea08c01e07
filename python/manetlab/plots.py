"""Figures from a result directory (``summary.json`` as `manetlab run` writes it).

Kinds, in the style of the papers' figures:

* ``cwnd`` — congestion window and slow-start threshold (segments) against time for
  each traced TCP flow (paper 001 Fig. 3);
* ``seq`` — sequence number sent and cumulative ACK received (segments) against time
  (paper 000 Fig. 2);
* ``throughput`` — per-flow bars (kbit/s);
* ``delay``, ``jitter`` — with ``[outputs] series = true``, each received packet's
  delay and jitter(i) = delay(i+1) − delay(i) against time (paper 004's figures);
  otherwise per-flow bars (mean with min–max whiskers; mean |Δdelay|), in ms;
* ``drops`` — drops per node stacked by ``layer.CODE``;
* ``queue`` — interface-queue length against time per node (needs series).

Time series come from TCP flows run with ``tcp = { trace = true }``. Every figure is
written as PNG and SVG with matplotlib's headless Agg backend.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

KINDS = ("cwnd", "seq", "throughput", "delay", "jitter", "drops", "queue")

__all__ = ["KINDS", "plot", "load_summary"]


class PlotError(ValueError):
    """A figure that cannot be drawn from this result (e.g. no traced TCP flow)."""


def load_summary(result_dir: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(result_dir) / "summary.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlotError(f"{path}: no summary.json here (write one with `manetlab run ... --out DIR`)") from None
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not a manetlab summary ({e.msg})") from None


def _traced(summary: dict[str, Any]) -> list[dict[str, Any]]:
    flows = [f for f in summary["flows"] if (f.get("tcp") or {}).get("trace")]
    if not flows:
        raise PlotError("no traced TCP flow in this result (run FTP flows with tcp = { trace = true })")
    return flows


def plot(result_dir: str | os.PathLike[str], kind: str, out_dir: str | os.PathLike[str] | None = None) -> list[Path]:
    """Draw figure `kind` for the run in `result_dir`; returns the PNG and SVG paths."""
    if kind not in KINDS:
        raise PlotError(f"unknown plot kind {kind!r} (allowed: {', '.join(KINDS)})")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = load_summary(result_dir)
    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    try:
        _DRAW[kind](ax, summary)
        title = summary.get("scenario_name") or Path(result_dir).name
        ax.set_title(f"{title} (seed {summary['seed']})", fontsize=10)
        out = Path(out_dir) if out_dir is not None else Path(result_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / f"{kind}.png", out / f"{kind}.svg"]
        # Fixed metadata so equal results give equal files.
        fig.savefig(paths[0], dpi=120, metadata={"Software": None})
        fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
        return paths
    finally:
        plt.close(fig)


# Before the first loss ssthresh is "infinite" (a huge sentinel); such values are
# left out of the figure rather than flattening the window to the axis.
UNBOUNDED_SSTHRESH_SEGS = 1e6


def _cwnd(ax: Any, s: dict[str, Any]) -> None:
    for f in _traced(s):
        tr = f["tcp"]["trace"]
        line = ax.step(tr["t_s"], tr["cwnd_segs"], where="post", label=f"{f['name']} ({f['transport']}) cwnd")[0]
        ssthresh = [v if v < UNBOUNDED_SSTHRESH_SEGS else float("nan") for v in tr["ssthresh_segs"]]
        ax.step(tr["t_s"], ssthresh, where="post", linestyle="--", color=line.get_color(), alpha=0.6, label=f"{f['name']} ssthresh")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("window (segments)")
    ax.legend(fontsize=8)


def _seq(ax: Any, s: dict[str, Any]) -> None:
    for f in _traced(s):
        tr = f["tcp"]["trace"]
        line = ax.step(tr["t_s"], tr["seq_segs"], where="post", label=f"{f['name']} ({f['transport']}) sequence sent")[0]
        ax.step(tr["t_s"], tr["ack_segs"], where="post", linestyle=":", color=line.get_color(), label=f"{f['name']} ACK received")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequence number (segments)")
    ax.legend(fontsize=8)


def _labels(s: dict[str, Any]) -> list[str]:
    return [f"{f['name']}\n{f['src']}→{f['dst']}" for f in s["flows"]]


def _throughput(ax: Any, s: dict[str, Any]) -> None:
    ax.bar(_labels(s), [f["throughput_kbps"] for f in s["flows"]], color="tab:blue")
    ax.set_ylabel("throughput (kbit/s)")


def _series(s: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(flow, its packet series) for flows that received something, if recorded."""
    series = (s.get("series") or {}).get("flows", [])
    return [(f, ps) for f, ps in zip(s["flows"], series) if ps["t_s"]]


def _delay(ax: Any, s: dict[str, Any]) -> None:
    if _series(s):
        for f, ps in _series(s):
            ax.plot(ps["t_s"], [1e3 * d for d in ps["delay_s"]], ".", markersize=2, label=f"{f['name']} {f['src']}→{f['dst']}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("end-to-end delay (ms)")
        ax.legend(fontsize=8, markerscale=4)
        return
    flows = s["flows"]
    mean = [1e3 * (f["delay_mean_s"] or 0.0) for f in flows]
    lo = [m - 1e3 * (f["delay_min_s"] or 0.0) for m, f in zip(mean, flows)]
    hi = [1e3 * (f["delay_max_s"] or 0.0) - m for m, f in zip(mean, flows)]
    ax.bar(_labels(s), mean, yerr=[lo, hi], capsize=4, color="tab:orange")
    ax.set_ylabel("end-to-end delay (ms): mean, min–max")


def _jitter(ax: Any, s: dict[str, Any]) -> None:
    if _series(s):
        for f, ps in _series(s):
            d = ps["delay_s"]
            ax.plot(ps["t_s"][1:], [1e3 * (b - a) for a, b in zip(d, d[1:])], ".", markersize=2, label=f"{f['name']} {f['src']}→{f['dst']}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("jitter: delay(i+1) − delay(i) (ms)")
        ax.legend(fontsize=8, markerscale=4)
        return
    ax.bar(_labels(s), [1e3 * (f["jitter_mean_s"] or 0.0) for f in s["flows"]], color="tab:green")
    ax.set_ylabel("jitter: mean |Δ delay| (ms)")


def _drops(ax: Any, s: dict[str, Any]) -> None:
    nodes = s["nodes"]
    # Every key is in every row; plot the reasons that occurred.
    keys = sorted({k for n in nodes for k, v in n["drops"].items() if v})
    bottom = [0] * len(nodes)
    for k in keys:
        vals = [n["drops"].get(k, 0) for n in nodes]
        ax.bar([str(n["node"]) for n in nodes], vals, bottom=bottom, label=k)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xlabel("node")
    ax.set_ylabel("packets dropped")
    if keys:
        ax.legend(fontsize=8, title="layer.reason")


def _queue(ax: Any, s: dict[str, Any]) -> None:
    queues = [q for q in (s.get("series") or {}).get("queues", []) if any(q["len_pkts"])]
    if not queues:
        raise PlotError("no queue series in this result (run with [outputs] series = true)")
    for q in queues:
        ax.step(q["t_s"], q["len_pkts"], where="post", label=f"node {q['node']}")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("interface queue (packets)")
    ax.legend(fontsize=8)


_DRAW = {"cwnd": _cwnd, "seq": _seq, "throughput": _throughput, "delay": _delay, "jitter": _jitter, "drops": _drops, "queue": _queue}
