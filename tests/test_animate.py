"""`manetlab animate`: the data embedded in the page, checked against the core's own
records (pure Python, always runs). The browser half is tests/test_animate_browser.py.

The scenario is built so its events are known in advance: node 2 leaves node 1's
250 m range at t = 5.0 s (500 → 900 m at 50 m/s from t = 4 s), so the CBR flow 0→1→2
loses its second hop and node 1 drops what the MAC gave up on (ns-2 `CBK`) just
after 5 s; node 3 is switched off from 7.0 to 8.5 s (drops `OFF`) and the link
0–1 fails from 8.8 to 9.2 s. The trace is in
ns-2's new format, whose every line carries the node's position (`-Nx -Ny`) as the
core computed it: an independent record to check the movement parsing against.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import manetlab
from manetlab.animate import animate
from manetlab.animate.data import FLOW_CTRL, TX_KINDS, build, decode_drops
from manetlab.animate.movement import position_at, read_movement
from manetlab.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent

SCENARIO = {
    "name": "animate-check",
    "seed": 2,
    "duration_s": 10,
    "area": {"width_m": 1000, "height_m": 600},
    "nodes": {"count": 4, "placement": {"kind": "explicit", "positions_m": [[100, 100], [300, 100], [500, 100], [300, 300]]}},
    "radio": {},
    "routing": {"protocol": "aodv"},
    "mobility": {
        "model": "scripted",
        "nodes": [
            {"node": 2, "moves": [{"time_s": 4, "dest_m": [900, 100], "speed_mps": 50}]},
            {"node": 3, "moves": [{"time_s": 1, "dest_m": [300, 500], "speed_mps": 10}, {"time_s": 6, "dest_m": [100, 300], "speed_mps": 20}]},
        ],
    },
    "faults": {"node_switches": [{"node": 3, "off_s": 7.0, "on_s": 8.5}], "link_outages": [{"a": 0, "b": 1, "down_s": 8.8, "up_s": 9.2}]},
    "flows": [
        {"kind": "cbr", "src": 0, "dst": 2, "packet_size_bytes": 512, "rate_kbps": 16.384, "start_s": 0.5, "stop_s": 9.5},
        {"kind": "ftp", "src": 3, "dst": 0, "transport": "newreno", "tcp": {"trace": True}},
    ],
    "outputs": {"trace": "new", "trace_levels": ["agt", "rtr", "ifq", "mac"], "movement": True, "series": True},
}
#: When node 2 leaves node 1's reception range (250 m): x = 550 m at 4 + 50/50 s.
LINK_BREAK_S = 5.0

_NEW = re.compile(r"^(\S) -t (\S+) -Hs \S+ -Hd \S+ -Ni (\d+) -Nx (\S+) -Ny (\S+) .*?-Nl (\S+) -Nw (\S+)")


def trace_lines(path: Path) -> list[tuple[str, float, int, float, float, str, str]]:
    """(event, t, node, x, y, level, reason) of every line, read independently of manetlab.animate."""
    out = []
    for line in path.read_text().splitlines():
        m = _NEW.match(line)
        assert m, line
        ev, t, node, x, y, lvl, why = m.groups()
        out.append((ev, float(t), int(node), float(x), float(y), lvl, why))
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("animate") / "run"
    manetlab.run(SCENARIO, out=out)
    return out


@pytest.fixture(scope="module")
def data(run_dir: Path):
    return build(run_dir)


def doc_position(doc: dict, node: int, t: float) -> tuple[float, float]:
    """Interpolate the page's embedded trajectory the way page.js does."""
    a = doc["traj"][node]
    ts, xs, ys = a[0::3], a[1::3], a[2::3]
    k = max(i for i in range(len(ts)) if ts[i] <= t) if t >= ts[0] else 0
    if k >= len(ts) - 1:
        return xs[-1], ys[-1]
    f = (t - ts[k]) / (ts[k + 1] - ts[k])
    return xs[k] + (xs[k + 1] - xs[k]) * f, ys[k] + (ys[k + 1] - ys[k]) * f


