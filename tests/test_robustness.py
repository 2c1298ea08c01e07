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
