"""The `faults` table (issue 37): every failure of a run, loadable with pandas."""

from __future__ import annotations

import math

import pandas as pd

import manetlab
from manetlab.results import FAULT_COLUMNS, load_result


def grid(**failures: object) -> dict:
    """Paper 003's grid: 20 nodes, 4 x 5 at 200 m, failures at 0.01/s of mean 10 s, 300 s."""
    return {
        "seed": 1,
        "duration_s": 300,
        "nodes": {"count": 20, "placement": {"kind": "grid", "columns": 5, "spacing_m": 200}},
        "radio": {},
        "routing": {"protocol": "aodv"},
        "faults": {"random_link_failures": {"rate_per_s": 0.01, "mean_duration_s": 10.0, "start_s": 10.0, **failures}},
    }


def distance_m(a: int, b: int) -> float:
    return math.dist(((a % 5) * 200.0, (a // 5) * 200.0), ((b % 5) * 200.0, (b // 5) * 200.0))


def test_every_failure_of_the_grid_is_a_link_in_range(tmp_path):
    r = manetlab.run(grid())
    f = r.faults
    assert list(f.columns) == FAULT_COLUMNS
    # Seed 1: the 99 failures on the grid's links (of 524 over all pairs, scope "pairs").
    assert len(f) == 99
    assert (f["kind"] == "link_down").all() and (f["cause"] == "random").all() and (f["effect"] == "blocked").all()
    assert max(distance_m(a, b) for a, b in zip(f["a"], f["b"])) <= 250.0
    assert f["time_s"].is_monotonic_increasing and (f["duration_s"] > 0).all()
    # The table agrees with the event log: a link_down event per row.
    downs = [e for e in r.summary["faults"] if e["kind"] == "link_down"]
    assert [(e["time_s"], *e["nodes"]) for e in downs] == list(zip(f["time_s"], f["a"], f["b"]))
    # Written with the result and read back with pandas as the same table.
    r.write(tmp_path / "out")
    back = pd.read_csv(tmp_path / "out" / "faults.csv")
    pd.testing.assert_frame_equal(back, f, check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "faults.parquet"), f)
    assert len(load_result(tmp_path / "out").faults) == 99


def test_scope_pairs_gives_back_every_pair():
    f = manetlab.run(grid(scope="pairs")).faults
    assert len(f) == 524
    assert sum(distance_m(a, b) <= 250 for a, b in zip(f["a"], f["b"])) == 99
    assert sum(250 < distance_m(a, b) <= 550 for a, b in zip(f["a"], f["b"])) == 213


def test_scripted_failures_and_effects_in_the_table():
    s = grid(links=[[0, 1]], effect="undecodable")
    s["duration_s"] = 100
    s["faults"]["node_switches"] = [{"node": 7, "off_s": 20.0, "on_s": 35.0}]
    s["faults"]["link_outages"] = [{"a": 3, "b": 2, "down_s": 50.0}]
    f = manetlab.run(s).faults
    node = f[f["kind"] == "node_off"].iloc[0]
    assert (node["time_s"], node["a"], node["duration_s"], node["cause"]) == (20.0, 7, 15.0, "scripted")
    assert math.isnan(node["b"]) and pd.isna(node["effect"])
    outage = f[f["cause"] == "scripted"].query("kind == 'link_down'").iloc[0]
    assert (outage["a"], outage["b"], outage["effect"]) == (2, 3, "blocked") and math.isnan(outage["duration_s"])
    random = f[f["cause"] == "random"]
    assert len(random) > 0 and (random["effect"] == "undecodable").all()
    assert set(zip(random["a"], random["b"])) == {(0, 1)}


def test_without_faults_the_table_is_empty_and_not_written(tmp_path):
    s = grid()
    del s["faults"]
    s["duration_s"] = 5
    r = manetlab.run(s)
    assert r.faults.empty and list(r.faults.columns) == FAULT_COLUMNS
    r.write(tmp_path / "out")
    assert not (tmp_path / "out" / "faults.csv").exists()
