"""Figures from a result directory (``summary.json`` as `manetlab run` writes it).

Kinds, in the style of the papers' figures:

* ``cwnd`` — congestion window and slow-start threshold (segments) against time for
  each traced TCP flow (paper 001 Fig. 3);
* ``seq`` — sequence number sent and cumulative ACK received (segments) against time
  (paper 000 Fig. 2);
* ``throughput`` — per-flow bars (kbit/s);
* ``throughput_time`` — per-flow throughput against time (kbit/s per interval of
  1/50 of the run): a CBR flow's from each received packet with ``[outputs] series
  = true``, a TCP flow's from its cumulative ACK when traced (``tcp = { trace = true }``;
  an untraced TCP flow is named in the figure, not drawn);
* ``delay``, ``jitter`` — with ``[outputs] series = true``, each received packet's
  delay and jitter(i) = delay(i+1) − delay(i) against time (paper 004's figures);
  otherwise per-flow bars (mean with min–max whiskers; mean |Δdelay|), in ms;
* ``drops`` — packets dropped per node stacked by ``layer.CODE``; frame collisions
  (``mac.COL``) are left out: a collided frame is retried by the MAC, it is not a
  lost packet (the retry limit, ``mac.RET``, is);
* ``queue`` — interface-queue length against time per node (needs series).

Many series: a figure draws at most ``MAX_SERIES`` (8) flows or nodes by name —
the 8 with the largest maximum of the quantity plotted (4 flows for ``cwnd`` and
``seq``, which draw two lines each; 8 drop reasons for ``drops``) — and one grey
"others (k …)" series: their maximum at each time (their points, for per-packet
``delay``/``jitter``; their sum, stacked, for ``drops``), so the legend fits.
``flows=`` / ``nodes=`` select what a figure draws (flow indices or unambiguous
names; node indices). A ``delay`` bar figure whose whiskers reach far above the
means (over 5 × the highest) has its y axis cut at 1.5 × the highest mean; each cut
whisker is marked "max X" at the cut.

Time series come from TCP flows run with ``tcp = { trace = true }``; a window or
sequence line is held at its last value to the end of the run. Overlaid lines get
distinct styles and widths so equal stretches stay visible. Every figure is written
as PNG and SVG with matplotlib's headless Agg backend.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from manetlab import safeio

KINDS = ("cwnd", "seq", "throughput", "throughput_time", "delay", "jitter", "drops", "queue")

#: Line styles for overlaid series: widest first, so a line drawn later on the
#: same values still shows the earlier one around it.
STYLES: list[dict[str, Any]] = [
    {"linestyle": "-", "linewidth": 3.2, "alpha": 0.55},
    {"linestyle": "--", "linewidth": 2.0},
    {"linestyle": "-.", "linewidth": 1.6},
    {"linestyle": ":", "linewidth": 1.6},
    {"linestyle": (0, (5, 1, 1, 1, 1, 1)), "linewidth": 1.2},
    {"linestyle": "-", "linewidth": 0.8},
]

#: Frame-level MAC events that are not packet drops (the frame is retried). The core
#: reports collisions as the MAC counter `mac_collisions`; result folders written
#: before that still list `mac.COL` among the drops.
NOT_PACKET_DROPS = frozenset({"mac.COL"})


def extend_to_end(t_s: list[float], values: list[Any], end_s: float) -> tuple[list[float], list[Any]]:
    """A step series held at its last value until `end_s` (a window that stopped
    changing is still that window at the end of the run)."""
    if t_s and t_s[-1] < end_s:
        return [*t_s, end_s], [*values, values[-1]]
    return list(t_s), list(values)


#: Most characters of a name a figure shows: names may be 200 characters long
#: (docs/scenarios.md), which would push the axes out of the figure (matplotlib:
#: "axes sizes collapsed to zero"). Legends and the title show a cut name ("…");
#: a bar's label wraps the name on up to 3 lines of 20. The tables hold the whole name.
LEGEND_NAME_CHARS = 40
TITLE_CHARS = 70


def _short(text: str, limit: int) -> str:
    """`text` of at most `limit` characters, "…" marking a cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bar_label(name: str) -> str:
    """A name under a bar: as it is up to 20 characters, else wrapped on up to 3 lines."""
    return name if len(name) <= 20 else "\n".join(textwrap.wrap(name, 20, max_lines=3, placeholder="…"))


