"""Bar figures with many bars keep readable labels, and every figure kind on a
1-node scenario draws or says why (issue 35): read back from matplotlib's artists."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

import manetlab
from manetlab import plots
from manetlab.report import report
from _util import run_cli


def _fig(summary: dict[str, Any], kind: str) -> Any:
    """The figure as `plot` lays it out (7 × 4.2 in, constrained layout), drawn."""
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    try:
        plots._DRAW[kind](ax, summary)
        fig.canvas.draw()
    except BaseException:
        plt.close(fig)
        raise
    return fig


def _labels_fit(fig: Any) -> list[str]:
    """The x tick labels shown; asserts none overlaps another or leaves the figure."""
    ax = fig.get_axes()[0]
    renderer = fig.canvas.get_renderer()
    shown = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text()]
    boxes = sorted(((b.x0, b.x1, b.y0, b.y1), text) for b, text in ((t.get_window_extent(renderer), t.get_text()) for t in shown))
    width, height = fig.bbox.width, fig.bbox.height
    for (x0, x1, y0, y1), text in boxes:
        assert x0 >= -0.5 and x1 <= width + 0.5 and y0 >= -0.5 and y1 <= height + 0.5, f"label {text!r} leaves the figure"
    for ((_, a1, _, _), ta), ((b0, _, _, _), tb) in itertools.pairwise(boxes):
        assert a1 <= b0 + 0.5, f"labels {ta!r} and {tb!r} overlap"
    assert ax.get_position().height >= 0.4, "the labels squeeze the plot"
    return [text for _, text in boxes]


@pytest.fixture(scope="module")
def many_flows() -> dict[str, Any]:
    """50 CBR flows over one wired link, long names (two of them equal)."""
    flows = [{"name": f"constant bit rate flow number {i}", "kind": "cbr", "src": 0, "dst": 1, "rate_kbps": 8.0 + i} for i in range(50)]
    flows[7]["name"] = flows[8]["name"] = "same name"
    data = {"duration_s": 2.0, "nodes": {"count": 2}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 10, "delay_ms": 1}], "flows": flows}
    return manetlab.run(manetlab.Scenario(data)).summary


@pytest.mark.parametrize("kind", ["throughput", "delay", "jitter"])
def test_many_flow_bars_have_labels_that_fit(many_flows: dict[str, Any], kind: str) -> None:
    fig = _fig(many_flows, kind)
    try:
        labels = _labels_fit(fig)
        assert 10 <= len(labels) <= plots.MAX_BAR_LABELS
        ax = fig.get_axes()[0]
        heights = [b.get_height() for b in ax.patches]
        key = {"throughput": "throughput_kbps", "delay": "delay_mean_s", "jitter": "jitter_mean_s"}[kind]
        scale = 1.0 if kind == "throughput" else 1e3
        # One bar per flow, in flow order: the two flows named alike are two bars.
        assert heights == pytest.approx([scale * (f[key] or 0.0) for f in many_flows["flows"]])
        assert labels[0] == "constant bit ra… 0→1"
    finally:
        plots.pyplot().close(fig)


def test_many_cut_delay_whiskers_get_one_note(many_flows: dict[str, Any]) -> None:
    fig = _fig(many_flows, "delay")
    try:
        ax = fig.get_axes()[0]
        top = ax.get_ylim()[1]
        maxima = [1e3 * (f["delay_max_s"] or 0.0) for f in many_flows["flows"]]
        cut = [m for m in maxima if m > top]
        assert len(cut) > plots.MAX_WHISKER_NOTES
        highest = max(range(len(maxima)), key=lambda i: maxima[i])
        assert [t.get_text() for t in ax.texts] == [
            f"{len(cut)} whiskers cut at {top:.0f} ms; highest max {maxima[highest]:.0f} ms ({many_flows['flows'][highest]['name']})"]
    finally:
        plots.pyplot().close(fig)


def test_few_flow_bars_keep_their_full_labels(many_flows: dict[str, Any]) -> None:
    few = {**many_flows, "flows": many_flows["flows"][6:9]}
    fig = _fig(few, "throughput")
    try:
        labels = _labels_fit(fig)
        assert labels == ["constant bit rate\nflow number 6\n0→1", "same name\n0→1", "same name\n0→1"]
        assert [b.get_height() for b in fig.get_axes()[0].patches] == [f["throughput_kbps"] for f in few["flows"]]
    finally:
        plots.pyplot().close(fig)


def test_drops_of_many_nodes_are_labelled_one_in_k() -> None:
    summary = manetlab.run(manetlab.Scenario({"duration_s": 0.1, "nodes": {"count": 200}})).summary
    fig = _fig(summary, "drops")
    try:
        labels = _labels_fit(fig)
        assert labels[:3] == ["0", "5", "10"] and len(labels) == plots.MAX_BAR_LABELS
        assert fig.get_axes()[0].get_xlabel() == "node (1 in 5 of 200 labelled)"
    finally:
        plots.pyplot().close(fig)


# --- one node: no flow can exist (a flow needs two) ------------------------------------


@pytest.fixture(scope="module")
def one_node(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one") / "run"
    manetlab.run({"duration_s": 2.0, "nodes": {"count": 1}, "radio": {}, "outputs": {"series": True, "trace": "old"}}, out=out)
    return out


WHY = {
    "cwnd": "no traced TCP flow in this result",
    "seq": "no traced TCP flow in this result",
    "throughput": "no flows in this result",
    "throughput_time": "no flow with a time series in this result",
    "delay": "no flows in this result",
    "jitter": "no flows in this result",
    "queue": "no queue series in this result",
}


@pytest.mark.parametrize("kind", plots.KINDS)
def test_every_kind_on_one_node_draws_or_says_why(one_node: Path, kind: str) -> None:
    summary = plots.load_summary(one_node)
    if kind in WHY:
        with pytest.raises(plots.PlotError, match=WHY[kind]):
            _fig(summary, kind)
        return
    fig = _fig(summary, kind)  # drops: node 0, nothing dropped
    try:
        assert _labels_fit(fig) == ["0"]
        assert [b.get_height() for b in fig.get_axes()[0].patches] == [0]
        assert fig.get_axes()[0].get_legend() is None
        assert [t.get_text() for t in fig.get_axes()[0].texts] == ["no packet dropped"]
    finally:
        plots.pyplot().close(fig)


def test_one_node_through_the_cli_and_the_report(one_node: Path) -> None:
    for kind in plots.KINDS:
        r = run_cli("plot", one_node, "--kind", kind)
        if kind in WHY:
            assert r.returncode == 2 and r.stderr.count("\n") == 1 and WHY[kind] in r.stderr
        else:
            assert r.returncode == 0, r.stderr
    page = report(one_node).read_text(encoding="utf-8")
    assert page.count("<figure>") == 1 and "<figcaption>drops</figcaption>" in page
