"""Figures must agree with the tables they illustrate (issue 35): a figure is
read back from matplotlib's own artists and compared with summary.json."""

from __future__ import annotations

from typing import Any

import pytest

import manetlab
from manetlab import plots
from _util import ROOT

TCP_CHAIN = ROOT / "examples" / "tcp_chain_80211.toml"


def _drawn(summary: dict[str, Any]) -> tuple[list[Any], list[str]]:
    plt = plots.pyplot()
    fig, ax = plt.subplots()
    try:
        plots._throughput_time(ax, summary)
        return [(line.get_label(), list(line.get_ydata())) for line in ax.lines], [t.get_text() for t in ax.texts]
    finally:
        plt.close(fig)


@pytest.mark.parametrize("traced", [True, False])
def test_tcp_throughput_over_time_is_never_a_flat_zero_with_series_on(tmp_path: Any, traced: bool) -> None:
    # `run --animate` turns series on; TCP flows then have an empty packet series,
    # which the figure used to draw as 0 kbit/s beside a table of ~150 kbit/s.
    sc = manetlab.load_scenario(TCP_CHAIN, {"duration_s": 20.0, "outputs.series": True, "flows[0].tcp.trace": traced})
    res = manetlab.run(sc)
    summary = res.summary
    flow = summary["flows"][0]
    assert flow["throughput_kbps"] > 50
    if traced:
        lines, notes = _drawn(summary)
        assert len(lines) == 1 and not notes
        ys = lines[0][1][:-1]  # the step's last point repeats the last bin
        # 50 equal bins over the run: their mean is the run's throughput.
        assert sum(ys) / len(ys) == pytest.approx(flow["throughput_kbps"], rel=0.05)
    else:
        with pytest.raises(plots.PlotError, match="no flow with a time series"):
            _drawn(summary)


def test_untraced_tcp_flow_is_named_not_drawn_beside_a_cbr_flow() -> None:
    base = manetlab.load_scenario(TCP_CHAIN, {"duration_s": 20.0, "outputs.series": True})
    data = {**base.data, "flows": [*base.data["flows"], {"name": "cbr", "kind": "cbr", "src": 0, "dst": 2, "rate_kbps": 20.0}]}
    sc = manetlab.Scenario(data)
    summary = manetlab.run(sc).summary
    lines, notes = _drawn(summary)
    assert [label.split()[0] for label, _ in lines] == ["cbr"]
    assert notes == ["not shown (TCP without tcp.trace): ftp"]
    cbr = summary["flows"][1]
    ys = lines[0][1][:-1]
    assert sum(ys) / len(ys) == pytest.approx(cbr["throughput_kbps"], rel=0.05)


# --- Legends fit, whiskers stay readable, selections, and every kind against its table ---

CBR_CHAIN = ROOT / "examples" / "cbr_chain.toml"
PAIRS = [(0, 29), (5, 24), (12, 23), *((2 * i, 2 * i + 1) for i in range(11))]


def _grid30(kind: str) -> dict[str, Any]:
    """A 30-node 802.11 grid (AODV, series on) with 12 flows: CBR, or traced FTP."""
    if kind == "cbr":
        flows = [{"name": f"c{i}", "kind": "cbr", "src": a, "dst": b, "rate_kbps": 64.0, "start_s": 0.5} for i, (a, b) in enumerate(PAIRS)]
    else:
        flows = [{"name": f"t{i}", "kind": "ftp", "src": a, "dst": b, "start_s": 0.5, "tcp": {"trace": True}} for i, (a, b) in enumerate(PAIRS)]
    data = {"name": "grid30", "seed": 1, "duration_s": 4.0, "radio": {}, "routing": {"protocol": "aodv"}, "outputs": {"series": True},
            "nodes": {"count": 30, "placement": {"kind": "grid", "columns": 6, "spacing_m": 200}}, "flows": flows}
    return manetlab.run(manetlab.Scenario(data)).summary


@pytest.fixture(scope="module")
def grid30_cbr() -> dict[str, Any]:
    return _grid30("cbr")


@pytest.fixture(scope="module")
def grid30_tcp() -> dict[str, Any]:
    return _grid30("tcp")


def _fig(summary: dict[str, Any], kind: str) -> Any:
    """The figure as `plot` lays it out (7 × 4.2 in, constrained layout), drawn."""
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    plots._DRAW[kind](ax, summary)
    fig.canvas.draw()
    return fig


def _legend(ax: Any) -> list[str]:
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg is not None else []


@pytest.mark.parametrize(("run", "kind"), [("cbr", "queue"), ("cbr", "throughput_time"), ("cbr", "delay"), ("cbr", "jitter"),
                                           ("tcp", "cwnd"), ("tcp", "seq"), ("tcp", "throughput_time")])
