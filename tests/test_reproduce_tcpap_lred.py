"""`manetlab reproduce tcpap-lred` (paper 001): scenario I's example file is the
scenario the report runs, its geometry (positions, hop count, phases) follows the
paper's stated movement, and the quick variant writes a complete report and
resumes from its stores. Never asserts that our numbers equal the paper's."""

from __future__ import annotations

import json
import math

import manetlab
from manetlab.cli import main
from manetlab.reproduce import papers
from manetlab.reproduce import tcpap_lred as t
from _util import ROOT
from test_reproduce_mpr import check_report


def test_scenario_i_example_is_the_scenario_the_report_runs():
    path = ROOT / "examples" / "tcpap_lred_scenario1.toml"
    assert "§5.1" in path.read_text(encoding="utf-8")
    assert manetlab.load_scenario(path).normalized == manetlab.Scenario(t.SCENARIO_I).normalized


def test_scenario_i_positions_follow_the_stated_movement():
    # Node 0 leaves (50, 90) at 0.1 s towards (420, 100) at 5 m/s: 370.1 m, arriving at 74.1 s.
    d = math.dist((50, 90), (420, 100))
    p = t.positions_at(t.SCENARIO_I, 40.1)
    assert math.dist(p[0], (50 + 200 * 370 / d, 90 + 200 * 10 / d)) < 1e-6
    assert math.dist(t.positions_at(t.SCENARIO_I, 99.0)[0], (420, 100)) < 1e-9
    # At 100 s it turns towards (2, 450) at 25 m/s; node 1 has reached (10, 460) (442.8 m at 5 m/s).
    p = t.positions_at(t.SCENARIO_I, 104.0)
    d0 = math.dist((420, 100), (2, 450))
    assert math.dist(p[0], (420 - 100 * 418 / d0, 100 + 100 * 350 / d0)) < 1e-6
    assert math.dist(p[1], (10 + 60 * 480 / math.dist((10, 460), (490, 40)), 460 - 60 * 420 / math.dist((10, 460), (490, 40)))) < 1e-6
    # The eight others: 1 m/s radially, stopping at 100 m.
    assert math.dist(t.positions_at(t.SCENARIO_I, 50.1)[2], (300, 250)) < 1e-6
    assert math.dist(t.positions_at(t.SCENARIO_I, 140.0)[4], (250, 350)) < 1e-6


def test_scenario_i_hop_count_and_phases():
    # At 0 s, 0 and 1 are 256 m from the group at (250, 250): no path; soon after, two hops.
    assert t.hop_count(t.positions_at(t.SCENARIO_I, 0.0), 0, 1) is None
    assert t.hop_count(t.positions_at(t.SCENARIO_I, 20.0), 0, 1) == 2
    assert t.hop_count([(0, 0), (250, 0)], 0, 1) == 1 and t.hop_count([(0, 0), (250.1, 0)], 0, 1) is None
    ph = t.phases()
    assert ph["multi-hop"][0] < ph["multi-hop"][1] <= ph["close"][0] < ph["close"][1]
    for x in (ph["close"][0] + 0.5, ph["close"][1] - 0.5):
        assert t.hop_count(t.positions_at(t.SCENARIO_I, x), 0, 1) == 1


def test_quick_reproduction_writes_a_complete_report_and_resumes(tmp_path):
    assert "tcpap-lred" in papers()
    out = tmp_path / "tcpap-lred"
    assert main(["reproduce", "tcpap-lred", "--quick", "--jobs", "2", "--out", str(out), "--no-progress"]) == 0
    first = check_report(out)
    assert [x["title"].split(":")[0] for x in first["tables"]] == ["Table 1", "Table 2"]
    assert {f["name"] for f in first["figures"]} == {"fig3_scenario_i_window", "fig4_scenario_ii_window", "table1_bars"}
    assert (out / "study-scenario-i" / "study.sqlite").exists()
    assert main(["reproduce", "tcpap-lred", "--quick", "--jobs", "2", "--out", str(out), "--no-progress"]) == 0
    second = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert second["run"]["runs run now / reused from the store"] == f"0 / {first['run']['runs planned']}"
    assert second["tables"] == first["tables"] and second["extra_tables"] == first["extra_tables"]