def test_positions_match_the_cores_at_every_trace_line(run_dir, data):
    lines = trace_lines(run_dir / "trace.tr")
    assert len(lines) > 1000
    # Every line's position (printed to 0.01 m) against the movement file, and
    # against what the page interpolates from its embedded (mm-rounded) waypoints.
    for ev, t, node, x, y, _, _ in lines:
        px, py = data.position_at(node, t)
        assert abs(px - x) <= 0.006 and abs(py - y) <= 0.006, (ev, t, node, (x, y), (px, py))
    for ev, t, node, x, y, _, _ in lines[::50]:
        qx, qy = doc_position(data.doc, node, t)
        assert abs(qx - x) <= 0.01 and abs(qy - y) <= 0.01, (t, node, (x, y), (qx, qy))


def test_positions_follow_setdest_semantics():
    # Node 3: from (300, 300) towards (300, 500) at 10 m/s from t = 1; replaced at
    # t = 6 (at (300, 350)) by a move to (100, 300) at 20 m/s: |(-200, -50)| = 206.16 m.
    text = '$node_(0) set X_ 300\n$node_(0) set Y_ 300\n$ns_ at 1 "$node_(0) setdest 300 500 10"\n$ns_ at 6 "$node_(0) setdest 100 300 20"\n'
    (w,) = read_movement(text)
    assert position_at(w, 0.5) == (300, 300)
    assert position_at(w, 3.0) == pytest.approx((300, 320))
    assert position_at(w, 6.0) == pytest.approx((300, 350))
    d = (200**2 + 50**2) ** 0.5
    assert position_at(w, 6 + d / 20 / 2) == pytest.approx((200, 325))
    assert position_at(w, 100) == pytest.approx((100, 300))


def test_known_drop_is_at_the_right_node_and_time(run_dir, data):
    drops = data.drops
    dec = decode_drops(data.doc)
    assert [d[1:] for d in dec] == [d[1:] for d in drops]
    assert [d[0] for d in dec] == pytest.approx([d[0] for d in drops], abs=6e-7)
    cbr = [d for d in drops if d[4] == 0]
    assert cbr, "flow 0 has drops"
    t, node, reason, level, flow, ptype = cbr[0]
    # Node 1 loses its next hop (node 2) when node 2 leaves its range at 5.0 s.
    assert (node, reason, level, ptype) == (1, "CBK", "RTR", "cbr")
    assert LINK_BREAK_S < t < LINK_BREAK_S + 0.2
    # The same drop, at the same time, in the trace itself.
    first = next(ln for ln in trace_lines(run_dir / "trace.tr") if ln[0] == "d" and ln[6] == "CBK")
    assert (first[1], first[2]) == (t, node)
    # And a link break 1 -> 2 at that moment.
    assert [round(t, 6), 1, "break", 2] in data.doc["route_events"]
    # The switched-off node drops what it holds, with our OFF code, at 7.0 s.
    assert [7.0, 3, "OFF", "RTR"] in [d[:4] for d in drops]



def test_drop_counts_agree_with_the_summary(run_dir, data):
    # One packet, one copy here (no duplicates): the trace's drops are the summary's.
    summary = json.loads((run_dir / "summary.json").read_text())
    want = {(n["node"], k.split(".")[1]): v for n in summary["nodes"] for k, v in n["drops"].items() if v}
    got: dict[tuple[int, str], int] = {}
    gave_up: dict[int, int] = {}
    for d in data.drops:
        if d[2] == "COL":  # collisions are lost frames, not packet drops (metrics.md)
            continue
        if (d[2], d[3]) == ("RET", "MAC"):
            # Frames the MAC gave up on, traced as ns-2 does although AODV takes the
            # packet back (its end, if any, is another line): one line per data
            # frame, and one for its RTS (no packet type in the new format).
            if d[5] not in ("RTS", "MAC"):
                gave_up[d[1]] = gave_up.get(d[1], 0) + 1
            continue
        got[(d[1], d[2])] = got.get((d[1], d[2]), 0) + 1
    assert got == want
    assert gave_up == {n["node"]: n["mac_frames_failed"] for n in summary["nodes"] if n["mac_frames_failed"]}
    assert gave_up, "node 1's MAC gives up when node 2 leaves"


def test_flows_received_and_cwnd_match_the_summary(run_dir, data):
    summary = json.loads((run_dir / "summary.json").read_text())
    for f, s in zip(data.doc["flows"], summary["flows"]):
        assert f["rx_total"] == s["rx_packets"]
        assert f["rx_n"][-1] == f["rx_total"]
    tcp = summary["flows"][1]["tcp"]["trace"]
    assert data.doc["flows"][1]["cwnd_t"] == [round(t, 6) for t in tcp["t_s"]]
    assert data.doc["flows"][0]["cwnd"] == []


