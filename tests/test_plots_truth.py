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
