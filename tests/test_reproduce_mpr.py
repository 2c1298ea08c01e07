"""`manetlab reproduce mpr` (paper 002): the six network models' example files
are the scenarios the study runs, the combined plane keeps the models out of
each other's carrier-sense range, and the quick variant writes a complete report
(every paper table's two sides filled, every claim evaluated) and resumes from
its store. Never asserts that our numbers equal the paper's."""

from __future__ import annotations

import json
import math
import re

import pytest

import manetlab
from manetlab.cli import main
from manetlab.reproduce import mpr, papers
from manetlab.reproduce.base import VERDICTS
from _util import ROOT


def check_report(out):
    """The report checks every paper's quick variant must pass (as tests/test_reproduce.py)."""
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert rep["tables"]
    for t in rep["tables"]:
        assert t["paper_columns"] and t["ours_columns"], t["title"]
        for row in t["rows"]:
            assert len(row) == len(t["columns"])
            for col in t["paper_columns"] + t["ours_columns"]:
                cell = row[t["columns"].index(col)]
                assert cell and not cell.startswith("n/a") and re.search(r"-?\d", cell), (t["title"], col, row)
    assert rep["claims"] and all(c["verdict"] in VERDICTS and c["test"] and c["evidence"] for c in rep["claims"])
    assert rep["differences"] and all(d["reason"] and d["why"] for d in rep["differences"])
    html = (out / "report.html").read_text(encoding="utf-8")
    for f in rep["figures"]:
        assert (out / "figures" / f"{f['name']}.svg").stat().st_size > 1000
    assert html.count('<img src="data:image/svg+xml;base64,') >= len(rep["figures"]) > 0
    assert not re.search(r"""(src|href)=["'](?!#|data:)""", html)
    planned = rep["run"]["runs planned"]
    assert rep["run"]["runs ok / failed"] == f"{planned} / 0"
    return rep


@pytest.mark.parametrize("model", list(mpr.MODELS))
def test_example_file_is_the_model_the_study_runs(model):
    path = ROOT / "examples" / f"mpr_{model}.toml"
    assert f"§{mpr.SECTION[model][1:]}" in path.read_text(encoding="utf-8")  # cites the paper's section
    assert manetlab.load_scenario(path).normalized == manetlab.Scenario(mpr.model_scenario(model)).normalized


def test_models_are_beyond_each_others_carrier_sense_range():
    sc, flows_of = mpr.combined_layout()
    pos = sc["nodes"]["placement"]["positions_m"]
    owner = [m for m, mod in mpr.MODELS.items() for _ in mod["positions_m"]]
    # Every place a node can be: its start and every scripted destination (moves are straight lines between them).
    spots = [(owner[i], p) for i, p in enumerate(pos)]
    spots += [(owner[e["node"]], c["dest_m"]) for e in sc["mobility"]["nodes"] for c in e["moves"]]
    gap = min(math.dist(p, q) for a, p in spots for b, q in spots if a != b)
    assert gap > 4 * mpr.CS_RANGE_M  # 2.4 km
    # Each model's flows, node switches and moves stay among its own nodes.
    for m, idx in flows_of.items():
        for i in idx:
            f = sc["flows"][i]
            assert owner[f["src"]] == owner[f["dst"]] == m and f["name"].startswith(m)
    assert [owner[s["node"]] for s in sc["faults"]["node_switches"]] == ["link_failure"]
    assert [owner[e["node"]] for e in sc["mobility"]["nodes"]] == ["signal_loss"]
    manetlab.Scenario(sc)  # valid


def test_first_model_in_the_combined_plane_runs_exactly_as_alone():
    """The congestion model keeps its node and flow ids in the combined plane, so its
    random streams are the same as in its example file: if nothing of the other
    five models reaches it, its flows' results are identical."""
    sc = {**mpr.combined_layout()[0], "seed": 1}
    together = manetlab.run(manetlab.Scenario(sc)).flows
    alone = manetlab.run(manetlab.load_scenario(ROOT / "examples" / "mpr_congestion.toml")).flows
    cols = ["tx_packets", "rx_packets", "dropped_packets", "delay_mean_s", "retransmissions"]
    cols = [c for c in cols if c in alone.columns]
    assert together.loc[: len(alone) - 1, cols].reset_index(drop=True).equals(alone[cols].reset_index(drop=True))


def test_paper_tables_cover_every_variant_and_model():
    assert set(mpr.PAPER_VALUES) == set(mpr.MODELS)
    for m, t in mpr.PAPER_VALUES.items():
        assert list(t) == mpr.VARIANTS, m
    assert mpr.PAPER_VALUES["grid"]["mpr"] == (617.56, 588.534, 2)
    assert mpr.PAPER_VALUES["signal_loss"]["tahoe"] == (126.00, 242.009, 42)


def test_quick_reproduction_writes_a_complete_report_and_resumes(tmp_path):
    assert "mpr" in papers()
    out = tmp_path / "mpr"
    assert main(["reproduce", "mpr", "--quick", "--jobs", "2", "--out", str(out), "--no-progress"]) == 0
    first = check_report(out)
    assert [t["title"].split(":")[0] for t in first["tables"]] == [f"Table {n}" for n in ("II", "III", "IV", "V", "VI", "VII")]
    assert len(first["claims"]) == 1 + len(mpr.MODELS)
    assert {f["name"] for f in first["figures"]} == {f"fig{mpr.FIG_NO[m]}_{m}" for m in mpr.MODELS}
    assert main(["reproduce", "mpr", "--quick", "--jobs", "2", "--out", str(out), "--no-progress"]) == 0
    second = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert second["run"]["runs run now / reused from the store"] == f"0 / {first['run']['runs planned']}"
    assert second["tables"] == first["tables"]
