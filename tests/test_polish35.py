"""Issue 35, "nothing silently wrong": study metric names checked against the
metric schema (no probe run), one-line errors that say which kind of file was
given and which command takes it, `reproduce` with an unknown paper, and
`compare` saying its table is of one seed.

Each behaviour here was wrong before its fix: a misspelt metric of a study whose
flows start after 1 ms ran and wrote NaN tables (exit 0); `run STUDY.toml` said
"metrics: unknown key"; `study status SCENARIO.toml` said "duration_s: unknown
key"; `reproduce foo` printed paths before its error; `compare` printed
single-seed percentages without a word about it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import manetlab
from manetlab import _core
from manetlab.scenario import load_scenario
from manetlab.study import load_study, metrics_of
from _util import ROOT, run_cli

#: A 3-node wired chain whose only flow starts at 2 s: a 1 ms probe of it is no
#: valid scenario (the start is not before the end), which is how the old check
#: switched itself off.
LATE = """\
name = "late"
duration_s = 6
[nodes]
count = 3
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 10
[[links]]
a = 1
b = 2
bandwidth_mbps = 1
delay_ms = 10
[[flows]]
name = "bulk"
kind = "cbr"
src = 0
dst = 2
start_s = 2.0
rate_kbps = 100
"""


def late_study(tmp: Path, extra: str, scenario_name: str = "late.toml", name: str = "study.toml") -> Path:
    (tmp / scenario_name).write_text(LATE, encoding="utf-8")
    p = tmp / name
    p.write_text(f'scenario = "{scenario_name}"\nseeds = "1-2"\n{extra}\n', encoding="utf-8")
    return p


def one_error_line(r: Any) -> str:
    """The single `error: ...` line of a failed command (exit 2, nothing on stdout)."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


# ----------------------------------------------------------------------------- 1. metric names


def test_misspelt_metric_is_an_error_before_any_run_when_flows_start_late(tmp_path: Path) -> None:
    study = late_study(tmp_path, 'metrics = ["flow0.pdrr"]')
    with pytest.raises(manetlab.ScenarioError) as e:
        load_study(study)
    msg = str(e.value)
    assert msg.startswith("metrics[0]: 'flow0.pdrr' is not a metric of this study (allowed: flow0.pdr, "), msg
    assert "\n" not in msg and len(msg) < 600  # a bounded list, the closest name first
    line = one_error_line(run_cli("study", "run", study, "--dir", tmp_path / "st", "--no-progress", cwd=tmp_path))
    assert line == f"error: {msg}"
    assert not (tmp_path / "st").exists()  # nothing ran, no store was made


def test_misspelt_derived_metric_is_an_error_when_flows_start_late(tmp_path: Path) -> None:
    study = late_study(tmp_path, """\
[grid]
"flows[0].rate_kbps" = [50, 100]
[[derived]]
name = "more"
kind = "difference"
metric = "flow0.throughput_kbp"
axis = "flows[0].rate_kbps"
new = 100
base = 50
""")
    with pytest.raises(manetlab.ScenarioError, match=r"^derived\[0\]\.metric: 'flow0\.throughput_kbps?' is not a metric of this study \(allowed: flow0\.throughput_kbps, "):
        load_study(study)


@pytest.mark.parametrize(
    "metric, message",
    [
        ("flow0.timeouts", "metrics[0]: 'flow0.timeouts' is not a metric of this study; a TCP field, and flow 0 is no FTP (TCP) flow in this study (allowed: "),
        ("nodes.routing_sent_RREQ", "metrics[0]: 'nodes.routing_sent_RREQ' is not a metric of this study; a routing counter of another protocol, or of none"),
        ("flow0.delivered_per_slot", "metrics[0]: 'flow0.delivered_per_slot' is not a metric of this study; only with [mac] kind = \"frn\""),
        ("bulk.pdr", "metrics[0]: 'bulk.pdr' is not a metric name: flows are named by index in metrics (allowed: 'flow0.pdr' for flow 'bulk')"),
        ("bulk.pdrr", "metrics[0]: 'bulk.pdrr' is not a metric name: flows are named by index in metrics (allowed: 'flow0.<field>' for flow 'bulk')"),
        ("flow1.pdr", "metrics[0]: 'flow1.pdr': the scenario has 1 flows (flow0 ... flow0)"),
        ("total.pdrr", "metrics[0]: 'total.pdrr' is not a metric of this study (allowed: total.pdr, total.rx_bytes, total.rx_packets, total.throughput_kbps, total.tx_bytes, total.tx_packets)"),
    ],
)
def test_unknown_metric_messages_say_why(tmp_path: Path, metric: str, message: str) -> None:
    study = late_study(tmp_path, f'metrics = ["{metric}"]')
    with pytest.raises(manetlab.ScenarioError) as e:
        load_study(study)
    assert str(e.value).startswith(message), str(e.value)


