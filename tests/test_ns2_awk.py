"""Three classic, widely circulated ns-2 awk scripts on our traces.

The scripts (tests/fixtures/awk/, each with its origin in its header): `pdf.awk`
(packet delivery fraction, old format), `avg_throughput.awk` ("Average
Throughput[kbps]", old format) and `parameters.awk` (sent/received/routing/dropped
packets, PDF, NRL, end-to-end delay; new format). Each must give on our trace
exactly what our summary says (to the digits it prints), and on a trace of real
ns-2.35 for the same scenario (tests/fixtures/ns2/chain3_trace/) what it gives on
ours within the two simulators' differences.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import manetlab

pytestmark = pytest.mark.skipif(shutil.which("awk") is None, reason="awk is not installed")

FIX = Path(__file__).resolve().parent / "fixtures"
AWK = FIX / "awk"

# A lossy CBR-only multihop run over AODV: two opposite CBR flows on a 4-hop chain,
# fast enough for queue drops and collisions, so every count is non-trivial.
SCENARIO = {
    "name": "awk-check",
    "seed": 5,
    "duration_s": 20,
    "nodes": {"count": 5, "placement": {"kind": "chain", "spacing_m": 200}},
    "radio": {},
    "routing": {"protocol": "aodv"},
    "flows": [
        {"kind": "cbr", "src": 0, "dst": 4, "packet_size_bytes": 512, "interval_s": 0.02, "start_s": 1.0, "stop_s": 19.0},
        {"kind": "cbr", "src": 4, "dst": 0, "packet_size_bytes": 512, "interval_s": 0.05, "start_s": 1.5, "stop_s": 19.0},
    ],
}


def awk(script: str, text: str) -> str:
    return subprocess.run(["awk", "-f", str(AWK / script)], input=text, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[manetlab.Result, str]]:
    out = {}
    for fmt in ("old", "new"):
        d = tmp_path_factory.mktemp(f"awk_{fmt}")
        s = dict(SCENARIO, outputs={"trace": fmt, "series": True})
        r = manetlab.run(s, out=d)
        out[fmt] = (r, (d / "trace.tr").read_text())
    return out


def _pdf(out: str) -> dict[str, float]:
    m = re.fullmatch(r"cbr s:(\d+) r:(\d+), r/s Ratio:([\d.]+), f:(\d+) \n", out)
    assert m, out
    return {"s": int(m[1]), "r": int(m[2]), "ratio": float(m[3]), "f": int(m[4])}


def test_pdf_awk_counts_our_sends_and_receives(runs):
    r, text = runs["old"]
    flows = r.summary["flows"]
    got = _pdf(awk("pdf.awk", text))
    tx = sum(f["tx_packets"] for f in flows)
    rx = sum(f["rx_packets"] for f in flows)
    assert sum(f["dup_rx_packets"] for f in flows) == 0  # every `r AGT` line is a first copy
    assert (got["s"], got["r"]) == (tx, rx)
    assert f"{got['ratio']:.4f}" == f"{rx / tx:.4f}"
    assert 0 < rx < tx, "the scenario should lose packets"
    # Its `f` count (RTR forwardings: data packets and AODV's forwarded RREPs) is
    # no metric of ours: a packet a node took to forward may wait for a route and be
    # dropped without an `f` line. It is at most what the nodes took to forward.
    rrep_f = sum(1 for line in text.splitlines() if line.startswith("f ") and " AODV " in line)
    assert 0 < got["f"] - rrep_f <= sum(n["forwarded_packets"] for n in r.summary["nodes"])


def test_avg_throughput_awk_gives_our_received_bytes_over_its_interval(runs):
    r, text = runs["old"]
    flows = r.summary["flows"]
    out = awk("avg_throughput.awk", text)
    m = re.fullmatch(r"Average Throughput\[kbps\] = ([\d.]+)\t\t StartTime=([\d.]+)\tStopTime=([\d.]+)\n", out)
    assert m, out
    # Its interval: first agent send to last agent receive (our per-packet series).
    start = min(f["start_s"] for f in flows)
    series = r.packet_series
    stop = series["t_s"].max()
    rx_bytes = sum(f["rx_bytes"] for f in flows)
    assert len(series) == sum(f["rx_packets"] for f in flows)
    assert m[2] == f"{start:.2f}" and m[3] == f"{stop:.2f}"
    assert m[1] == f"{rx_bytes / (stop - start) * 8 / 1000:.2f}"


def test_parameters_awk_on_the_new_format_gives_our_pdr_delay_overhead_and_drops(runs):
    r, text = runs["new"]
    flows, nodes = r.summary["flows"], r.summary["nodes"]
    got = dict(re.findall(r"^(.*?)\s*=\s*([-\d.]+)$", awk("parameters.awk", text), re.M))
    tx = sum(f["tx_packets"] for f in flows)
    rx = sum(f["rx_packets"] for f in flows)
    assert float(got["send"]) == tx and float(got["recv"]) == rx
    assert got["PDF"] == f"{rx / tx * 100:.2f}"
    # Mean delay over received packets, weighted by each flow's receptions.
    delay = sum(f["delay_mean_s"] * f["rx_packets"] for f in flows) / rx
    assert got["Average e-e delay(ms)"] == f"{delay * 1000:.2f}"
    # Routing load: AODV packets sent or forwarded by routers (ns-2's `s`/`f` RTR lines).
    routing = sum(n["routing_ctrl_originated_pkts"] + n["routing_ctrl_forwarded_pkts"] for n in nodes)
    assert float(got["routingpkts"]) == routing
    assert got["NRL"] == f"{routing / rx:.2f}"
    # Its drops are every `d` line of a CBR packet: every copy dropped (IFQ and RTR
    # drops are always traced, as in ns-2) and no collisions (MAC is not traced here).
    drops = sum(sum(f["drops"].values()) + f["copy_drop_packets"] for f in flows)
    assert int(got["No. of dropped data (packets)"]) == drops > 0


def test_old_and_new_format_describe_the_same_run(runs):
    (r_old, old), (r_new, new) = runs["old"], runs["new"]
    assert r_old.summary["flows"] == r_new.summary["flows"]
    assert len(old.splitlines()) == len(new.splitlines())


def test_scripts_read_ns2s_trace_of_the_chain_as_ours(tmp_path: Path):
    """The same scripts on ns-2.35's trace and on ours of the 3-node chain (TCP + CBR)."""
    chain = FIX / "ns2" / "chain3_trace"
    scenario = tomllib.loads((chain / "scenario.toml").read_text())
    ours, ns2 = {}, {}
    for fmt in ("old", "new"):
        d = tmp_path / fmt
        manetlab.run(dict(scenario, outputs=dict(scenario["outputs"], trace=fmt)), out=d)
        ours[fmt] = (d / "trace.tr").read_text()
        with gzip.open(chain / f"ns2_{fmt}.tr.gz", "rt") as f:
            ns2[fmt] = f.read()
    a, b = _pdf(awk("pdf.awk", ns2["old"])), _pdf(awk("pdf.awk", ours["old"]))
    assert abs(a["ratio"] - b["ratio"]) < 0.05 and abs(a["s"] - b["s"]) <= 0.1 * a["s"]
    ta = float(re.search(r"= ([\d.]+)", awk("avg_throughput.awk", ns2["old"]))[1])
    tb = float(re.search(r"= ([\d.]+)", awk("avg_throughput.awk", ours["old"]))[1])
    assert tb == pytest.approx(ta, rel=0.1)
    pa = dict(re.findall(r"^(.*?)\s*=\s*([-\d.]+)$", awk("parameters.awk", ns2["new"]), re.M))
    pb = dict(re.findall(r"^(.*?)\s*=\s*([-\d.]+)$", awk("parameters.awk", ours["new"]), re.M))
    # CBR: the same packets sent and received, the same AODV exchange, a delay within 20 %.
    for k in ("send", "recv", "routingpkts", "PDF", "NRL"):
        assert pa[k] == pb[k], (k, pa[k], pb[k])
    assert float(pb["Average e-e delay(ms)"]) == pytest.approx(float(pa["Average e-e delay(ms)"]), rel=0.2)