def _bins(end_s: float) -> list[float]:
    width = end_s / 50 if end_s > 0 else 1.0
    return [i * width for i in range(51)]


def ack_throughput(flow: dict[str, Any], end_s: float) -> tuple[list[float], list[float]]:
    """Throughput against time (kbit/s) of a traced TCP flow: newly acknowledged
    data per interval, at the flow's mean bytes per segment."""
    tr = flow["tcp"]["trace"]
    highest = max(tr["ack_segs"], default=0)
    seg_bytes = flow["rx_bytes"] / highest if highest else 0.0
    edges = _bins(end_s)
    acked_at = []
    j, ack = 0, 0
    for e in edges:
        while j < len(tr["t_s"]) and tr["t_s"][j] <= e:
            ack = tr["ack_segs"][j]
            j += 1
        acked_at.append(ack)
    width = edges[1] - edges[0]
    rates = [(b - a) * seg_bytes * 8 / width / 1e3 for a, b in pairwise(acked_at)]
    return edges, [*rates, rates[-1]] if rates else []


def packet_throughput(flow: dict[str, Any], series: dict[str, Any], end_s: float) -> tuple[list[float], list[float]]:
    """Throughput against time (kbit/s) from each received packet's arrival time."""
    edges = _bins(end_s)
    width = edges[1] - edges[0]
    pkt_bytes = flow["rx_bytes"] / flow["rx_packets"] if flow["rx_packets"] else 0.0
    counts = [0] * 50
    for t in series["t_s"]:
        counts[min(int(t / width), 49)] += 1
    rates = [c * pkt_bytes * 8 / width / 1e3 for c in counts]
    return edges, [*rates, rates[-1]]

#: Most flows or nodes a figure names in its legend; the rest are one "others" series.
MAX_SERIES = 8
#: Grey, dotted: the "others" series.
OTHERS_STYLE: dict[str, Any] = {"color": "0.45", "linestyle": ":", "linewidth": 1.2}


def _top(items: list[Any], size: Callable[[Any], float], n: int = MAX_SERIES) -> tuple[list[Any], list[Any]]:
    """(shown, others): all of `items` if at most n + 1, else the n largest by `size`
    (ties: the earlier first), in their original order, and the rest."""
    if len(items) <= n + 1:
        return list(items), []
    ranked = sorted(range(len(items)), key=lambda i: (-size(items[i]), i))
    keep = set(ranked[:n])
    return [x for i, x in enumerate(items) if i in keep], [x for i, x in enumerate(items) if i not in keep]


def _finite_max(values: list[Any]) -> float:
    vals = [float(v) for v in values if v is not None and v == v]
    return max(vals, default=0.0)


def step_max(series: list[tuple[list[float], list[float]]]) -> tuple[list[float], list[float]]:
    """The pointwise maximum of step series (each held at its value from its time on;
    a series counts from its first point)."""
    ts = sorted({t for xs, _ in series for t in xs})
    idx = [0] * len(series)
    cur: list[float | None] = [None] * len(series)
    out = []
    for t in ts:
        for k, (xs, ys) in enumerate(series):
            while idx[k] < len(xs) and xs[idx[k]] <= t:
                y = ys[idx[k]]
                cur[k] = None if y is None or y != y else float(y)
                idx[k] += 1
        vals = [c for c in cur if c is not None]
        out.append(max(vals) if vals else float("nan"))
    return ts, out


