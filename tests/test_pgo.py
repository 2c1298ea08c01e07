"""The profile-guided build's training set (benchmarks/pgo/): valid scenarios that
cover what the README says the profile describes."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import manetlab

ROOT = Path(__file__).resolve().parent.parent
TRAINING = sorted((ROOT / "benchmarks" / "pgo").glob("*.toml"))


@pytest.mark.parametrize("path", TRAINING, ids=lambda p: p.stem)
def test_training_scenario_runs(path: Path) -> None:
    r = manetlab.run(path, overrides={"duration_s": 3})
    assert r.summary["events"] > 0


def test_training_set_covers_routing_and_tcp_variants() -> None:
    files = [tomllib.loads(p.read_text()) for p in TRAINING]
    protocols = {f.get("routing", {}).get("protocol", "static") for f in files}
    transports = {fl["transport"] for f in files for fl in f.get("flows", []) if fl["kind"] == "ftp"}
    assert {"aodv", "dsr", "dsdv"} <= protocols
    assert {"tahoe", "reno", "newreno", "vegas", "sack", "fack"} <= transports
    assert any(fl["kind"] == "cbr" for f in files for fl in f.get("flows", []))
    # Not the timed runs: no training file is a benchmark scenario under another name.
    bench = {p.read_text() for p in (ROOT / "benchmarks" / "scenarios").glob("*.toml")}
    assert not any(p.read_text() in bench for p in TRAINING)
