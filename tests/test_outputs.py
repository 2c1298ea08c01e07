"""Statistics helpers, time series, figures and the HTML report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import manetlab
from manetlab.plots import KINDS, PlotError, plot
from manetlab.report import report

ROOT = Path(__file__).resolve().parent.parent


def test_jain_index_known_values():
    assert manetlab.jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    assert manetlab.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    # (1+2+3)² / (3·(1+4+9)) = 36/42
    assert manetlab.jain_index([1, 2, 3]) == pytest.approx(36 / 42)
    with pytest.raises(ValueError):
        manetlab.jain_index([])
    with pytest.raises(ValueError):
        manetlab.jain_index([1, -1])


def test_improvement_as_paper_000_defines_it():
    # Highest ACK 1170 (ABRA) vs 1000 (NewReno) in one scenario: +17 %.
    assert manetlab.improvement_pct(1170, 1000) == pytest.approx(17.0)
    assert manetlab.paired_improvements([110, 90], [100, 100]) == pytest.approx([10.0, -10.0])
    with pytest.raises(ValueError):
        manetlab.improvement_pct(1, 0)
    with pytest.raises(ValueError):
        manetlab.paired_improvements([1], [1, 2])


@pytest.fixture(scope="module")
def tcp_result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tcp")
    r = manetlab.run(
        ROOT / "examples" / "tcp_chain_80211.toml",
        overrides={"duration_s": 20, "flows[0].tcp.trace": True, "outputs.series": True},
    )
    r.write(out)
    return out


def test_timeseries_table_and_files(tcp_result: Path):
    ts = pd.read_parquet(tcp_result / "timeseries.parquet")
    assert {"flow", "t_s", "cwnd_segs", "ssthresh_segs", "rto_s", "srtt_s", "backoff", "seq_segs", "ack_segs"} <= set(ts.columns)
    assert len(ts) > 10
    assert ts["t_s"].is_monotonic_increasing
    assert (ts["ack_segs"] <= ts["seq_segs"]).all()
    csv = pd.read_csv(tcp_result / "timeseries.csv")
    assert len(csv) == len(ts)
    assert (tcp_result / "scenario.json").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_every_plot_kind_renders_png_and_svg(tcp_result: Path, tmp_path: Path, kind: str):
    png, svg = plot(tcp_result, kind, tmp_path)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 5_000
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text
    if kind in ("cwnd", "seq"):
        assert "time (s)" in text, "labelled axis with its unit"


def test_plot_without_trace_is_a_clear_error(tmp_path: Path):
    manetlab.run(ROOT / "examples" / "cbr_chain.toml").write(tmp_path)
    with pytest.raises(PlotError, match="no traced TCP flow"):
        plot(tmp_path, "cwnd")
    proc = subprocess.run([sys.executable, "-m", "manetlab", "plot", str(tmp_path), "--kind", "seq"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no traced TCP flow") and proc.stderr.count("\n") == 1


def test_report_is_self_contained(tcp_result: Path):
    page = report(tcp_result).read_text(encoding="utf-8")
    assert page.count('<img src="data:image/svg+xml;base64,') == len(KINDS), "every kind applies: traced TCP and series"
    assert "throughput_kbps" in page and "tcp-chain-80211" in page
    assert page.count('src="') == page.count('src="data:'), "no external files"


def test_cli_plot_and_report(tcp_result: Path, tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "manetlab", "plot", str(tcp_result), "--kind", "cwnd", "--out", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "cwnd.png").stat().st_size > 0
    proc = subprocess.run([sys.executable, "-m", "manetlab", "report", str(tcp_result), "--out", str(tmp_path / "r.html")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.html").stat().st_size > 10_000


def test_plot_of_missing_directory(tmp_path: Path):
    with pytest.raises(PlotError, match="no summary.json"):
        plot(tmp_path / "nope", "throughput")


def test_compare_runs_variants_on_the_same_seed(tmp_path: Path):
    from manetlab.compare import compare

    c = compare(ROOT / "examples" / "tcp_chain_80211.toml", 0, ["newreno", "abra"], overrides={"duration_s": 20})
    a, b = (r.summary for r in c.results)
    assert a["seed"] == b["seed"] and a["flows"][0]["transport"] == "newreno" and b["flows"][0]["transport"] == "abra"
    text = c.table()
    assert "abra vs newreno" in text and "highest ACK" in text
    expected = manetlab.improvement_pct(c.value(1, "throughput_kbps"), c.value(0, "throughput_kbps"))
    assert c.improvement(1, "throughput_kbps") == pytest.approx(expected)
    page = c.write(tmp_path).read_text()
    assert page.count('<img src="data:image/svg+xml;base64,') == 3  # sequence, window, throughput over time
    assert (tmp_path / "abra" / "timeseries.parquet").exists() and (tmp_path / "compare_seq.png").stat().st_size > 5000
    assert json.loads((tmp_path / "comparison.json").read_text())["runs"] == {"newreno": "newreno", "abra": "abra"}
    # `make run` twice: a comparison replaces the one it wrote before (its
    # .manetlab marker), also one written before the marker existed (exactly the
    # files of a comparison).
    assert json.loads((tmp_path / ".manetlab").read_text())["kind"] == "comparison"
    c.write(tmp_path)
    for marker in (tmp_path / ".manetlab", tmp_path / "abra" / ".manetlab", tmp_path / "newreno" / ".manetlab"):
        marker.unlink()
    c.write(tmp_path)
    assert (tmp_path / ".manetlab").exists()
    # A folder that only looks like one (no marker, a run folder without its summary) is kept.
    (tmp_path / ".manetlab").unlink()
    (tmp_path / "abra" / "summary.json").unlink()
    with pytest.raises(OSError, match="not a manetlab result folder"):
        c.write(tmp_path)


def test_mixed_tcp_and_cbr_flows_table_has_tcp_columns():
    r = manetlab.run(ROOT / "examples" / "default_study.toml", overrides={"duration_s": 5})
    f = r.flows
    assert "tcp_highest_ack_segs" in f.columns and "tcp_trace" not in f.columns
    assert f.loc[0, "kind"] == "ftp" and f["tcp_highest_ack_segs"].isna().sum() == len(f) - 1


def test_packet_and_queue_series_tables(tmp_path: Path):
    import pandas as pd

    r = manetlab.run(ROOT / "examples" / "default_study.toml", overrides={"duration_s": 20, "outputs.series": True})
    r.write(tmp_path)
    ps = pd.read_parquet(tmp_path / "packet_series.parquet")
    assert set(ps["flow"]) <= set(range(1, 11)), "CBR flows (TCP data carries no creation time)"
    assert list(ps.columns) == ["flow", "name", "t_s", "delay_s", "jitter_s"]
    assert ps["jitter_s"].isna().sum() == ps["flow"].nunique(), "a flow's first packet has no jitter"
    assert ps.groupby("flow")["t_s"].apply(lambda t: t.is_monotonic_increasing).all()
    assert len(ps) == r.flows.loc[r.flows["kind"] == "cbr", "rx_packets"].sum()
    qs = pd.read_csv(tmp_path / "queue_series.csv")
    assert set(qs.columns) == {"node", "t_s", "len_pkts"} and qs["len_pkts"].max() > 0
