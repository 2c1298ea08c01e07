"""Malformed scenarios: through the CLI each gives exit status 2 and exactly one
stderr line, ``error: <key path>: ...``; through the Python API the same message
as a manetlab.ScenarioError."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

import manetlab
from _util import run_cli

BASE = """\
seed = 3
duration_s = 10
[nodes]
count = 4
[[links]]
a = 0
b = 1
bandwidth_mbps = 1
delay_ms = 10
[[flows]]
kind = "cbr"
src = 0
dst = 1
interval_s = 0.1
"""


def variant(old: str, new: str) -> str:
    """BASE with the first `old` replaced by `new` (which BASE must contain)."""
    assert old in BASE, old
    return BASE.replace(old, new, 1)


@dataclass
class Case:
    id: str
    content: str | bytes | None  # None: the file does not exist
    path: str  # the key path the message must start with
    needle: str  # and a phrase it must contain
    sets: list[str] = field(default_factory=list)
    suffix: str = ".toml"


CASES = [
    # keys the schema does not know
    Case("unknown-top-level-key", variant("seed = 3", "seeds = 3"), "seeds", "unknown key (allowed here:"),
    Case("unknown-nested-key", variant("delay_ms = 10", "delay_s = 0.01"), "links[0].delay_s", "delay_ms"),
    Case("unknown-key-in-table", variant("count = 4", "count = 4\ncolour = 1"), "nodes.colour", "unknown key"),
    Case("missing-required-key", variant("[nodes]\ncount = 4\n", ""), "nodes", "required key is missing"),
    Case("missing-required-nested", variant("delay_ms = 10\n", ""), "links[0].delay_ms", "required key is missing"),
    # values out of range or inconsistent
    Case("negative-duration", variant("duration_s = 10", "duration_s = -1"), "duration_s", "out of range"),
    Case("flow-to-missing-node", variant("dst = 1", "dst = 9"), "flows[0].dst", "node 9 does not exist"),
    Case("link-to-itself", variant("b = 1", "b = 0"), "links[0].b", "two different nodes"),
    Case(
        "duplicate-link",
        BASE + "[[links]]\na = 1\nb = 0\nbandwidth_mbps = 1\ndelay_ms = 1\n",
        "links[1].b",
        "already joined by links[0]",
    ),
    Case("interval-and-rate", variant("interval_s = 0.1", "interval_s = 0.1\nrate_kbps = 5"), "flows[0].rate_kbps", "not both"),
    Case("jitter-above-interval", variant("interval_s = 0.1", "interval_s = 0.1\njitter_s = 0.2"), "flows[0].jitter_s", "smaller than the interval"),
    Case("error-rate-one", variant("delay_ms = 10", "delay_ms = 10\nerror_rate = 1.0"), "links[0].error_rate", "out of range"),
    # wrong types
    Case("string-for-number", variant("bandwidth_mbps = 1", 'bandwidth_mbps = "fast"'), "links[0].bandwidth_mbps", "expected a number"),
    Case("bool-for-integer", variant("count = 4", "count = true"), "nodes.count", "wrong type"),
    Case("float-for-integer-seed", variant("seed = 3", "seed = 1.5"), "seed", "expected an integer in 0..=18446744073709551615"),
    Case("negative-integer", variant("src = 0", "src = -2"), "flows[0].src", "out of range"),
    Case("table-expected", variant("[nodes]\ncount = 4", "nodes = 4"), "nodes", "wrong type"),
    Case("toml-date", variant("kind = ", "start_s = 1979-05-27\nkind = "), "flows[0].start_s", "date/time"),
    # names the core does not accept (yet)
    Case("unknown-flow-kind", variant('kind = "cbr"', 'kind = "vbr"'), "flows[0].kind", '"vbr" is not allowed'),
    Case("cbr-key-on-ftp", variant('kind = "cbr"', 'kind = "ftp"'), "flows[0].interval_s", "applies to CBR flows only"),
    Case(
        "udp-header-on-ftp",
        variant('kind = "cbr"', 'kind = "ftp"\nudp_header = true').replace("interval_s = 0.1", ""),
        "flows[0].udp_header",
        "applies to CBR flows only",
    ),
    Case("udp-header-not-bool", variant("interval_s = 0.1", "interval_s = 0.1\nudp_header = 3"), "flows[0].udp_header", "expected true or false"),
    Case("unknown-tcp-variant", variant('kind = "cbr"', 'kind = "ftp"\ntransport = "cubic"').replace("interval_s = 0.1", ""), "flows[0].transport", "is not a TCP variant"),
    # A section reserved for a later model (the core's own tests use the same one; move both when it lands).
    Case("outputs-unknown-node", BASE + '[outputs]\npcap_nodes = [9]\n', "outputs.pcap_nodes[0]", "node 9 does not exist"),
    Case("routing-unknown-protocol", BASE + '[routing]\nprotocol = "olsr"\n', "routing.protocol", "is not allowed"),
    Case("dsr-unknown-key", BASE + '[routing]\nprotocol = "dsr"\ndsr = { cache_size = 3 }\n', "routing.dsr.cache_size", "unknown key"),
    # values JSON cannot carry: checked on the Python side, with the key path
    Case("nan-value", variant("interval_s = 0.1", "interval_s = nan"), "flows[0].interval_s", "not a finite number"),
    Case("inf-value", variant("duration_s = 10", "duration_s = inf"), "duration_s", "not a finite number"),
    # files that are not scenarios
    Case("empty-file", "", "duration_s", "required key is missing"),
    Case("missing-file", None, "(file)", "does not exist"),
    Case("binary-garbage", bytes(range(256)) * 4, "(file)", "not UTF-8 text"),
    Case("nul-bytes", b"\x00\x01\x02garbage", "(file)", "binary data"),
    Case("invalid-toml", variant("duration_s = 10", "duration_s = = 10"), "(file)", "not valid TOML: Invalid value (at line 2"),
    Case("invalid-json", '{"duration_s": 10,,}', "(file)", "not valid JSON: Expecting property name", suffix=".json"),
    Case("json-top-level-list", "[1, 2]", "(top level)", "got a list", suffix=".json"),
    Case("json-duplicate-key", '{"duration_s": 1, "duration_s": 2}', "(file)", "'duration_s' appears twice", suffix=".json"),
    Case("json-nan", '{"duration_s": NaN, "nodes": {"count": 2}}', "duration_s", "not a finite number", suffix=".json"),
    # --set overrides
    Case("set-missing-list-index", BASE, "flows[3].interval_s", "flows has 1 entry, so flows[3] does not exist", sets=["flows[3].interval_s=1"]),
    Case("set-through-a-number", BASE, "duration_s.x", "duration_s is a number, not a table", sets=["duration_s.x=1"]),
    Case("set-index-on-a-table", BASE, "nodes[0]", "nodes is a table, not a list", sets=["nodes[0]=1"]),
    Case("set-bad-path-syntax", BASE, "flows[x].src", "not a key path", sets=["flows[x].src=1"]),
    Case("set-without-equals", BASE, "(--set)", "is not key.path=value", sets=["duration_s"]),
    Case("set-unknown-key", BASE, "nodes.colour", "unknown key", sets=["nodes.colour=1"]),
    Case("set-nan", BASE, "duration_s", "not a finite number", sets=["duration_s=nan"]),
    Case("set-wrong-type", BASE, "nodes.count", "wrong type", sets=["nodes.count=four"]),
]


def scenario_file(tmp_path: Path, case: Case) -> Path:
    path = tmp_path / f"scenario{case.suffix}"
    if isinstance(case.content, bytes):
        path.write_bytes(case.content)
    elif case.content is not None:
        path.write_text(case.content, encoding="utf-8")
    return path


def test_base_scenario_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "base.toml"
    path.write_text(BASE)
    p = run_cli("validate", path)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == f"ok: {path}: 4 nodes, 1 link, 1 flow, 10 s\n"


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 15


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_cli_prints_one_error_line_and_exits_2(tmp_path: Path, case: Case) -> None:
    path = scenario_file(tmp_path, case)
    args = [a for s in case.sets for a in ("--set", s)]
    p = run_cli("validate", path, *args)
    assert p.returncode == 2, p
    assert p.stdout == ""
    assert p.stderr.endswith("\n")
    lines = p.stderr.splitlines()
    assert len(lines) == 1, f"expected one line, got: {p.stderr!r}"
    assert lines[0].startswith(f"error: {case.path}: "), lines[0]
    assert case.needle in lines[0], lines[0]
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_api_raises_scenario_error_with_the_same_message(tmp_path: Path, case: Case) -> None:
    path = scenario_file(tmp_path, case)
    with pytest.raises(manetlab.ScenarioError) as exc:
        overrides = dict(manetlab.parse_set(s) for s in case.sets)
        manetlab.load_scenario(path, overrides)
    assert str(exc.value).startswith(f"{case.path}: ")
    assert case.needle in str(exc.value)
    # The CLI prints exactly the API's message.
    p = run_cli("validate", path, *[a for s in case.sets for a in ("--set", s)])
    assert p.stderr == f"error: {exc.value}\n"


def test_scenario_error_is_the_core_class_and_a_value_error() -> None:
    assert manetlab.ScenarioError is manetlab._core.ScenarioError
    assert issubclass(manetlab.ScenarioError, ValueError)


def test_run_rejects_the_same_way_as_validate(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(variant("dst = 1", "dst = 9"))
    p = run_cli("run", path, "--out", tmp_path / "out")
    assert p.returncode == 2
    assert p.stderr == "error: flows[0].dst: node 9 does not exist (nodes 0..3)\n"
    assert not (tmp_path / "out").exists(), "nothing is written for a rejected scenario"


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        ("1.5", "seed: wrong type: got floating point `1.5`, expected an integer in 0..=18446744073709551615"),
        ("-1", "seed: out of range: integer `-1`, expected an integer in 0..=18446744073709551615"),
        ("abc", 'seed: wrong type: got string "abc", expected an integer in 0..=18446744073709551615'),
    ],
)
def test_bad_seed_option(tmp_path: Path, seed: str, message: str) -> None:
    path = tmp_path / "base.toml"
    path.write_text(BASE)
    p = run_cli("run", path, "--seed", seed, "--out", tmp_path / "out")
    assert (p.returncode, p.stderr) == (2, f"error: {message}\n")
    with pytest.raises(manetlab.ScenarioError, match=r"^seed: "):
        manetlab.run(path, seed=True)  # type: ignore[arg-type]  # a bool is not an integer seed


def test_dict_values_json_cannot_carry() -> None:
    base = {"duration_s": 1, "nodes": {"count": 2}}
    with pytest.raises(manetlab.ScenarioError, match=r"^nodes\.count: a set cannot be written"):
        manetlab.Scenario({**base, "nodes": {"count": {2}}})
    with pytest.raises(manetlab.ScenarioError, match=r"^nodes: key 1 is not a string"):
        manetlab.Scenario({**base, "nodes": {1: 2}})
    with pytest.raises(manetlab.ScenarioError, match=r"^links\[0\]\.delay_ms: -inf is not a finite number"):
        manetlab.Scenario({**base, "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": float("-inf")}]})