def test_transmissions_are_mac_frames_with_their_flow(data):
    tx = data.doc["tx"]
    assert data.stats["transmission_source"] == "MAC"
    kinds = {TX_KINDS[k] for k in tx["k"]}
    assert {"DATA", "RTS", "CTS", "ACK", "CTRL"} <= kinds
    # Flow 0's hop 0 -> 1 before the break: RTS, CTS, DATA and ACK all carry flow 0.
    hop = {(TX_KINDS[k], a, b) for k, a, b, f in zip(tx["k"], tx["a"], tx["b"], tx["f"]) if f == 0}
    assert {("RTS", 0, 1), ("CTS", 1, 0), ("DATA", 0, 1), ("ACK", 1, 0), ("DATA", 1, 2)} <= hop
    # Routing control is its own pseudo-flow.
    assert all(f == FLOW_CTRL for k, f in zip(tx["k"], tx["f"]) if TX_KINDS[k] == "CTRL")
    # Times are delta-coded microseconds, non-decreasing.
    assert min(tx["dt_us"]) >= 0 and len(tx["dt_us"]) == len(tx["a"]) == data.stats["transmissions"]


def test_faults_routes_and_queues(data):
    doc = data.doc
    assert doc["faults"] == [[7.0, "node_off", [3]], [8.5, "node_on", [3]], [8.8, "link_down", [0, 1]], [9.2, "link_up", [0, 1]]]
    assert {e[2] for e in doc["route_events"]} >= {"RREQ", "break"}
    # Node 0's route to node 2 goes via node 1.
    assert any(r[1:] == [0, 2, 1] for r in doc["routes"])
    assert len(doc["queues"]) == 4 and all(len(q["t"]) == len(q["len"]) for q in doc["queues"])
    assert doc["range_m"] == pytest.approx(250, abs=0.1) and doc["cs_range_m"] == pytest.approx(550, abs=0.5)


def test_window_and_thinning(run_dir):
    w = build(run_dir, 4.5, 6.0, max_transmissions=100)
    d = w.doc
    assert (d["from_s"], d["to_s"]) == (4.5, 6.0)
    assert all(4.5 <= x[0] <= 6.0 for x in w.drops)
    assert d["tx"]["dt_us"][0] >= 4.5e6
    assert w.stats["transmissions_kept"] == 100 < w.stats["transmissions"]
    # Each trajectory covers the window (a point at or before 4.5 s, one at or after 6 s).
    for tr in d["traj"]:
        assert tr[0] <= 4.5 and (tr[-3] >= 6.0 or len(tr) == 3 or tr[-3] <= 4.5)
    assert doc_position(d, 2, 5.5) == pytest.approx((575.0, 100.0))


def test_collisions_are_thinned_packet_drops_never(tmp_path):
    # The default study's first 20 s: 20 nodes, 11 flows, plenty of collisions.
    s = load_scenario(ROOT / "examples" / "default_study.toml", {"duration_s": 20, "outputs.trace": "old", "outputs.trace_levels": ["agt", "rtr", "mac"], "outputs.movement": True})
    manetlab.run(s, out=tmp_path / "lossy")
    full = build(tmp_path / "lossy")
    thin = build(tmp_path / "lossy", max_collisions=10)
    assert full.stats["collisions"] > 10 and thin.stats["collisions_kept"] == 10
    col = [d for d in decode_drops(thin.doc) if d[2] == "COL"]
    assert len(col) == 10
    assert [d for d in decode_drops(thin.doc) if d[2] != "COL"] == [d for d in decode_drops(full.doc) if d[2] != "COL"]
    assert any(d[2] != "COL" for d in full.drops)


