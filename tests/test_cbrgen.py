"""`[[traffic.cbrgen]]` and ns-2 traffic files' `$node_(i) shutdown|startup` lines
through the Python API and the CLI (issue 37)."""

from __future__ import annotations

import json
from pathlib import Path

import manetlab
from _util import ROOT, run_cli

SCENE = ROOT / "crates" / "manetlab-core" / "tests" / "fixtures" / "ns2_scene"

GEN = """name = "cbrgen"
seed = 4
duration_s = 40
[nodes]
count = 10
placement = { kind = "grid", columns = 5, spacing_m = 150 }
[radio]
[routing]
protocol = "aodv"
[[flows]]
kind = "ftp"
src = 0
dst = 9
[traffic]
[[traffic.cbrgen]]
connections = 4
rate_pkts_per_s = 4
start_s = [0, 20]
name = "cross"
"""


def _pairs(s: manetlab.Scenario) -> list[tuple[str, int, int, float]]:
    return [(f["name"], f["src"], f["dst"], f["start_s"]) for f in s.normalized["flows"][1:]]


def test_generator_draws_per_seed_and_cells_of_a_seed_share_it(tmp_path: Path) -> None:
    path = tmp_path / "gen.toml"
    path.write_text(GEN)
    s = manetlab.load_scenario(path)
    assert [p[0] for p in _pairs(s)] == [f"cross.cbr_({k})" for k in range(4)]
    assert s.normalized["traffic"]["flows_generated"] == 4
    for _, a, b, t in _pairs(s):
        assert a != b and 0 <= t < 20
    # Another cell of the same seed (another routing protocol) draws the same flows; another seed others.
    assert _pairs(s.with_overrides({"routing.protocol": "dsr"})) == _pairs(s)
    assert _pairs(s.with_overrides({"seed": 5})) != _pairs(s)
    # The normalised scenario, seed changed, draws that seed's flows (as a study's seed override does).
    again = manetlab.Scenario(s.normalized).with_overrides({"seed": 5})
    assert _pairs(again) == _pairs(s.with_overrides({"seed": 5}))
    r = manetlab.run(s)
    names = [f["name"] for f in r.summary["flows"]]
    assert names == ["flow0", *(f"cross.cbr_({k})" for k in range(4))]
    assert all(f["tx_packets"] > 0 for f in r.summary["flows"][1:])


def test_cli_lists_generated_flows_and_rejects_bad_keys_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "gen.toml"
    path.write_text(GEN)
    p = run_cli("validate", path)
    assert p.returncode == 0 and "5 flows" in p.stdout, (p.stdout, p.stderr)
    out = tmp_path / "out"
    p = run_cli("run", path, "--out", out)
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert [f["name"] for f in summary["flows"]][1:] == [f"cross.cbr_({k})" for k in range(4)]
    p = run_cli("validate", path, "--set", "traffic.cbrgen[0].transport=udp")
    assert p.returncode == 2
    assert p.stderr == 'error: traffic.cbrgen[0].transport: "udp" is not allowed (allowed: "cbr" or "tcp")\n', p.stderr
    p = run_cli("validate", path, "--set", "traffic.cbrgen[0].start_s=[0, 180]")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert p.stderr.startswith("error: traffic.cbrgen[0].start_s: [0, 180] is out of range (allowed: [min, max] with 0 <= min <= max <= duration_s = 40"), p.stderr


def test_ns2_cbr_10_1_10_20_with_shutdown_lines_runs_unchanged(tmp_path: Path) -> None:
    s = manetlab.load_scenario(SCENE / "ns2_shutdown.toml")
    assert s.normalized["traffic"] == {"ns2_file": "cbr-10-1-10-20", "flows_from_file": 10, "node_switches_from_file": 26}
    switches = s.normalized["faults"]["node_switches"]
    assert {"node": 0, "off_s": 90.0, "on_s": 450.0} in switches and len(switches) == 26
    r = manetlab.run(s)
    assert [f["name"] for f in r.summary["flows"]] == [f"cbr_({k})" for k in range(10)]
    for f in r.summary["flows"]:
        assert f["delivered_packets"] >= 0.99 * f["tx_packets"] > 1700, f
    p = run_cli("validate", SCENE / "ns2_shutdown.toml")
    assert p.returncode == 0 and "10 flows" in p.stdout, (p.stdout, p.stderr)


def test_export_ns2_writes_the_drawn_flows(tmp_path: Path) -> None:
    path = tmp_path / "gen.toml"
    path.write_text(GEN)
    out = tmp_path / "exp"
    p = run_cli("export-ns2", path, "--out", out)
    assert p.returncode == 0, p.stderr
    s = manetlab.load_scenario(path)
    tcl = (out / "run.tcl").read_text()
    assert tcl.count("new Application/Traffic/CBR") == 4
    for _, a, b, _t in _pairs(s):
        assert f"attach-agent $node_({a})" in tcl and f"attach-agent $node_({b})" in tcl
