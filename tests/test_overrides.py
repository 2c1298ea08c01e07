"""Overrides that undo what a scenario file says (issue 35): `outputs.trace = false`
turns a traced scenario's trace off together with its `trace_levels`, in the API,
the CLI and studies alike; levels without any `trace` key stay an error."""

from __future__ import annotations

from pathlib import Path

import pytest

import manetlab
from _util import run_cli

TRACED = {
    "duration_s": 2.0,
    "nodes": {"count": 3, "placement": {"kind": "chain", "spacing_m": 200.0}},
    "radio": {},
    "flows": [{"kind": "cbr", "src": 0, "dst": 2, "rate_kbps": 50.0}],
    "outputs": {"trace": "old", "trace_levels": ["agt", "rtr", "mac"]},
}


def test_api_trace_false_clears_levels() -> None:
    sc = manetlab.Scenario(TRACED).with_overrides({"outputs.trace": False})
    assert sc.normalized["outputs"]["trace"] is None
    assert sc.normalized["outputs"]["trace_levels"] is None


def test_levels_without_a_trace_key_are_still_an_error() -> None:
    data = {**TRACED, "outputs": {"trace_levels": ["agt"]}}
    with pytest.raises(manetlab.ScenarioError, match=r"^outputs\.trace_levels: only applies with a trace format"):
        manetlab.Scenario(data)


def test_cli_set_trace_false_runs_without_a_trace(tmp_path: Path) -> None:
    sc = tmp_path / "traced.toml"
    sc.write_text(
        'duration_s = 2.0\n[nodes]\ncount = 3\nplacement = { kind = "chain", spacing_m = 200.0 }\n[radio]\n'
        '[[flows]]\nkind = "cbr"\nsrc = 0\ndst = 2\nrate_kbps = 50.0\n'
        '[outputs]\ntrace = "old"\ntrace_levels = ["agt", "rtr"]\n'
    )
    p = run_cli("run", sc, "--set", "outputs.trace=false", "--out", tmp_path / "out")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "summary.json").exists()
    assert not (tmp_path / "out" / "trace.tr").exists()
    p = run_cli("run", sc, "--out", tmp_path / "traced")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "traced" / "trace.tr").exists()


def test_study_can_turn_a_scenarios_trace_off(tmp_path: Path) -> None:
    sc = tmp_path / "traced.toml"
    sc.write_text(
        'duration_s = 2.0\n[nodes]\ncount = 3\nplacement = { kind = "chain", spacing_m = 200.0 }\n[radio]\n'
        '[[flows]]\nkind = "cbr"\nsrc = 0\ndst = 2\nrate_kbps = 50.0\n'
        '[outputs]\ntrace = "old"\ntrace_levels = ["agt", "rtr"]\n'
    )
    st = tmp_path / "study.toml"
    st.write_text('scenario = "traced.toml"\nseeds = [1, 2]\n[set]\n"outputs.trace" = false\n')
    p = run_cli("study", "run", st, "--dir", tmp_path / "st", "--jobs", "1", "--no-progress")
    assert p.returncode == 0, p.stderr
    assert not list((tmp_path / "st").rglob("trace.tr"))
