"""Issue 34, input side: scenario and study files are untrusted data.

* every out-of-range time is a ScenarioError naming the key (no PanicException);
* names follow one rule (no control or format characters, at most 200 characters);
* messages quote a bounded, escaped excerpt of a value, on one line;
* files a scenario or study names are regular files inside the naming file's
  folder tree (unless allowed), read with a size cap, never blocking on a FIFO;
* a boundary sweep: every numeric key at -1, 0, tiny, huge, NaN, ±inf and a
  fraction gives one clean line or a run without a panic.

The reproducers handled here are in tests/fixtures/robustness-found-2026-11-29/.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
import tomllib
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from manetlab import _core
from manetlab.scenario import MAX_NAME_CHARS, Scenario, ScenarioError, apply_overrides, excerpt, load_scenario, quote
from manetlab.study import load_study
from _util import ROOT, run_cli

FOUND = ROOT / "tests" / "fixtures" / "robustness-found-2026-11-29"
#: Longest message a bounded error may be (the longest list of allowed values is far shorter).
MAX_MESSAGE = 600


def one_clean_line(message: str) -> None:
    """A message as issue 34 wants it: one line, no control or format characters, bounded."""
    assert "\n" not in message and "\r" not in message, repr(message)
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in message), repr(message)
    assert len(message) <= MAX_MESSAGE, f"{len(message)} characters: {message[:200]}"


def cli_error(p: Any) -> str:
    """The single error line of a CLI run that must fail with status 2."""
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "PanicException" not in p.stderr
    one_clean_line(p.stderr.rstrip("\n"))
    return p.stderr


# ----------------------------------------------------------------------------- 00: fault end times


def test_00_negative_fault_end_time_is_an_error_naming_the_key() -> None:
    with pytest.raises(ScenarioError) as e:
        load_scenario(FOUND / "00_panic_negative_on_s.toml")
    assert str(e.value) == "faults.node_switches[0].on_s: -1 is out of range (allowed: a finite number >= 0)"
    err = cli_error(run_cli("validate", FOUND / "00_panic_negative_on_s.toml"))
    assert err.startswith("error: faults.node_switches[0].on_s: ")
    # The same for a link outage's up_s, and for every other fault time.
    base = tomllib.loads((FOUND / "00_panic_negative_on_s.toml").read_text())
    base["faults"] = {}
    for key, value in [
        ("faults.link_outages", [{"a": 0, "b": 1, "down_s": 1.0, "up_s": -1.0}]),
        ("faults.link_outages", [{"a": 0, "b": 1, "down_s": 1.0, "up_s": -1e-12}]),
        ("faults.link_outages", [{"a": 0, "b": 1, "down_s": -1.0}]),
        ("faults.node_switches", [{"node": 1, "off_s": 5.0, "on_s": 1e300}]),
        ("faults.random_link_failures", {"rate_per_s": 1, "mean_duration_s": 1, "start_s": -1}),
    ]:
        with pytest.raises(ScenarioError) as e:
            Scenario(apply_overrides(base, {key: value}))
        assert str(e.value).startswith(key + "[0]." if isinstance(value, list) else key + "."), e.value
        one_clean_line(str(e.value))


# ----------------------------------------------------------------------------- names

HOSTILE_BUT_PRINTABLE = "chain <b>&amp;\"'[x]{y}$z\\;=+-@ <!--<script> =1+2 ümlaut 日本 🙂"


def named(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "duration_s": 1,
        "nodes": {"count": 2},
        "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}],
        "flows": [{"name": name, "kind": "cbr", "src": 0, "dst": 1, "interval_s": 0.1}],
    }


def test_names_allow_printable_text_and_refuse_control_and_format_characters() -> None:
    s = Scenario(named(HOSTILE_BUT_PRINTABLE))
    assert s.name == HOSTILE_BUT_PRINTABLE and s.normalized["flows"][0]["name"] == HOSTILE_BUT_PRINTABLE
    Scenario(named("n" * MAX_NAME_CHARS))
    for bad, where in [("chain\nexec touch PWNED\n#", "U+000A"), ("a\u202eb", "U+202E"), ("a\x1b[2J", "U+001B"), ("a\u2028", "U+2028")]:
        with pytest.raises(ScenarioError) as e:
            Scenario(named(bad))
        assert str(e.value).startswith("name: ") and where in str(e.value) and "allowed: printable Unicode" in str(e.value)
        one_clean_line(str(e.value))
        data = named("ok")
        data["flows"][0]["name"] = bad
        with pytest.raises(ScenarioError) as e:
            Scenario(data)
        assert str(e.value).startswith("flows[0].name: "), e.value
    with pytest.raises(ScenarioError) as e:
        Scenario(named("n" * (MAX_NAME_CHARS + 1)))
    assert "is 201 characters long" in str(e.value)
    one_clean_line(str(e.value))


def test_the_core_refuses_every_control_and_format_character_python_knows() -> None:
    """The core's table of Cf characters covers Python's Unicode database."""
    refused = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp")]
    assert len(refused) > 200
    data = named("ok")
    for c in refused:
        with pytest.raises(ScenarioError, match=f"U\\+{ord(c):04X}"):
            _core.validate(json.dumps({**data, "name": "x" + c}))
    # Printable neighbours, spaces, private use and unassigned code points are names.
    for c in [" ", "\u00a0", "\u3000", "\u00ac", "\u200a", "\u2027", "\u202f", "\ue000", "\U0010fffd", "\u0378"]:
        _core.validate(json.dumps({**data, "name": "x" + c}))


def test_study_and_derived_names_follow_the_rule(tmp_path: Path) -> None:
    scen = named("ok")
    load_study({"name": HOSTILE_BUT_PRINTABLE, "scenario": scen}, base_dir=tmp_path)
    for doc, where in [
        ({"name": "a\nb", "scenario": scen}, "name: "),
        ({"name": "x" * 201, "scenario": scen}, "name: "),
        (
            {"scenario": scen, "grid": {"links[0].delay_ms": [1, 2]},
             "derived": [{"name": "d\u202e", "kind": "difference", "metric": "events", "axis": "links[0].delay_ms", "new": 2, "base": 1}]},
            "derived[0].name: ",
        ),
    ]:
        with pytest.raises(ScenarioError) as e:
            load_study(doc, base_dir=tmp_path)
        assert str(e.value).startswith(where), e.value
        one_clean_line(str(e.value))


# ----------------------------------------------------------------------------- 17: bounded messages


def test_17_messages_quote_an_escaped_bounded_excerpt() -> None:
    with pytest.raises(ScenarioError) as e:
        load_scenario(FOUND / "17_error_message_echo.json")
    assert str(e.value).startswith('routing.protocol: "a\\nb" is not allowed (allowed: "static"'), e.value
    one_clean_line(str(e.value))
    err = cli_error(run_cli("validate", FOUND / "17_error_message_echo.json"))
    assert err.startswith('error: routing.protocol: "a\\nb" is not allowed')


@pytest.mark.parametrize(
    "override",
    [
        {"routing": {"protocol": "x" * 70_000}},
        {"duration_s": "x" * 70_000},
        {"name": "\x1b]0;owned\x07" + "x" * 70_000},
        {"flows[0].transport": "\x1b[2J" + "x" * 70_000},
        {"flows[0].kind": "ftp", "flows[0].interval_s": None, "flows[0].transport": "y" * 70_000},
        {"x" * 70_000: 1},
        {"links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1, "zz\nzz": 1}]},
        {"traffic": {"ns2_text": "\x1b[31m" + "z" * 70_000 + "\n"}},
    ],
)
def test_long_and_hostile_values_give_one_bounded_line(override: dict[str, Any], tmp_path: Path) -> None:
    data = {k: v for k, v in named("ok").items()}
    data = apply_overrides(data, {k: v for k, v in override.items() if v is not None})
    data = json.loads(json.dumps(data))
    if any(v is None for v in override.values()):
        del data["flows"][0]["interval_s"]
    with pytest.raises(ScenarioError) as e:
        Scenario(data)
    one_clean_line(str(e.value))
    assert "…" in str(e.value) or "\\x1b" in str(e.value) or "\\n" in str(e.value), e.value
    f = tmp_path / "s.json"
    f.write_text(json.dumps(data))
    cli_error(run_cli("validate", f))


def test_excerpt_and_quote() -> None:
    assert excerpt("a\nb\x1b\u202e") == "a\\nb\\x1b\\u{202e}"
    assert quote('say "hi"\\') == '"say \\"hi\\"\\\\"'
    assert excerpt("é" * 61) == "é" * 60 + "…"


def test_the_cli_error_line_escapes_what_reaches_it(tmp_path: Path) -> None:
    from manetlab.cli import one_line

    assert one_line("a\nb\tc  d") == "a b c d"
    assert one_line("x\x1b[2Jy\u202ez") == "x\\x1b[2Jy\\u{202e}z"
    assert len(one_line("z" * 100_000)) == 2001
    # A file name with an escape sequence, as the user typed it.
    err = cli_error(run_cli("validate", tmp_path / "\x1b[2Jnope.toml"))
    assert "\\x1b[2Jnope.toml" in err


# ----------------------------------------------------------------------------- 04: files a scenario names


def _mkfifo(path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    os.mkfifo(path)


def test_04_fifo_as_traffic_or_movement_file_fails_at_once(tmp_path: Path) -> None:
    shutil.copy(FOUND / "04_fifo.toml", tmp_path)
    _mkfifo(tmp_path / "04_fifo")
    # Without the fix, open() blocks forever here (only SIGKILL ends it): run_cli's timeout would fire.
    for cmd in ("validate", "run"):
        err = cli_error(run_cli(cmd, tmp_path / "04_fifo.toml", cwd=tmp_path))
        assert err == 'error: traffic.ns2_file: cannot read traffic file "04_fifo": it is a FIFO (named pipe), not a regular file (allowed: regular files only)\n'
    assert not (tmp_path / "results").exists()
    with pytest.raises(ScenarioError, match="FIFO"):
        load_scenario(tmp_path / "04_fifo.toml")
    (tmp_path / "m.toml").write_text('duration_s = 5\n[nodes]\ncount = 3\n[radio]\n[mobility]\nmodel = "ns2_file"\npath = "04_fifo"\n')
    with pytest.raises(ScenarioError, match=r"^mobility\.path: cannot read movement file \"04_fifo\": it is a FIFO"):
        load_scenario(tmp_path / "m.toml")
    # The scenario file itself, and a study's scenario.
    cli_error(run_cli("validate", tmp_path / "04_fifo"))
    (tmp_path / "st.toml").write_text('scenario = "04_fifo"\n')
    err = cli_error(run_cli("study", "status", tmp_path / "st.toml", "--dir", tmp_path / "out"))
    assert "FIFO" in err


def test_devices_and_folders_are_refused_with_one_line(tmp_path: Path) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    err = cli_error(run_cli("validate", "/dev/zero"))
    assert err == "error: (file): cannot read /dev/zero: it is a character device, not a regular file (allowed: regular files only)\n"
    cli_error(run_cli("validate", tmp_path))
    (tmp_path / "st.toml").write_text('scenario = "/dev/zero"\n')
    with pytest.raises(ScenarioError, match="outside the folder"):
        load_study(tmp_path / "st.toml")
    with pytest.raises(ScenarioError, match="character device"):
        load_study(tmp_path / "st.toml", allow_outside=True)
    (tmp_path / "sub").mkdir()
    (tmp_path / "s.toml").write_text('duration_s = 1\n[nodes]\ncount = 2\n[traffic]\nns2_file = "sub"\n')
    with pytest.raises(ScenarioError, match="it is a directory, not a regular file"):
        load_scenario(tmp_path / "s.toml")


def test_scenario_and_study_files_are_capped(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate((1 << 20) + 1)  # sparse
    assert "larger than 1 MB" in cli_error(run_cli("validate", big))
    (tmp_path / "st.toml").write_text('scenario = "big.toml"\n')
    with pytest.raises(ScenarioError, match="larger than 1 MB"):
        load_study(tmp_path / "st.toml")


MOVES = "$node_(0) set X_ 10.0\n$node_(0) set Y_ 20.0\n$node_(1) set X_ 30.0\n$node_(1) set Y_ 20.0\n"
TRAFFIC = (ROOT / "crates/manetlab-core/tests/fixtures/ns2_scene/cbr-3-test").read_text()


def _tree(tmp_path: Path) -> Path:
    """tmp/inside/{s.toml, sub/m.tcl, in-link, out-link}, tmp/outside.tcl."""
    inside = tmp_path / "inside"
    (inside / "sub").mkdir(parents=True)
    (inside / "sub" / "m.tcl").write_text(MOVES)
    (tmp_path / "outside.tcl").write_text(MOVES)
    if hasattr(os, "symlink"):
        os.symlink(inside / "sub" / "m.tcl", inside / "in-link")
        os.symlink(tmp_path / "outside.tcl", inside / "out-link")
    return inside


def _movement_scenario(inside: Path, path: str) -> Path:
    s = inside / "s.toml"
    s.write_text(f'duration_s = 1\n[nodes]\ncount = 2\n[radio]\n[mobility]\nmodel = "ns2_file"\npath = {json.dumps(path)}\n')
    return s


def test_named_files_must_be_inside_the_folder_tree(tmp_path: Path) -> None:
    inside = _tree(tmp_path)
    for ok in ["sub/m.tcl", "./sub/../sub/m.tcl", "in-link", str(inside / "sub" / "m.tcl")]:
        load_scenario(_movement_scenario(inside, ok))
    for out in ["../outside.tcl", "out-link", str(tmp_path / "outside.tcl")]:
        s = _movement_scenario(inside, out)
        with pytest.raises(ScenarioError) as e:
            load_scenario(s)
        assert str(e.value).startswith(f"mobility.path: cannot read movement file {quote(out)}: it is outside the folder of the file that names it"), e.value
        one_clean_line(str(e.value))
        assert "outside the folder" in cli_error(run_cli("validate", s))
        # Allowed explicitly: API and CLI (validate, run).
        assert load_scenario(s, allow_outside=True).normalized["mobility"]["path"] == out
        p = run_cli("validate", s, "--allow-outside")
        assert p.returncode == 0, p.stderr
        # Overrides keep the permission.
        load_scenario(s, allow_outside=True).with_overrides({"seed": 2})
    p = run_cli("run", _movement_scenario(inside, "../outside.tcl"), "--allow-outside", "--out", tmp_path / "r")
    assert p.returncode == 0 and (tmp_path / "r" / "summary.json").is_file(), p.stderr


def test_proc_files_are_refused_and_never_echoed_whole(tmp_path: Path) -> None:
    environ = Path("/proc/self/environ")
    if not environ.exists():
        pytest.skip("no /proc")
    (tmp_path / "s.toml").write_text('duration_s = 5\n[nodes]\ncount = 3\n[traffic]\nns2_file = "/proc/self/environ"\n')
    marker = "MANETLAB_SECRET_" + "x" * 200
    env = {**os.environ, "AAA": marker}
    import subprocess

    def cli(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "manetlab", "validate", str(tmp_path / "s.toml"), *extra], capture_output=True, text=True, env=env, timeout=60)

    err = cli_error(cli())
    assert "outside the folder" in err and "AAA" not in err
    # Even when allowed, at most a bounded, escaped excerpt of the first line shows.
    err = cli_error(cli("--allow-outside"))
    assert marker not in err and "\x00" not in err


def test_a_study_names_its_scenario_inside_its_folder(tmp_path: Path) -> None:
    inside = _tree(tmp_path)
    _movement_scenario(inside, "sub/m.tcl")
    (tmp_path / "outside.toml").write_text((inside / "s.toml").read_text().replace("sub/m.tcl", "inside/sub/m.tcl"))
    (inside / "ok.toml").write_text('scenario = "s.toml"\n')
    assert load_study(inside / "ok.toml").base.normalized["mobility"]["path"] == "sub/m.tcl"
    (inside / "out.toml").write_text('scenario = "../outside.toml"\n')
    with pytest.raises(ScenarioError) as e:
        load_study(inside / "out.toml")
    assert str(e.value).startswith("scenario: cannot read '../outside.toml': it is outside the folder"), e.value
    assert load_study(inside / "out.toml", allow_outside=True).base.source == (tmp_path / "outside.toml").resolve()
    assert "outside the folder" in cli_error(run_cli("study", "status", inside / "out.toml", "--dir", tmp_path / "st"))
    p = run_cli("study", "status", inside / "out.toml", "--dir", tmp_path / "st", "--allow-outside")
    assert p.stderr.startswith("error: no study store at"), p.stderr  # the study loaded: nothing has run yet
    # An inline scenario's files are relative to the study (or base_dir) as before, and inside it.
    doc = {"scenario": tomllib.loads((inside / "s.toml").read_text())}
    load_study(doc, base_dir=inside)
    with pytest.raises(ScenarioError, match="does not exist"):
        load_study(doc, base_dir=tmp_path)
    doc["scenario"]["mobility"]["path"] = "../outside.tcl"
    with pytest.raises(ScenarioError, match="outside the folder"):
        load_study(doc, base_dir=inside)
    load_study(doc, base_dir=inside, allow_outside=True)


def _scenario_files() -> list[Path]:
    files = sorted((ROOT / "examples").glob("*.toml")) + sorted((ROOT / "benchmarks" / "scenarios").glob("*.toml"))
    files += [ROOT / "crates/manetlab-core/tests/fixtures/ns2_scene/ns2_example.toml"]
    return files


@pytest.mark.parametrize("path", _scenario_files(), ids=lambda p: p.name)
def test_shipped_scenarios_and_studies_still_load(path: Path) -> None:
    """Every shipped scenario and study names only files inside its own folder."""
    if "scenario" in tomllib.loads(path.read_text()):
        load_study(path)
    else:
        load_scenario(path)


# ----------------------------------------------------------------------------- the boundary sweep

VALUES = [-1, 0, 1e-300, 1e300, math.nan, math.inf, -math.inf, 2.5]
#: Wall time a sweep run may take before it is stopped (it then proves only that nothing panicked so far).
RUN_CAP_S = 2.0

_RADIO = {
    "duration_s": 1.0,
    "area": {"width_m": 600, "height_m": 300},
    "nodes": {"count": 3, "placement": {"kind": "chain", "spacing_m": 200}},
    "radio": {},
    "mac": {},
    "flows": [
        {"name": "f", "kind": "ftp", "src": 0, "dst": 2, "start_s": 0.1, "stop_s": 0.9, "tcp": {}},
        {"name": "c", "kind": "cbr", "src": 2, "dst": 0, "start_s": 0.1, "stop_s": 0.8, "interval_s": 0.1, "jitter_s": 0.01, "max_packets": 5, "packet_size_bytes": 100},
    ],
}


def _radio(**kw: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(_RADIO)), **kw}


def _variants() -> list[dict[str, Any]]:
    out = []
    for i, (variant, tcp) in enumerate([
        ("vegas", {"vegas_alpha_pkts": 1, "vegas_beta_pkts": 3, "vegas_gamma_pkts": 1}),
        ("abra", {"abra_min_srtt_s": 0.01, "abra_max_srtt_s": 1}),
        ("tcp-ap", {"tcpap_alpha": 0.7, "tcpap_history_samples": 50, "tcpap_span_hops": 4}),
        ("mpr", {"mpr_alpha": 0.5, "mpr_beta": 2}),
        ("elfn", {"elfn_probe_interval_s": 0.5}),
    ]):
        out.append({"name": variant, "kind": "ftp", "src": 0, "dst": 2, "start_s": 0.1, "transport": variant, "port": 6000 + i, "tcp": tcp})
    return out


#: Rich scenarios (wired with RED and faults, AODV + LRED + scripted moves, DSR + random
#: waypoint, DSDV + explicit placement, FRN on a grid, every TCP variant's keys).
BASES: dict[str, dict[str, Any]] = {
    "wired": {
        "duration_s": 1.0,
        "nodes": {"count": 3},
        "queue": {"kind": "red", "limit_pkts": 20},
        "links": [
            {"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1, "queue_limit_pkts": 10, "error_rate": 0.01, "drop_tcp_segments": [3]},
            {"a": 1, "b": 2, "bandwidth_mbps": 1, "delay_ms": 1},
        ],
        "flows": [
            {"name": "f", "kind": "ftp", "src": 0, "dst": 2, "start_s": 0.1, "stop_s": 0.9, "file_bytes": 20000, "port": 5000, "tcp": {}},
            {"name": "c", "kind": "cbr", "src": 2, "dst": 0, "start_s": 0.1, "rate_kbps": 64, "packet_size_bytes": 200},
        ],
        "outputs": {"series": True, "series_interval_s": 0.1},
        "faults": {
            "node_switches": [{"node": 1, "off_s": 0.3, "on_s": 0.4}],
            "link_outages": [{"a": 0, "b": 1, "down_s": 0.5, "up_s": 0.6}],
            "random_link_failures": {"rate_per_s": 0.5, "mean_duration_s": 0.1, "start_s": 0.2, "links": [[1, 2]]},
        },
    },
    "variants": {
        "duration_s": 1.0,
        "nodes": {"count": 3},
        "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}, {"a": 1, "b": 2, "bandwidth_mbps": 1, "delay_ms": 1}],
        "flows": _variants(),
    },
    "aodv": _radio(
        routing={"protocol": "aodv", "aodv": {}},
        queue={"kind": "lred"},
        mobility={"model": "scripted", "nodes": [{"node": 1, "moves": [{"time_s": 0.2, "dest_m": [210, 20], "speed_mps": 5}]}]},
    ),
    "dsr": _radio(routing={"protocol": "dsr", "dsr": {}}, nodes={"count": 3}, mobility={"model": "random_waypoint", "max_speed_mps": 5, "min_speed_mps": 1, "pause_s": 0.5}),
    "dsdv": _radio(routing={"protocol": "dsdv", "dsdv": {}}, nodes={"count": 3, "placement": {"kind": "explicit", "positions_m": [[0, 0], [200, 0], [400, 0]]}}),
    "frn": _radio(routing={"protocol": "frn", "frn": {}}, mac={"kind": "frn", "frn": {}}, nodes={"count": 4, "placement": {"kind": "grid", "columns": 2, "spacing_m": 200}}),
}

#: Words of the core's type errors for keys that do not take a number.
_NOT_NUMERIC = ("expected a string", "expected true or false", "expected a table", "expected a list", 'is not allowed (allowed: "', "variant")


def _allowed_keys(data: dict[str, Any], table: str) -> list[str]:
    """Every key the core accepts in `table`, read from its unknown-key message."""
    probe = f"{table}.zz_probe" if table else "zz_probe"
    try:
        Scenario(apply_overrides(data, {probe: 1}))
    except ScenarioError as e:
        m = re.search(r"unknown key \(allowed here: (.*)\)$", str(e))
        if m and m.group(1) != "none":
            return [k.strip() for k in re.split(r",\s*|\s+or\s+", m.group(1))]
    return []


def _takes_a_number(data: dict[str, Any], path: str) -> bool:
    try:
        Scenario(apply_overrides(data, {path: 1.5}))
    except ScenarioError as e:
        return not (str(e).startswith(path + ":") and any(w in str(e) for w in _NOT_NUMERIC))
    return True


def numeric_keys(data: dict[str, Any], normalized: Any, table: str = "") -> list[str]:
    """Key paths of every numeric leaf: those the normalised scenario holds (up to
    three entries of each list) and those the core accepts but left out or null."""
    if isinstance(normalized, list):
        out = []
        for i, x in enumerate(normalized[:3]):
            p = f"{table}[{i}]"
            if isinstance(x, (dict, list)):
                out += numeric_keys(data, x, p)
            elif isinstance(x, (int, float)) and not isinstance(x, bool):
                out.append(p)
        return out
    out = []
    for k in sorted(set(normalized) | set(_allowed_keys(data, table))):
        p = f"{table}.{k}" if table else k
        v = normalized.get(k)
        if isinstance(v, (dict, list)):
            out += numeric_keys(data, v, p)
        elif (v is None or isinstance(v, (int, float))) and not isinstance(v, bool) and _takes_a_number(data, p):
            out.append(p)
    return out


class _Stop(Exception):
    pass


def _capped_run(s: Scenario, out: str) -> None:
    """Run `s` for at most RUN_CAP_S of wall time (partial results are kept, not checked)."""
    t0 = time.monotonic()

    def progress(sim_s: float, events: int) -> None:
        if time.monotonic() - t0 > RUN_CAP_S:
            raise _Stop()

    _core.run(s.to_json(), out, progress, True)


def test_boundary_sweep_of_every_numeric_key() -> None:
    """Each numeric key of each base at each boundary value: a clean one-line
    ScenarioError, or a valid scenario that then runs (briefly) without a panic."""
    problems: list[str] = []
    counts = {"keys": 0, "rejected": 0, "ran": 0}
    for base_name, base in BASES.items():
        keys = numeric_keys(base, Scenario(base).normalized)
        assert len(keys) > 30, (base_name, keys)
        counts["keys"] += len(keys)
        for key in keys:
            for v in VALUES:
                where = f"{base_name}: {key} = {v!r}"
                try:
                    s = Scenario(apply_overrides(base, {key: v}))
                except ScenarioError as e:
                    counts["rejected"] += 1
                    msg = str(e)
                    if "\n" in msg or len(msg) > 300 or re.search(r"\d{25}", msg):
                        problems.append(f"{where}: message not one short line: {msg[:300]!r}")
                    continue
                except BaseException as e:  # noqa: BLE001 - a PanicException is a BaseException
                    problems.append(f"{where}: validation raised {type(e).__name__}: {str(e)[:200]}")
                    continue
                counts["ran"] += 1
                try:
                    with tempfile.TemporaryDirectory() as out:
                        _capped_run(s, out)
                except ScenarioError:
                    pass
                except BaseException as e:  # noqa: BLE001
                    problems.append(f"{where}: run raised {type(e).__name__}: {str(e)[:200]}")
    assert not problems, "\n".join(problems)
    assert counts["keys"] > 300 and counts["rejected"] > 1000 and counts["ran"] > 200, counts


@pytest.mark.parametrize(
    "key, value",
    [
        ("duration_s", "nan"),
        ("duration_s", "-inf"),
        ("links[0].delay_ms", "1e300"),
        ("links[0].bandwidth_mbps", "1e-300"),
        ("nodes.count", "2.5"),
        ("flows[0].interval_s", "-1"),
        ("flows[0].start_s", "inf"),
        ("seed", "-1"),
    ],
)
def test_boundary_sample_through_the_cli(key: str, value: str, tmp_path: Path) -> None:
    s = tmp_path / "s.json"
    s.write_text(json.dumps(named("ok")))
    err = cli_error(run_cli("validate", s, "--set", f"{key}={value}"))
    assert err.startswith(f"error: {key}: "), err


def test_reproductions_still_load() -> None:
    """Every paper's (quick) study is inline and names no file: it validates as before."""
    from manetlab.reproduce import papers

    for name, paper in papers().items():
        spec = load_study(paper.study(True), seed_hook=paper.seed_hook())
        assert spec.cells, name