def test_the_ns2_trace_reader_reads_our_trace_as_it_reads_ns2s(runs):
    """manetlab.ns2.trace (crosscheck's reader of ns-2.35 traces) on our traces gives
    our summary's CBR metrics, routing packet count and drops, in both formats."""
    from manetlab.ns2.trace import parse_trace

    for fmt in ("old", "new"):
        r, text = runs[fmt]
        flows = r.summary["flows"]
        keys = ("flow", "name", "kind", "transport", "src", "dst", "start_s", "stop_s")
        meta = {"flows": [{k: f[k] for k in keys} | {"packet_size_bytes": 512} for f in flows]}
        # Each flow's ports, as its first agent send shows them (as ns-2's ports.txt would).
        ports = {}
        for f in flows:
            pat = rf"^s \S+ _{f['src']}_ AGT  --- \d+ cbr \d+ \[[^]]*\] ------- \[{f['src']}:(\d+) {f['dst']}:(\d+) " if fmt == "old" else \
                rf"^s -t \S+ -Hs {f['src']} .* -Nl AGT .* -Is {f['src']}\.(\d+) -Id {f['dst']}\.(\d+) -It cbr "
            m = re.search(pat, text, re.M)
            assert m, (fmt, f["flow"])
            ports[f["flow"]] = (int(m[1]), int(m[2]))
        path = Path(r.output_dir) / "trace.tr"
        m = parse_trace(path, meta, ports).to_dict()
        for got, want in zip(m["flows"], flows):
            for k in ("tx_packets", "rx_packets", "rx_bytes", "pdr", "throughput_kbps"):
                assert got[k] == want[k], (fmt, k)
            # Trace times have 9 decimals.
            assert got["delay_mean_s"] == pytest.approx(want["delay_mean_s"], abs=1e-9)
            assert got["jitter_mean_s"] == pytest.approx(want["jitter_mean_s"], abs=1e-9)
            assert got["drops"] == {k: v for k, v in want["drops"].items() if v}
        nodes = r.summary["nodes"]
        assert m["routing_ctrl_pkts"] == sum(n["routing_ctrl_originated_pkts"] + n["routing_ctrl_forwarded_pkts"] for n in nodes)
        # Every data copy dropped is a D line, by level and reason (drops of routing
        # messages are traced too; our drop counters count data packets).
        data_drops: dict[str, int] = {}
        for line in text.splitlines():
            f = line.split()
            if f[0] == "D" and f[6] == "cbr":
                k = f"{f[3].lower()}.{f[4]}"
            elif f[0] == "d" and f[f.index("-It") + 1] == "cbr":
                k = f"{f[f.index('-Nl') + 1].lower()}.{f[f.index('-Nw') + 1]}"
            else:
                continue
            data_drops[k] = data_drops.get(k, 0) + 1
        node_drops: dict[str, int] = {}
        for n in nodes:
            for k, v in n["drops"].items():
                node_drops[k] = node_drops.get(k, 0) + v
        assert data_drops == {k: v for k, v in node_drops.items() if v}
        assert data_drops
