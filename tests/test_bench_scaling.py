"""benchmarks/scaling.py: its grid scenarios are valid and the script prints the
scaling table (tiny sizes, short runs; no timing is checked)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import manetlab

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "scaling.py"
# `make test`'s `cargo test` builds the example (debug profile); a release
# build, if there is one, is faster.
BINARY = next((b for b in (ROOT / "target" / p / "examples" / "run_scenario" for p in ("release", "debug")) if b.exists()), ROOT / "target" / "debug" / "examples" / "run_scenario")


def _module():
    spec = importlib.util.spec_from_file_location("bench_scaling", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_grid_scenario_layout() -> None:
    doc = tomllib.loads(_module().scenario(64, 2))
    assert doc["nodes"]["count"] == 64
    assert doc["nodes"]["placement"] == {"kind": "grid", "columns": 8, "spacing_m": 200}
    flows = doc["flows"]
    assert len(flows) == 16
    # Each flow is one hop to the right-hand neighbour in the same row.
    for f in flows:
        assert f["src"] % 4 == 0 and f["dst"] == f["src"] + 1
        assert f["src"] // 8 == f["dst"] // 8
    with pytest.raises(ValueError):
        _module().scenario(50, 2)
    assert "routing" not in doc
    # The AODV variant (the grid `--ns2` can export) differs only in its routing table.
    aodv = tomllib.loads(_module().scenario(64, 2, "aodv"))
    assert aodv.pop("routing") == {"protocol": "aodv"}
    assert aodv == doc


def test_events_grow_with_nodes(tmp_path: Path) -> None:
    mod = _module()
    events = []
    for n in (16, 64):
        path = tmp_path / f"grid{n}.toml"
        path.write_text(mod.scenario(n, 2))
        r = manetlab.run(path)
        # 8 packets per flow in 2 s; one hop at light load: nearly all are
        # delivered (a few collide with neighbouring flows' frames).
        assert (r.flows["tx_packets"] == 8).all()
        assert r.flows["delivered_packets"].sum() >= 0.9 * r.flows["tx_packets"].sum()
        events.append(r.summary["events"])
    assert events[1] > 3 * events[0]


@pytest.mark.skipif(not BINARY.exists(), reason="needs the run_scenario example (`make test` builds it: cargo test)")
def test_script_prints_table() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--binary", str(BINARY), "--nodes", "16,64", "--duration", "1", "--repeats", "1"], capture_output=True, text=True, check=True)
    rows = re.findall(r"(?m)^\| (\d+) \| ([\d,]+) \| ([\d,]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", proc.stdout)
    assert [int(r[0]) for r in rows] == [16, 64]
    events = [int(r[1].replace(",", "")) for r in rows]
    assert events[1] > events[0] > 0


def test_ns2_needs_aodv_routing() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--binary", str(BINARY), "--nodes", "16", "--ns2"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "--ns2 needs --routing aodv" in proc.stderr
