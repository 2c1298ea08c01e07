"""Mobility through the Python front: ns-2 movement files named relative to the scenario."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import manetlab

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "crates" / "manetlab-core" / "tests" / "fixtures" / "setdest_v1_10nodes_1500x300.tcl"

SCENARIO = """\
duration_s = 20
[area]
width_m = 1500
height_m = 300
[nodes]
count = 10
[radio]
[mobility]
model = "ns2_file"
path = "{path}"
[[flows]]
kind = "cbr"
src = 0
dst = 1
interval_s = 0.5
"""


def test_movement_file_is_read_relative_to_the_scenario(tmp_path: Path):
    (tmp_path / "moves").mkdir()
    shutil.copy(FIXTURE, tmp_path / "moves" / "m.tcl")
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(path="moves/m.tcl"))
    s = manetlab.load_scenario(scenario)
    assert "$node_(0) set X_" in s.normalized["mobility"]["ns2_text"]
    r = manetlab.run(s)
    # The fixture's first positions are where the per-node table says the nodes start.
    first = FIXTURE.read_text().split("$node_(0) set X_ ")[1].split()[0]
    assert r.nodes.loc[0, "x_m"] == pytest.approx(float(first), abs=1e-6)
    # Run from another working directory: same bytes.
    proc = subprocess.run([sys.executable, "-m", "manetlab", "run", str(scenario), "--out", str(tmp_path / "o")], cwd="/", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "o" / "summary.json").read_text() == r.summary_json


def test_missing_movement_file_is_one_line_naming_the_key(tmp_path: Path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.format(path="nope.tcl"))
    proc = subprocess.run([sys.executable, "-m", "manetlab", "validate", str(scenario)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: mobility.path: cannot read movement file") and proc.stderr.count("\n") == 1