def test_page_is_self_contained(run_dir, tmp_path):
    a = animate(run_dir, tmp_path / "a.html")
    page = a.path.read_text()
    assert a.bytes == a.path.stat().st_size
    assert f"this page {a.bytes / 1e6:.1f} MB" in page and "\x00" not in page
    # Nothing loaded from anywhere: no src/href attributes, no @import/url(), and a CSP that forbids it.
    assert not re.search(r"""\s(src|href)\s*=|@import|url\(|<link\b""", page)
    assert "default-src 'none'" in page
    embedded = re.search(r'<script type="application/json" id="manetlab-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(embedded) == json.loads(json.dumps(a.data.doc))
    assert "window.manetlab" in page


def test_cli_animate_and_errors(run_dir, tmp_path):
    py = [sys.executable, "-m", "manetlab"]
    p = subprocess.run([*py, "animate", str(run_dir), "--out", str(tmp_path / "w.html"), "--from", "2", "--to", "6"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "MB" in p.stdout and "2–6 s" in p.stdout and (tmp_path / "w.html").is_file()
    bad = subprocess.run([*py, "animate", str(run_dir), "--from", "6", "--to", "2"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --from/--to:"), bad.stderr
    late = subprocess.run([*py, "animate", str(run_dir), "--from", "11"], capture_output=True, text=True)
    assert late.returncode == 2 and "from < 10" in late.stderr, late.stderr
    none = subprocess.run([*py, "animate", str(tmp_path)], capture_output=True, text=True)
    assert none.returncode == 2 and "no summary.json" in none.stderr
    # A comparison folder (`make run`'s): the message names its runs.
    shutil.copytree(run_dir, tmp_path / "cmp" / "newreno")
    cmp_ = subprocess.run([*py, "animate", str(tmp_path / "cmp")], capture_output=True, text=True)
    assert cmp_.returncode == 2 and f"animate one of its runs: {tmp_path / 'cmp' / 'newreno'}" in cmp_.stderr, cmp_.stderr


def test_folder_without_traces_is_rerun_identically(tmp_path):
    # A result written without outputs (like `make run`'s): the scenario is re-run with them.
    plain = {k: v for k, v in SCENARIO.items() if k != "outputs"}
    manetlab.run(plain, out=tmp_path / "plain")
    assert not (tmp_path / "plain" / "trace.tr").exists()
    a = animate(tmp_path / "plain")
    assert a.rerun and a.path == tmp_path / "plain" / "animate.html"
    traced = build(_traced(tmp_path))
    assert a.data.doc["drops"] == traced.doc["drops"]
    assert a.data.doc["traj"] == traced.doc["traj"]


def _traced(tmp_path: Path) -> Path:
    out = tmp_path / "traced"
    manetlab.run(dict(SCENARIO, outputs={"trace": "old", "trace_levels": ["agt", "rtr", "ifq", "mac"], "movement": True, "series": True}), out=out)
    return out


def test_run_animate_and_report_link(tmp_path):
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({k: v for k, v in SCENARIO.items() if k != "outputs"}))
    out = tmp_path / "r"
    p = subprocess.run([sys.executable, "-m", "manetlab", "run", str(scen), "--out", str(out), "--animate"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (out / "animate.html").is_file() and (out / "trace.tr").is_file() and (out / "movement.tcl").is_file()
    assert f"wrote {out / 'animate.html'}" in p.stdout
    from manetlab.report import report

    page = report(out).read_text()
    assert '<a href="animate.html">animation of this run</a>' in page


def test_wired_runs(tmp_path):
    # examples/cbr_chain.toml: wired (no MAC level), nodes 200 m apart on a line.
    s = load_scenario(ROOT / "examples" / "cbr_chain.toml", {"outputs.trace": "old", "outputs.movement": True})
    manetlab.run(s, out=tmp_path / "chain")
    a = animate(tmp_path / "chain")
    doc = a.data.doc
    assert doc["layout"] == "positions" and doc["range_m"] is None
    assert doc["area"] == [600.0, 150.0]  # the chain's extent, drawn at least a quarter as high
    assert a.data.stats["transmission_source"] == "RTR" and a.data.stats["transmissions"] > 0
    # Hops go to the next node of the chain.
    hops = set(zip(doc["tx"]["a"], doc["tx"]["b"]))
    assert hops <= {(i, i + 1) for i in range(3)} | {(i + 1, i) for i in range(3)} and (1, 2) in hops
    # Every node at (0, 0) (no placement): drawn on a circle instead.
    d = {"name": "pile", "duration_s": 2, "nodes": {"count": 3}, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}, {"a": 1, "b": 2, "bandwidth_mbps": 1, "delay_ms": 1}],
         "flows": [{"kind": "cbr", "src": 0, "dst": 2, "rate_kbps": 100}], "outputs": {"trace": "old", "movement": True}}
    manetlab.run(d, out=tmp_path / "pile")
    b = animate(tmp_path / "pile")
    assert b.data.doc["layout"] == "circle" and len({(tr[1], tr[2]) for tr in b.data.doc["traj"]}) == 3
    assert "drawn on a circle" in b.path.read_text()