__all__ = ["KINDS", "MAX_SERIES", "step_max", "ack_throughput", "extend_to_end", "figure", "load_summary", "packet_throughput", "plot", "select"]


class PlotError(ValueError):
    """A figure that cannot be drawn from this result (e.g. no traced TCP flow)."""


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (figures are drawn without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out: Path, stem: str, dpi: int = 120) -> list[Path]:
    """Write `fig` as ``out/stem.png`` and ``out/stem.svg``; fixed metadata, so equal
    results give byte-identical files. Each file is written whole, never through a
    symbolic link (`manetlab.safeio.write_bytes`)."""
    import io

    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for path, fmt, kwargs in ((paths[0], "png", {"dpi": dpi, "metadata": {"Software": None}}), (paths[1], "svg", {"metadata": {"Date": None, "Creator": None}})):
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, **kwargs)
        safeio.write_bytes(path, buf.getvalue())
    return paths


def load_summary(result_dir: str | os.PathLike[str]) -> dict[str, Any]:
    path = Path(result_dir) / "summary.json"
    try:
        # A result folder may come from someone else: no link followed, no FIFO waited on.
        summary: dict[str, Any] = json.loads(safeio.read_text(path))
        return summary
    except FileNotFoundError:
        raise PlotError(f"{path}: no summary.json here (write one with `manetlab run ... --out DIR`)") from None
    except safeio.UnsafePathError as e:
        raise PlotError(str(e)) from None
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not a manetlab summary ({e.msg})") from None


def _traced(summary: dict[str, Any]) -> list[dict[str, Any]]:
    flows = [f for f in summary["flows"] if (f.get("tcp") or {}).get("trace")]
    if not flows:
        raise PlotError("no traced TCP flow in this result (run FTP flows with tcp = { trace = true })")
    return flows


#: Kinds that draw flows / nodes (what --flows / --nodes select).
FLOW_KINDS = frozenset({"cwnd", "seq", "throughput", "throughput_time", "delay", "jitter"})
NODE_KINDS = frozenset({"drops", "queue"})


def _pick(tokens: list[Any], what: str, ids: list[int], names: list[str | None]) -> set[int]:
    chosen: set[int] = set()
    allowed = f"allowed: {what} indices {min(ids)}..{max(ids)}" if ids else f"allowed: none, this result has no {what}s"
    if what == "flow":
        allowed += " or a flow name"
    for tok in tokens:
        text = str(tok)
        if isinstance(tok, int) or text.isdigit():
            if int(text) not in ids:
                raise PlotError(f"plot --{what}s: no {what} {int(text)} ({allowed})")
            chosen.add(int(text))
            continue
        hits = [i for i, n in zip(ids, names) if n is not None and n == text]
        shown = repr(_short(text, 40)).encode("unicode_escape").decode("ascii")
        if not hits:
            raise PlotError(f"plot --{what}s: no {what} named {shown} ({allowed})")
        if len(hits) > 1:
            raise PlotError(f"plot --{what}s: {len(hits)} {what}s are named {shown}; give an index ({allowed})")
        chosen.add(hits[0])
    return chosen


def select(summary: dict[str, Any], flows: list[Any] | None = None, nodes: list[Any] | None = None) -> dict[str, Any]:
    """`summary` with only the flows / nodes selected (indices, or unambiguous flow
    names); their packet and queue series follow. A bad selection raises PlotError."""
    s = dict(summary)
    series = dict(s.get("series") or {})
    if flows is not None:
        keep = _pick(list(flows), "flow", [f["flow"] for f in s["flows"]], [f.get("name") for f in s["flows"]])
        s["flows"] = [f for f in s["flows"] if f["flow"] in keep]
        if "flows" in series:
            series["flows"] = [ps for ps in series["flows"] if ps["flow"] in keep]
    if nodes is not None:
        keep = _pick(list(nodes), "node", [n["node"] for n in s["nodes"]], [None for _ in s["nodes"]])
        s["nodes"] = [n for n in s["nodes"] if n["node"] in keep]
        if "queues" in series:
            series["queues"] = [q for q in series["queues"] if q["node"] in keep]
    if s.get("series") is not None:
        s["series"] = series
    return s