def test_many_series_leave_the_axes_most_of_the_figure(request: Any, run: str, kind: str) -> None:
    summary = request.getfixturevalue(f"grid30_{run}")
    fig = _fig(summary, kind)
    try:
        ax = fig.get_axes()[0]
        assert ax.get_position().height >= 0.5
        labels = _legend(ax)
        assert len(labels) <= 9
        assert any(label.startswith("others (") for label in labels)
    finally:
        plots.pyplot().close(fig)


def test_queue_shows_the_eight_longest_queues_and_the_others_maximum(grid30_cbr: dict[str, Any]) -> None:
    queues = [q for q in grid30_cbr["series"]["queues"] if any(q["len_pkts"])]
    assert len(queues) > 9
    fig = _fig(grid30_cbr, "queue")
    try:
        ax = fig.get_axes()[0]
        by_label = {line.get_label(): list(line.get_ydata()) for line in ax.lines}
        shown = {int(k.split()[1]) for k in by_label if k.startswith("node ")}
        assert len(shown) == 8
        peak = {q["node"]: max(q["len_pkts"]) for q in queues}
        hidden = [n for n in peak if n not in shown]
        assert min(peak[n] for n in shown) >= max(peak[n] for n in hidden)
        others = by_label[f"others ({len(hidden)} nodes): max"]
        assert max(others) == max(peak[n] for n in hidden)
        for n in shown:  # each named node's line is its own series
            assert by_label[f"node {n}"] == next(q["len_pkts"] for q in queues if q["node"] == n)
    finally:
        plots.pyplot().close(fig)


def test_drops_with_many_reasons_keep_each_nodes_total() -> None:
    reasons = [f"l{i}.R{i}" for i in range(12)]
    nodes = [{"node": n, "drops": {r: (n + i) % 5 for i, r in enumerate(reasons)} | {"mac.COL": 7}} for n in range(30)]
    fig = _fig({"nodes": nodes}, "drops")
    try:
        ax = fig.get_axes()[0]
        assert len(_legend(ax)) <= 9 and ax.get_position().height >= 0.5
        tops = {}
        for bar in ax.patches:
            x = round(bar.get_x() + bar.get_width() / 2)
            tops[x] = max(tops.get(x, 0), bar.get_y() + bar.get_height())
        assert [tops[i] for i in range(30)] == [sum(v for k, v in n["drops"].items() if k != "mac.COL") for n in nodes]
    finally:
        plots.pyplot().close(fig)


def test_delay_whisker_far_above_the_means_is_cut_and_marked() -> None:
    summary = manetlab.run(manetlab.load_scenario(CBR_CHAIN)).summary
    summary["flows"][0]["delay_max_s"] = 12.0  # one packet 12 s late
    fig = _fig(summary, "delay")
    try:
        ax = fig.get_axes()[0]
        means = [1e3 * f["delay_mean_s"] for f in summary["flows"]]
        assert [b.get_height() for b in ax.patches] == pytest.approx(means)
        top = ax.get_ylim()[1]
        assert max(means) < top <= 2 * max(means)
        assert "max 12.0 s" in [t.get_text() for t in ax.texts]
    finally:
        plots.pyplot().close(fig)


def _cbr_result(tmp_path: Any, series: bool) -> Any:
    """A 5-node 802.11 chain (its interface queues have series) with CBR flows "steady" and "burst"."""
    base = manetlab.load_scenario(TCP_CHAIN, {"duration_s": 10.0, "outputs.series": series})
    flows = [{"name": "steady", "kind": "cbr", "src": 0, "dst": 4, "rate_kbps": 100.0},
             {"name": "burst", "kind": "cbr", "src": 1, "dst": 3, "rate_kbps": 400.0, "start_s": 3.0, "stop_s": 6.0}]
    out = tmp_path / "cbr"
    manetlab.run(manetlab.Scenario({**base.data, "flows": flows})).write(out)
    return out


def test_flows_and_nodes_select_what_a_figure_draws(tmp_path: Any) -> None:
    out = _cbr_result(tmp_path, True)
    summary = plots.load_summary(out)
    for sel in ([1], ["burst"], ["1"]):
        fig = plots.figure(summary, "throughput", "t", flows=sel)
        try:
            assert [b.get_height() for b in fig.get_axes()[0].patches] == [summary["flows"][1]["throughput_kbps"]]
        finally:
            plots.pyplot().close(fig)
    fig = plots.figure(summary, "queue", "t", nodes=[1, 2])
    try:
        assert {line.get_label() for line in fig.get_axes()[0].lines} <= {"node 1", "node 2"}
    finally:
        plots.pyplot().close(fig)
    fig = plots.figure(summary, "delay", "t", flows=["steady"])
    try:
        ys = list(fig.get_axes()[0].lines[0].get_ydata())
        assert len(fig.get_axes()[0].lines) == 1 and ys == [1e3 * d for d in summary["series"]["flows"][0]["delay_s"]]
    finally:
        plots.pyplot().close(fig)
    paths = plots.plot(out, "drops", tmp_path / "figs", nodes=[1])
    assert [p.name for p in paths] == ["drops.png", "drops.svg"]


