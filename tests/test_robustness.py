"""Inputs that used to crash, hang or exhaust memory (tests/fixtures/robustness/,
issue 18). Each one now gives either a one-line error naming the key, the value
and what is allowed (CLI: exit status 2, no traceback; API: ScenarioError with the
same message), or a successful run whose memory is bounded (checked under an
address-space limit, so a regression fails instead of swapping the machine)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import manetlab
from _util import ROOT, run_cli

CASES = ROOT / "tests" / "fixtures" / "robustness"

# file -> (key path the message starts with, words it must contain)
REJECTED = {
    "mem_rwp_huge_speed.toml": ("mobility.max_speed_mps", ["1e308 is out of range", "waypoints", "allowed: at most"]),
    "mem_rwp_speed_1e308_fuzzcase.json": ("mobility.max_speed_mps", ["1e308 is out of range", "allowed: at most"]),
    "panic_chain_spacing_overflow.toml": ("nodes.placement.spacing_m", ["1e308 is out of range", "allowed: spacing_m"]),
    "panic_rate_kbps_tiny.toml": ("flows[0].rate_kbps", ["1e-308 is out of range", "allowed: >="]),
    "recursion_json_deep.json": ("(file)", ["nested too deeply", "allowed: at most 64 levels"]),
    "recursion_json_deepcopy.json": ("x", ["nested more than 64 levels deep", "allowed: at most 64 levels"]),
    "recursion_toml_deep_array.toml": ("(file)", ["nested too deeply", "allowed: at most 64 levels"]),
    "recursion_toml_deep_inline_table.toml": ("(file)", ["nested too deeply", "allowed: at most 64 levels"]),
    "weak_msg_toml_depth200_says_not_valid_JSON.toml": ("x", ["nested more than 64 levels deep"]),
}


def test_every_fixture_is_covered() -> None:
    covered = set(REJECTED) | {
        "mem_static_routing_50k_nodes.toml",
        "mem_static_routing_1e6_nodes.toml",
        "pcap_1100_nodes_too_many_open_files.toml",
    }
    assert {p.name for p in CASES.iterdir()} == covered


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_cli_rejects_with_one_line(tmp_path: Path, name: str) -> None:
    key, words = REJECTED[name]
    p = run_cli("run", CASES / name, "--out", tmp_path / "out")
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith(f"error: {key}: "), lines[0]
    for w in words:
        assert w in lines[0], lines[0]
    assert "JSON" not in lines[0] or name.endswith(".json"), "a TOML file's error must not talk about JSON"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_api_raises_scenario_error(name: str) -> None:
    key, words = REJECTED[name]
    with pytest.raises(manetlab.ScenarioError) as e:
        manetlab.run(CASES / name)
    msg = str(e.value)
    assert msg.startswith(f"{key}: ") and "\n" not in msg, msg
    for w in words:
        assert w in msg, msg


def test_deep_dicts_from_python_are_rejected_before_any_recursion() -> None:
    # Built in Python, not read from a file: the same bound, no RecursionError.
    deep: list = [1]
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(manetlab.ScenarioError, match=r"^x: nested more than 64 levels deep"):
        manetlab.run({"duration_s": 1, "nodes": {"count": 2}, "x": deep})
    with pytest.raises(manetlab.ScenarioError, match=r"^x: nested more than 64"):
        manetlab.Scenario({"duration_s": 1, "nodes": {"count": 2}, "x": deep})


def test_core_reports_deep_json_as_nesting_not_syntax() -> None:
    text = '{"duration_s": 1, "nodes": {"count": 2}, "x": ' + "[" * 200 + "]" * 200 + "}"
    with pytest.raises(manetlab.ScenarioError) as e:
        manetlab._core.validate(text)
    assert str(e.value).startswith("(file): nested more than 128 levels deep"), e.value
    shallow = '{"duration_s": 1, "nodes": {"count": 2}, "x": ' + "[" * 70 + "]" * 70 + "}"
    with pytest.raises(manetlab.ScenarioError, match=r"^x: nested more than 64 levels deep"):
        manetlab._core.validate(shallow)


def _limited(code: str, address_space_bytes: int, open_files: int | None = None) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter under an address-space limit (and an
    open-file limit), so unbounded memory shows up as a failure, not as swap."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space_bytes, address_space_bytes))
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    return subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=300, preexec_fn=limit)


def test_50k_static_nodes_run_from_the_cli_in_bounded_memory(tmp_path: Path) -> None:
    # An all-pairs route table would be 8 * 50000^2 bytes = 20 GB.
    out = tmp_path / "out"
    code = (
        "import sys; from manetlab.cli import main; "
        f"sys.exit(main(['run', {str(CASES / 'mem_static_routing_50k_nodes.toml')!r}, '--out', {str(out)!r}]))"
    )
    p = _limited(code, 3 << 30)
    assert p.returncode == 0, p.stderr[-2000:]
    s = manetlab.load_result(out).summary
    assert len(s["nodes"]) == 50_000
    assert s["flows"][0]["rx_packets"] == s["flows"][0]["tx_packets"] == 25


def test_a_million_static_nodes_run_from_the_api_in_bounded_memory() -> None:
    # 8 * 10^12 bytes of all-pairs routes before; now routes per destination in use.
    code = (
        "import manetlab, json; "
        f"r = manetlab.run({str(CASES / 'mem_static_routing_1e6_nodes.toml')!r}); "
        "f = r.summary['flows'][0]; print(json.dumps([len(r.summary['nodes']), f['tx_packets'], f['rx_packets']]))"
    )
    # Measured peak 6.4 GB RSS: almost all of it is the summary's 10^6 per-node rows
    # (every counter, drop and holder key present in each) as Python dicts, not routing.
    p = _limited(code, 10 << 30)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout) == [1_000_000, 25, 25]


def test_a_million_nodes_validate_from_the_cli() -> None:
    p = run_cli("validate", CASES / "mem_static_routing_1e6_nodes.toml")
    assert p.returncode == 0, p.stderr
    assert "1000000 nodes" in p.stdout


@pytest.mark.parametrize("how", ["cli", "api"])
def test_pcap_for_1100_nodes_needs_no_file_per_node(tmp_path: Path, how: str) -> None:
    # With at most 64 open files a process could not hold 1100 pcap files open.
    out = tmp_path / "out"
    case = str(CASES / "pcap_1100_nodes_too_many_open_files.toml")
    if how == "cli":
        code = f"import sys; from manetlab.cli import main; sys.exit(main(['run', {case!r}, '--out', {str(out)!r}]))"
    else:
        code = f"import manetlab; manetlab.run({case!r}, out={str(out)!r})"
    p = _limited(code, 3 << 30, open_files=64)
    assert p.returncode == 0, p.stderr[-2000:]
    r = manetlab.load_result(out)
    files = {f["file"]: f["bytes"] for f in r.summary["outputs"]}
    assert len(files) == 1100
    for name, size in files.items():
        assert (out / name).stat().st_size == size
    # Nodes 0 and 1 carry the CBR flow (and AODV); node 0's file has records.
    assert files["node0.pcap"] > 24 and files["node1.pcap"] > 24


# The reproducers of ../shared/robustness-cases/found-2026-11-29/ (issue 34) and the
# tests that turn each into a check of the outcome the issue asks for.
FOUND_2026_11_29 = {
    "00_panic_negative_on_s": ["test_security_input.py::test_00_"],
    "01_tcl_injection_crosscheck": ["test_security_tcl.py::test_repro01_export_ns2_cli", "test_security_tcl.py::test_repro01_crosscheck_cli"],
    "03_concurrent_study": ["test_security_study.py::test_03_"],
    "04_fifo": ["test_security_input.py::test_04_fifo_as_traffic_or_movement_file_fails_at_once"],
    "05_memory_grows_per_packet": ["test_security_core.py::test_05_"],
    "05b_random_link_failures_oom": ["test_security_core.py::test_05b_"],
    "06_mean_delay_above_max": ["test_security_core.py::test_06_"],
    "07_symlink_follow": [
        "test_security_outputs.py::test_07_writers_refuse_a_planted_symlink",
        "test_security_study.py::test_07_study_trace_writer_does_not_follow_planted_symlinks",
    ],
    "09_summary_json_dir_deleted": ["test_security_outputs.py::test_09_a_folder_holding_a_summary_json_is_not_deleted"],
    "10_readonly_and_diskfull_study": [
        "test_security_study.py::test_10a_status_and_results_on_a_read_only_mount",
        "test_security_study.py::test_10b_full_disk_is_one_line_and_the_store_resumes",
    ],
    "12_animate_page_broken_by_name": ["test_security_html.py::test_reproducer_12_"],
    "14_rename_window": ["test_security_outputs.py::test_14_"],
    "15_ctrlc_study_traceback": ["test_security_study.py::test_15_ctrl_c_while_workers_start_prints_no_traceback"],
    "17_error_message_echo": ["test_security_input.py::test_17_"],
    "18_dense_10k_nodes_oom": ["test_security_core.py::test_too_large_runs_are_refused_with_one_line_from_the_cli"],
    "18_million_radio_nodes_oom": ["test_security_core.py::test_too_large_runs_are_refused_with_one_line_from_the_cli"],
}


def test_every_reproducer_of_2026_11_29_has_its_test() -> None:
    found = ROOT / "tests" / "fixtures" / "robustness-found-2026-11-29"
    stems = {p.name.split(".")[0] for p in found.iterdir()}
    # Every fixture copied here belongs to a listed reproducer (15_study_kill is 15's study).
    assert stems <= set(FOUND_2026_11_29) | {"07_study", "10_study", "15_study_kill"}, stems - set(FOUND_2026_11_29)
    for case, tests in FOUND_2026_11_29.items():
        for t in tests:
            file, prefix = t.split("::")
            src = (ROOT / "tests" / file).read_text(encoding="utf-8")
            assert f"def {prefix}" in src, f"{case}: no test {t}"