def figure(summary: dict[str, Any], kind: str, title: str, *, flows: list[Any] | None = None, nodes: list[Any] | None = None) -> Any:
    """The matplotlib figure of `kind` for `summary` (the caller closes it)."""
    if kind not in KINDS:
        raise PlotError(f"unknown plot kind {kind!r} (allowed: {', '.join(KINDS)})")
    if flows is not None and kind not in FLOW_KINDS:
        raise PlotError(f"plot --flows: kind {kind} draws nodes, not flows (allowed: --nodes; --flows with {', '.join(k for k in KINDS if k in FLOW_KINDS)})")
    if nodes is not None and kind not in NODE_KINDS:
        raise PlotError(f"plot --nodes: kind {kind} draws flows, not nodes (allowed: --flows; --nodes with {', '.join(k for k in KINDS if k in NODE_KINDS)})")
    summary = select(summary, flows, nodes)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    try:
        _DRAW[kind](ax, summary)
        ax.set_title(f"{_short(title, TITLE_CHARS)} (seed {summary['seed']})", fontsize=10)
    except BaseException:
        plt.close(fig)
        raise
    return fig


def plot(result_dir: str | os.PathLike[str], kind: str, out_dir: str | os.PathLike[str] | None = None, *,
         flows: list[Any] | None = None, nodes: list[Any] | None = None) -> list[Path]:
    """Draw figure `kind` for the run in `result_dir`; returns the PNG and SVG paths.
    `flows` / `nodes`: draw only these (flow indices or unambiguous names; node indices)."""
    if kind not in KINDS:
        raise PlotError(f"unknown plot kind {kind!r} (allowed: {', '.join(KINDS)})")
    plt = pyplot()
    summary = load_summary(result_dir)
    # Names are text: "$...$" in a scenario or flow name is not TeX (mathtext would
    # misdraw it, or fail on an unknown command).
    with plt.rc_context({"text.parse_math": False}):
        fig = figure(summary, kind, summary.get("scenario_name") or Path(result_dir).name, flows=flows, nodes=nodes)
        try:
            out = Path(out_dir) if out_dir is not None else Path(result_dir)
            out.mkdir(parents=True, exist_ok=True)
            return save_figure(fig, out, kind)
        finally:
            plt.close(fig)


# Before the first loss ssthresh is "infinite" (a huge sentinel); such values are
# left out of the figure rather than flattening the window to the axis.
UNBOUNDED_SSTHRESH_SEGS = 1e6


def _traced_pairs(ax: Any, s: dict[str, Any], key: str, label: str, other_key: str, other_label: str, ylabel: str,
                  shown: Callable[[list[float]], list[float]] | None = None, **other_style: Any) -> None:
    """Per traced flow, its `key` series and, in the same colour and `other_style`,
    its `other_key` series (through `shown`, if given), against time (held to the end of the run)."""
    end = float(s["duration_s"])
    picked, others = _top(_traced(s), lambda f: _finite_max(f["tcp"]["trace"][key]), MAX_SERIES // 2)
    for i, f in enumerate(picked):
        tr = f["tcp"]["trace"]
        width = STYLES[i % len(STYLES)]["linewidth"]
        line = ax.step(*extend_to_end(tr["t_s"], tr[key], end), where="post", linewidth=width, label=f"{_short(f['name'], LEGEND_NAME_CHARS)} ({f['transport']}) {label}")[0]
        other = tr[other_key] if shown is None else shown(tr[other_key])
        ax.step(*extend_to_end(tr["t_s"], other, end), where="post", color=line.get_color(), label=f"{_short(f['name'], LEGEND_NAME_CHARS)} {other_label}", **other_style)
    if others:
        xs, ys = step_max([extend_to_end(f["tcp"]["trace"]["t_s"], f["tcp"]["trace"][key], end) for f in others])
        ax.step(xs, ys, where="post", label=f"others ({len(others)} flows): max {label}", **OTHERS_STYLE)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)