def test_valid_metrics_of_late_flows_load_and_a_cell_may_add_names(tmp_path: Path) -> None:
    # Names from any cell are allowed: the routing counters exist in the AODV cells only.
    study = late_study(tmp_path, """\
metrics = ["flow0.pdr", "flow0.drops_rtr.NRTE", "nodes.routing_sent_RREQ", "nodes.mac_retries", "total.pdr", "events", "jain_throughput"]
[grid]
"routing.protocol" = ["static", "aodv"]
""")
    spec = load_study(study)
    assert spec.metrics is not None and len(spec.metrics) == 7


def test_study_results_metrics_option_is_checked(tmp_path: Path) -> None:
    study = late_study(tmp_path, "")
    line = one_error_line(run_cli("study", "results", study, "--dir", tmp_path / "st", "--metrics", "flow0.pdr", "flow0.pdrr", cwd=tmp_path))
    assert line.startswith("error: --metrics: 'flow0.pdrr' is not a metric of this study (allowed: flow0.pdr, ")


def _flow(kind: str, src: int, dst: int, start: float, transport: str | None = None) -> dict[str, Any]:
    f: dict[str, Any] = {"kind": kind, "src": src, "dst": dst, "start_s": start}
    if kind == "cbr":
        f.update(packet_size_bytes=512, interval_s=0.05)
    if transport:
        f["transport"] = transport
    return f


def _wireless(protocol: str, flows: list[dict[str, Any]], duration_s: float = 8) -> dict[str, Any]:
    sc: dict[str, Any] = {
        "duration_s": duration_s,
        "nodes": {"count": 5, "placement": {"kind": "chain", "spacing_m": 200}},
        "radio": {},
        "flows": flows,
    }
    if protocol != "static":
        sc["routing"] = {"protocol": protocol}
    return sc


SCHEMA_CASES = {
    # Every routing protocol with a TCP and a late CBR flow, a few TCP variants, the wired chain, FRN.
    **{p: _wireless(p, [_flow("ftp", 0, 4, 0.5, t), _flow("cbr", 4, 0, 3.0)])
       for p, t in (("static", "newreno"), ("aodv", "sack"), ("dsr", "vegas"), ("dsdv", "elfn"))},
    "aodv-cbr-only": _wireless("aodv", [_flow("cbr", 0, 4, 1.0), _flow("cbr", 1, 3, 2.0)]),
    "wired-chain": str(ROOT / "examples" / "cbr_chain.toml"),
    "frn": str(ROOT / "examples" / "frn_grid.toml"),
}

#: Names the schema lists that a run leaves out when it measured nothing for them
#: (a None the summary writes and `metrics_of` skips instead of making NaN).
MAY_BE_ABSENT = re.compile(r"flow\d+\.final_ssthresh_segs|nodes\.routing_route_hops_mean|nodes\.routing_discovery_time_mean_s")


@pytest.mark.parametrize("case", sorted(SCHEMA_CASES))
def test_metric_schema_is_what_runs_produce(case: str) -> None:
    """The schema (from the normalised scenario alone) against `metrics_of` of a
    real run: every name a run has is in the schema, and every schema name is in
    the run unless it is one a run may leave out. A field added to the core's
    summary and not to the schema fails here."""
    from manetlab.study.spec import metric_schema

    src = SCHEMA_CASES[case]
    sc = load_scenario(src, {"duration_s": 20}) if isinstance(src, str) else manetlab.Scenario(src)
    names = set(metrics_of(json.loads(_core.run(sc.to_json(), None))))
    schema = metric_schema(sc.normalized)
    assert names - schema == set()
    assert {n for n in schema - names if not MAY_BE_ABSENT.fullmatch(n)} == set()


def test_every_example_and_reproduction_study_still_loads() -> None:
    from manetlab.reproduce import papers

    for p in sorted((ROOT / "examples").glob("*study*.toml")):
        raw = p.read_text(encoding="utf-8")
        if "\nscenario" in "\n" + raw:  # default_study.toml is a scenario (the one `make run` compares on)
            assert load_study(p).cells
    for name, paper in papers().items():
        for quick in (True, False):
            spec = load_study(paper.study(quick), seed_hook=paper.seed_hook())
            assert spec.metrics, name