@pytest.mark.parametrize(("args", "message"), [
    (["--flows", "7"], "plot --flows: no flow 7 (allowed: flow indices 0..1 or a flow name)"),
    (["--flows", "nope\n"], "plot --flows: no flow named 'nope\\\\n' (allowed: flow indices 0..1 or a flow name)"),
    (["--nodes", "9"], None),
    (["--nodes", "1"], "plot --nodes: kind throughput draws flows, not nodes"),
])
def test_a_bad_selection_is_one_line_and_exit_2(tmp_path: Any, capsys: Any, args: list[str], message: str | None) -> None:
    from manetlab.cli import main
    out = _cbr_result(tmp_path, False)
    kind = "drops" if args == ["--nodes", "9"] else "throughput"
    assert main(["plot", str(out), "--kind", kind, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: plot --")
    if message:
        assert message in err
    else:
        assert "no node 9 (allowed: node indices 0..4)" in err


def _bars(summary: dict[str, Any], kind: str) -> list[float]:
    fig = _fig(summary, kind)
    try:
        return [b.get_height() for b in fig.get_axes()[0].patches]
    finally:
        plots.pyplot().close(fig)


def _lines(summary: dict[str, Any], kind: str) -> dict[str, list[float]]:
    fig = _fig(summary, kind)
    try:
        return {line.get_label(): list(line.get_ydata()) for line in fig.get_axes()[0].lines}
    finally:
        plots.pyplot().close(fig)


def _drop_totals(summary: dict[str, Any]) -> list[float]:
    fig = _fig(summary, "drops")
    try:
        tops = [0.0] * len(summary["nodes"])
        for bar in fig.get_axes()[0].patches:
            i = round(bar.get_x() + bar.get_width() / 2)
            tops[i] = max(tops[i], bar.get_y() + bar.get_height())
        return tops
    finally:
        plots.pyplot().close(fig)


@pytest.fixture(scope="module")
def tcp_traced() -> dict[str, Any]:
    return manetlab.run(manetlab.load_scenario(TCP_CHAIN, {"duration_s": 20.0, "flows[0].tcp.trace": True})).summary


@pytest.fixture(scope="module")
def cbr_untraced() -> dict[str, Any]:
    return manetlab.run(manetlab.load_scenario(CBR_CHAIN)).summary


@pytest.mark.parametrize("run", ["tcp_traced", "cbr_untraced"])
def test_bar_figures_equal_the_tables(request: Any, run: str) -> None:
    s = request.getfixturevalue(run)
    assert _bars(s, "throughput") == [f["throughput_kbps"] for f in s["flows"]]
    assert _bars(s, "delay") == pytest.approx([1e3 * (f["delay_mean_s"] or 0.0) for f in s["flows"]])
    assert _bars(s, "jitter") == pytest.approx([1e3 * (f["jitter_mean_s"] or 0.0) for f in s["flows"]])
    totals = [sum(v for k, v in n["drops"].items() if k not in plots.NOT_PACKET_DROPS) for n in s["nodes"]]
    assert any(totals)
    assert _drop_totals(s) == totals


def test_traced_tcp_lines_equal_the_trace(tcp_traced: dict[str, Any]) -> None:
    f = tcp_traced["flows"][0]
    tr = f["tcp"]["trace"]
    end = tcp_traced["duration_s"]
    cwnd = _lines(tcp_traced, "cwnd")
    assert cwnd[f"ftp ({f['transport']}) cwnd"] == plots.extend_to_end(tr["t_s"], tr["cwnd_segs"], end)[1]
    seq = _lines(tcp_traced, "seq")
    assert seq["ftp ACK received"] == plots.extend_to_end(tr["t_s"], tr["ack_segs"], end)[1]
    ys = next(iter(_lines(tcp_traced, "throughput_time").values()))[:-1]
    assert sum(ys) / len(ys) == pytest.approx(f["throughput_kbps"], rel=0.05)


def test_cbr_series_figures_equal_the_series(tmp_path: Any) -> None:
    s = plots.load_summary(_cbr_result(tmp_path, True))
    delay = _lines(s, "delay")
    for f, ps in zip(s["flows"], s["series"]["flows"]):
        assert delay[f"{f['name']} {f['src']}→{f['dst']}"] == [1e3 * d for d in ps["delay_s"]]
        assert len(ps["delay_s"]) == f["rx_packets"]
        assert sum(ps["delay_s"]) / len(ps["delay_s"]) == pytest.approx(f["delay_mean_s"])
    queue = _lines(s, "queue")
    for q in s["series"]["queues"]:
        if any(q["len_pkts"]):
            assert queue[f"node {q['node']}"] == q["len_pkts"]
            assert max(q["len_pkts"]) == s["nodes"][q["node"]]["ifq_max_pkts"]