def _bounded_ssthresh(values: list[float]) -> list[float]:
    return [v if v < UNBOUNDED_SSTHRESH_SEGS else float("nan") for v in values]


def _cwnd(ax: Any, s: dict[str, Any]) -> None:
    _traced_pairs(ax, s, "cwnd_segs", "cwnd", "ssthresh_segs", "ssthresh", "window (segments)", _bounded_ssthresh, linestyle="--", alpha=0.6)


def _seq(ax: Any, s: dict[str, Any]) -> None:
    _traced_pairs(ax, s, "seq_segs", "sequence sent", "ack_segs", "ACK received", "sequence number (segments)", linestyle=":")


#: Up to this many bars, each is labelled in full (name wrapped, src→dst under it);
#: above, one short line per bar turned 90°.
FLAT_BAR_LABELS = 8
#: Most labels an x axis of bars shows: with more bars, every k-th bar is labelled
#: (the first always), so labels never overlap.
MAX_BAR_LABELS = 40


def _bar_ticks(ax: Any, full: list[str], short: list[str], flat_max: int = FLAT_BAR_LABELS, what: str = "flows") -> None:
    """Label bars drawn at x = 0, 1, …: `full` labels when there are at most
    `flat_max` bars, else the `short` ones turned 90° (smaller), at most
    MAX_BAR_LABELS of them (every k-th bar, said in the x axis label)."""
    n = len(full)
    if n <= flat_max:
        ax.set_xticks(range(n), full)
        return
    step = -(-n // MAX_BAR_LABELS)
    shown = list(range(0, n, step))
    ax.set_xticks(shown, [short[i] for i in shown], rotation=90, fontsize=7)
    ax.set_xlim(-0.6, n - 0.4)
    if step > 1:
        ax.set_xlabel(f"{what} (1 in {step} of {n} labelled)")


def _flow_bars(ax: Any, s: dict[str, Any], values: list[float], **kwargs: Any) -> None:
    """One bar per flow at x = flow position, labelled by name and src→dst; drawn
    by position, so flows of equal names stay separate bars."""
    flows = s["flows"]
    if not flows:
        raise PlotError("no flows in this result: no bars to draw")
    ax.bar(range(len(flows)), values, **kwargs)
    _bar_ticks(ax, [f"{_bar_label(f['name'])}\n{f['src']}→{f['dst']}" for f in flows],
               [f"{_short(f['name'], 16)} {f['src']}→{f['dst']}" for f in flows])


def _throughput(ax: Any, s: dict[str, Any]) -> None:
    _flow_bars(ax, s, [f["throughput_kbps"] for f in s["flows"]], color="tab:blue")
    ax.set_ylabel("throughput (kbit/s)")


def _throughput_time(ax: Any, s: dict[str, Any]) -> None:
    end = float(s["duration_s"])
    series = {ps["flow"]: ps for ps in (s.get("series") or {}).get("flows", [])}
    untraced_tcp = []
    curves = []
    for f in s["flows"]:
        # TCP segments carry no creation time, so a TCP flow's packet series is
        # always empty (docs/metrics.md): its curve comes from the ACK trace, or it
        # is left out and named, never drawn as a flat 0.
        if f.get("tcp") is not None:
            if not (f["tcp"] or {}).get("trace"):
                untraced_tcp.append(_short(f["name"], LEGEND_NAME_CHARS))
                continue
            xs, ys = ack_throughput(f, end)
        elif f["flow"] in series:
            xs, ys = packet_throughput(f, series[f["flow"]], end)
        else:
            continue
        curves.append((f, xs, ys))
    picked, others = _top(curves, lambda c: _finite_max(c[2]))
    for i, (f, xs, ys) in enumerate(picked):
        ax.step(xs, ys, where="post", label=f"{_short(f['name'], LEGEND_NAME_CHARS)} {f['src']}→{f['dst']}", **STYLES[i % len(STYLES)])
    drawn = len(curves)
    if others:
        # Equal bins: the maximum of the others' rates in each bin.
        ax.step(others[0][1], [max(v) for v in zip(*(c[2] for c in others))], where="post", label=f"others ({len(others)} flows): max", **OTHERS_STYLE)
    if not drawn:
        raise PlotError("no flow with a time series in this result (run with [outputs] series = true, or FTP flows with tcp = { trace = true })")
    if untraced_tcp:
        ax.text(0.01, 0.99, "not shown (TCP without tcp.trace): " + ", ".join(untraced_tcp), transform=ax.transAxes,
                fontsize=7, va="top")
    ax.set_xlim(0, end)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(f"throughput (kbit/s per {end / 50:g} s)")
    ax.legend(fontsize=8)


def _series(s: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(flow, its packet series) for flows that received something, if recorded."""
    series = {ps["flow"]: ps for ps in (s.get("series") or {}).get("flows", [])}
    return [(f, series[f["flow"]]) for f in s["flows"] if f["flow"] in series and series[f["flow"]]["t_s"]]


def _per_packet(ax: Any, s: dict[str, Any], values_ms: Callable[[dict[str, Any]], tuple[list[float], list[float]]], ylabel: str) -> bool:
    """Each flow's per-packet (time, value in ms) points from its packet series;
    False (nothing drawn) if the result recorded none."""
    if not _series(s):
        return False
    points = [(f, *values_ms(ps)) for f, ps in _series(s)]
    picked, others = _top(points, lambda p: _finite_max([abs(v) for v in p[2]]))
    for f, xs, ys in picked:
        ax.plot(xs, ys, ".", markersize=2, label=f"{_short(f['name'], LEGEND_NAME_CHARS)} {f['src']}→{f['dst']}")
    if others:
        ax.plot([x for p in others for x in p[1]], [y for p in others for y in p[2]], ".", markersize=2, color=OTHERS_STYLE["color"],
                label=f"others ({len(others)} flows)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, markerscale=4)
    return True


#: A delay figure's y axis is cut when a whisker reaches over this many times the highest mean.
WHISKER_CUT = 5.0


def _delay(ax: Any, s: dict[str, Any]) -> None:
    if _per_packet(ax, s, lambda ps: (ps["t_s"], [1e3 * d for d in ps["delay_s"]]), "end-to-end delay (ms)"):
        return
    flows = s["flows"]
    mean = [1e3 * (f["delay_mean_s"] or 0.0) for f in flows]
    lo = [m - 1e3 * (f["delay_min_s"] or 0.0) for m, f in zip(mean, flows)]
    hi = [1e3 * (f["delay_max_s"] or 0.0) - m for m, f in zip(mean, flows)]
    _flow_bars(ax, s, mean, yerr=[lo, hi], capsize=4 if len(flows) <= FLAT_BAR_LABELS else 1, color="tab:orange")
    ax.set_ylabel("end-to-end delay (ms): mean, min–max")
    # A whisker far above the means (one late packet; over 5 × the highest mean)
    # would flatten the bars: cut the axis at 1.5 × the highest mean and write each
    # cut whisker's maximum at the cut.
    top = 1.5 * max(mean, default=0.0)
    maxima = [m + h for m, h in zip(mean, hi)]
    if top > 0 and max(maxima) > WHISKER_CUT * max(mean):
        ax.set_ylim(0, top)
        cut = [(x, peak) for x, peak in enumerate(maxima) if peak > top]
        if len(cut) <= MAX_WHISKER_NOTES:
            for x, peak in cut:
                ax.annotate(_ms_text(peak), xy=(x, top), xytext=(x, 0.9 * top), ha="center", va="top", fontsize=7,
                            arrowprops={"arrowstyle": "->", "linewidth": 0.8})
        else:
            # Side by side, many notes would be one smear: one line says it for all.
            x, peak = max(cut, key=lambda c: c[1])
            ax.text(0.99, 0.99, f"{len(cut)} whiskers cut at {top:.0f} ms; highest {_ms_text(peak)} "
                    f"({_short(flows[x]['name'], LEGEND_NAME_CHARS)})", transform=ax.transAxes, ha="right", va="top", fontsize=7)


#: Most cut delay whiskers marked one by one (above, one note for them all).
MAX_WHISKER_NOTES = 3


def _ms_text(peak_ms: float) -> str:
    return f"max {peak_ms / 1e3:.1f} s" if peak_ms >= 1e3 else f"max {peak_ms:.0f} ms"


def _jitter(ax: Any, s: dict[str, Any]) -> None:
    def jitter_ms(ps: dict[str, Any]) -> tuple[list[float], list[float]]:
        d = ps["delay_s"]
        return ps["t_s"][1:], [1e3 * (b - a) for a, b in pairwise(d)]

    if _per_packet(ax, s, jitter_ms, "jitter: delay(i+1) − delay(i) (ms)"):
        return
    _flow_bars(ax, s, [1e3 * (f["jitter_mean_s"] or 0.0) for f in s["flows"]], color="tab:green")
    ax.set_ylabel("jitter: mean |Δ delay| (ms)")


def _drops(ax: Any, s: dict[str, Any]) -> None:
    nodes = s["nodes"]
    # Every key is in every row; plot the packet-drop reasons that occurred.
    keys = sorted({k for n in nodes for k, v in n["drops"].items() if v} - NOT_PACKET_DROPS)
    picked, others = _top(keys, lambda k: sum(n["drops"].get(k, 0) for n in nodes))
    bottom = [0] * len(nodes)
    parts: list[tuple[str, list[int], dict[str, Any]]] = [(k, [n["drops"].get(k, 0) for n in nodes], {}) for k in picked]
    if others:
        parts.append((f"others ({len(others)} reasons)", [sum(n["drops"].get(k, 0) for k in others) for n in nodes], {"color": OTHERS_STYLE["color"]}))
    for label, vals, style in parts:
        ax.bar(range(len(nodes)), vals, bottom=bottom, label=label, **style)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    if not parts:  # nothing dropped: the nodes' axis all the same, and said
        ax.bar(range(len(nodes)), [0] * len(nodes))
        ax.set_ylim(0, 1)
        ax.text(0.5, 0.5, "no packet dropped", transform=ax.transAxes, ha="center", va="center")
    names = [str(n["node"]) for n in nodes]
    ax.set_xlabel("node")
    _bar_ticks(ax, names, names, flat_max=20, what="node")
    ax.set_ylabel("packets dropped")
    if keys:
        ax.legend(fontsize=8, title="layer.reason")


def _queue(ax: Any, s: dict[str, Any]) -> None:
    queues = [q for q in (s.get("series") or {}).get("queues", []) if any(q["len_pkts"])]
    if not queues:
        raise PlotError("no queue series in this result (run with [outputs] series = true)")
    picked, others = _top(queues, lambda q: _finite_max(q["len_pkts"]))
    for q in picked:
        ax.step(q["t_s"], q["len_pkts"], where="post", label=f"node {q['node']}")
    if others:
        xs, ys = step_max([(q["t_s"], q["len_pkts"]) for q in others])
        ax.step(xs, ys, where="post", label=f"others ({len(others)} nodes): max", **OTHERS_STYLE)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("interface queue (packets)")
    ax.legend(fontsize=8)


_DRAW = {"cwnd": _cwnd, "seq": _seq, "throughput": _throughput, "throughput_time": _throughput_time, "delay": _delay, "jitter": _jitter, "drops": _drops, "queue": _queue}