# ----------------------------------------------------------------------------- 2. which kind of file


SCENARIO_COMMANDS = {
    "run": (),
    "validate": (),
    "compare": ("--flow", "0", "--transports", "newreno", "reno"),
    "export-ns2": ("--out", "ns2out"),
    "crosscheck": (),
}


@pytest.mark.parametrize("command", sorted(SCENARIO_COMMANDS))
def test_study_file_given_to_a_scenario_command(tmp_path: Path, command: str) -> None:
    if command == "crosscheck" and shutil.which("ns") is None:
        pytest.skip("crosscheck asks for ns-2 before it reads the scenario")
    study = late_study(tmp_path, 'metrics = ["flow0.pdr"]\n[grid]\n"flows[0].rate_kbps" = [50, 100]', name="my study.toml")
    line = one_error_line(run_cli(command, study.name, *SCENARIO_COMMANDS[command], cwd=tmp_path))
    assert line == ("error: my study.toml: this is a study file (it names a scenario and seeds, grid, metrics); "
                    "run it with: manetlab study run 'my study.toml'")


@pytest.mark.parametrize("action", ["run", "status", "results"])
def test_scenario_file_given_to_a_study_command(tmp_path: Path, action: str) -> None:
    late_study(tmp_path, "")
    line = one_error_line(run_cli("study", action, "late.toml", cwd=tmp_path))
    assert line == ("error: late.toml: this is a scenario file (it has nodes, flows, duration_s and no scenario key); "
                    "run it with: manetlab run late.toml, or name it in a study file: scenario = \"<its path>\" (docs/studies.md)")
    assert not (tmp_path / "results").exists()


def test_scenario_table_given_as_a_study(tmp_path: Path) -> None:
    import tomllib

    with pytest.raises(manetlab.ScenarioError, match=r"^\(top level\): this is a scenario \(it has nodes, flows, duration_s and no scenario key\), not a study; "):
        load_study(tomllib.loads(LATE), base_dir=tmp_path)


def test_file_kind_messages_escape_the_path(tmp_path: Path) -> None:
    name = "a\x1b[31mb.toml"
    (tmp_path / name).write_text(LATE, encoding="utf-8")
    with pytest.raises(manetlab.ScenarioError) as e:
        load_study(tmp_path / name)
    assert "\x1b" not in str(e.value) and "this is a scenario file" in str(e.value)
    late_study(tmp_path, "", name="s\x1b.toml")
    line = one_error_line(run_cli("run", "s\x1b.toml", cwd=tmp_path))
    assert "\x1b" not in line and "this is a study file" in line


def test_other_bad_files_keep_their_own_messages(tmp_path: Path) -> None:
    # A scenario with a bad key is still that key's message; a study with a bad key too.
    (tmp_path / "bad.toml").write_text(LATE.replace('name = "late"', 'name = "late"\ncolour = 1'), encoding="utf-8")
    assert one_error_line(run_cli("run", "bad.toml", cwd=tmp_path)).startswith("error: colour: unknown key")
    late_study(tmp_path, "colour = 1", name="bad_study.toml")
    assert one_error_line(run_cli("study", "run", "bad_study.toml", cwd=tmp_path)).startswith("error: colour: unknown key")


# ----------------------------------------------------------------------------- 3. reproduce NAME


def test_reproduce_unknown_paper_is_one_line_first(tmp_path: Path) -> None:
    from manetlab.reproduce import papers

    line = one_error_line(run_cli("reproduce", "foo", cwd=tmp_path))
    assert line == f"error: reproduce: \"foo\" is not a paper we reproduce (allowed: {', '.join(papers())})"
    assert not (tmp_path / "results").exists()


# ----------------------------------------------------------------------------- 4. compare on one seed


def test_compare_says_its_table_is_of_one_seed(tmp_path: Path) -> None:
    shutil.copyfile(ROOT / "examples" / "tcp_chain_80211.toml", tmp_path / "chain.toml")
    r = run_cli("compare", "chain.toml", "--flow", "0", "--transports", "newreno", "reno", "--set", "duration_s=3", "--out", "cmp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    table_end = next(i for i, ln in enumerate(lines) if ln.startswith("jitter"))
    assert lines[table_end + 1] == ("one seed: a single run per variant proves nothing about a difference; "
                                    "--seeds 1-10 runs every variant on each of many seeds (means, 95% CI of the difference), as does a study (docs/studies.md)")
