"""`manetlab reproduce`: the paper registry, the per-seed flow endpoints (seed
hook) of paper 000, and the quick variant of every paper end to end: a report
with every paper table's two sides filled and every claim evaluated, written
again from the store by a second call that runs nothing. Never asserts that our
numbers equal the paper's."""

from __future__ import annotations

import json
import re

import pytest

import manetlab
from manetlab.cli import main
from manetlab.reproduce import papers, reproduce
from manetlab.reproduce.abra import flow_pairs
from manetlab.reproduce.base import HOLDS, INCONCLUSIVE, NOT_HOLDS, VERDICTS, Claim, combine, seed_diffs
from manetlab.study import SeedHook, Study


def test_registry_lists_the_papers(capsys):
    assert {"abra", "tcp-variants-aodv", "frn"} <= set(papers())
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "abra" in out and "tcp-variants-aodv" in out and "frn" in out


def test_unknown_paper_is_one_line_error(capsys):
    assert main(["reproduce", "no-such-paper"]) == 2
    err = capsys.readouterr().err
    assert "no-such-paper" in err and "allowed: abra" in err


def test_abra_flow_pairs_are_per_seed_and_shared_by_every_cell(tmp_path):
    paper = papers()["abra"]
    s = Study(paper.study(quick=True), tmp_path / "store", seed_hook=paper.seed_hook())
    for seed in (1, 2):
        pairs = {tuple((f["src"], f["dst"]) for f in s.scenario_for(c, seed).normalized["flows"]) for c in s.cells}
        assert pairs == {tuple(flow_pairs(seed))}  # the same 11 pairs in all 18 cells
        assert all(a != b for a, b in flow_pairs(seed))
    assert flow_pairs(1) != flow_pairs(2)
    assert flow_pairs(7) == flow_pairs(7)


def test_claim_parts_combine_as_stated():
    # Every part must hold; one that does not decides against the claim; otherwise inconclusive.
    assert combine([HOLDS, HOLDS]) == HOLDS
    assert combine([HOLDS, INCONCLUSIVE, NOT_HOLDS]) == NOT_HOLDS
    assert combine([HOLDS, INCONCLUSIVE]) == INCONCLUSIVE
    parts = [(HOLDS, "paired t-test (a)", "mean 2"), (INCONCLUSIVE, "paired t-test (b)", "mean 0")]
    c = Claim.of_parts("x beats y", "§1", parts, ["vs a", "vs b"], " (per seed)")
    assert (c.verdict, c.test) == (INCONCLUSIVE, "paired t-test (a) (per seed)")
    assert c.evidence == f"vs a: {HOLDS} (mean 2); vs b: {INCONCLUSIVE} (mean 0)"


def test_seed_diffs_pair_by_seed_and_skip_nan():
    import pandas as pd

    new = pd.Series([5.0, 7.0, float("nan"), 1.0], index=[3, 1, 2, 9])
    base = pd.Series([1.0, 2.0, 3.0, 4.0], index=[1, 2, 3, 4])
    # Seeds 1, 2, 3 in both; seed 2 has a NaN; seeds 4 and 9 are unpaired.
    assert seed_diffs(new, base) == [7.0 - 1.0, 5.0 - 3.0]
    assert seed_diffs(base, new) == [1.0 - 7.0, 3.0 - 5.0]


def test_seed_hook_is_part_of_the_store_key_and_may_not_set_an_axis(tmp_path):
    base = {"duration_s": 1, "nodes": {"count": 3}, "flows": [{"kind": "cbr", "src": 0, "dst": 1, "rate_kbps": 8}], "grid": {}}
    study = {"scenario": {k: v for k, v in base.items() if k != "grid"}, "seeds": "1-2", "grid": {"flows[0].rate_kbps": [8, 16]}}
    plain = Study(study, tmp_path / "a")
    hooked = Study(study, tmp_path / "b", seed_hook=SeedHook("dst-by-seed", lambda seed: {"flows[0].dst": 1 + seed % 2}))
    assert [c.scenario_hash for c in plain.cells] != [c.scenario_hash for c in hooked.cells]
    assert hooked.scenario_for(hooked.cells[0], 1).normalized["flows"][0]["dst"] == 2
    assert hooked.scenario_for(hooked.cells[0], 2).normalized["flows"][0]["dst"] == 1
    with pytest.raises(manetlab.ScenarioError, match="seed hook 'bad'.*flows\\[0\\].rate_kbps"):
        Study(study, tmp_path / "c", seed_hook=SeedHook("bad", lambda seed: {"flows[0].rate_kbps": 4}))


@pytest.mark.parametrize("name", ["abra", "tcp-variants-aodv", "frn"])
def test_quick_reproduction_writes_a_complete_report_and_resumes(name, tmp_path, capsys):
    out = tmp_path / name
    assert main(["reproduce", name, "--quick", "--jobs", "2", "--out", str(out), "--no-progress"]) == 0
    first = json.loads((out / "report.json").read_text(encoding="utf-8"))
    # Every table of the paper: the paper's and our columns filled in every row.
    assert first["tables"]
    for t in first["tables"]:
        assert t["paper_columns"] and t["ours_columns"], t["title"]
        assert set(t["paper_columns"]) | set(t["ours_columns"]) <= set(t["columns"])
        for row in t["rows"]:
            assert len(row) == len(t["columns"])
            for col in t["paper_columns"] + t["ours_columns"]:
                cell = row[t["columns"].index(col)]
                assert cell and not cell.startswith("n/a"), (t["title"], col, row)
                assert re.search(r"-?\d", cell), (t["title"], col, cell)
    # Every claim evaluated, with its test and evidence.
    assert first["claims"]
    for c in first["claims"]:
        assert c["verdict"] in VERDICTS and c["test"] and c["evidence"]
    assert first["differences"] and all(d["reason"] and d["why"] for d in first["differences"])
    # Figures on disk and embedded: the HTML needs no other file.
    html = (out / "report.html").read_text(encoding="utf-8")
    assert first["figures"]
    for f in first["figures"]:
        assert (out / "figures" / f"{f['name']}.svg").stat().st_size > 1000
    assert html.count('<img src="data:image/svg+xml;base64,') >= len(first["figures"])
    assert not re.search(r"""(src|href)=["'](?!#|data:)""", html)
    md = (out / "report.md").read_text(encoding="utf-8")
    for t in first["tables"]:
        assert t["title"] in md
    planned = first["run"]["runs planned"]
    assert first["run"]["runs ok / failed"] == f"{planned} / 0"

    # A second call runs nothing (store hit) and writes the same tables and verdicts.
    capsys.readouterr()
    assert main(["reproduce", name, "--quick", "--jobs", "2", "--out", str(out), "--no-progress"]) == 0
    second = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert second["run"]["runs run now / reused from the store"] == f"0 / {planned}"
    assert second["tables"] == first["tables"]
    assert [c["verdict"] for c in second["claims"]] == [c["verdict"] for c in first["claims"]]


def test_reproduce_api_default_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report, paths = reproduce("tcp-variants-aodv", quick=True, jobs=1)
    assert {p.name for p in paths} == {"report.md", "report.html", "report.json"}
    assert all(p.resolve().parent == tmp_path.resolve() / "results" / "reproduce" / "tcp-variants-aodv-quick" for p in paths)
    assert report.run["store"].endswith("tcp-variants-aodv-quick/study")
