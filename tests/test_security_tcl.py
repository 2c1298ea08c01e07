"""Issue 34: text from a scenario never runs as Tcl (export-ns2, crosscheck, ns run.tcl).

* `tcl_word` / `tcl_comment` (manetlab.ns2.tcl) against Tcl's parsing rules, with an
  independent decoder written here from the Tcl(n) manual (rules 6, 9, 10), over fixed
  hostile strings and generated ones;
* exports of scenarios with hostile names (scenario name, flow names, the file's path),
  with validation bypassed (names put into the normalised scenario after validation)
  and through validation: every line holding the name is a one-line comment, the rest
  of the script is the one a plain name gives;
* with ns-2 installed (skipped cleanly without it): Tcl itself reads back every word
  exactly, runs the command after every comment, and `ns run.tcl` of each hostile
  export and `manetlab crosscheck` of reproducer 01 create no marker file and still
  run the scenario;
* terminal output and error messages of export / crosscheck are one line, escaped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from manetlab.ns2 import Ns2Unsupported, crosscheck, export_ns2
from manetlab.ns2.crosscheck import Ns2RunFailed
from manetlab.ns2.export import _plan, _tcl, ns2_seed
from manetlab.ns2.tcl import BARE_CHARS, tcl_comment, tcl_word
from manetlab.scenario import Scenario, ScenarioError
from manetlab.textsafe import excerpt, printable

REPO = Path(__file__).resolve().parents[1]
FOUND = REPO / "tests" / "fixtures" / "robustness-found-2026-11-29"
REPRO_01 = FOUND / "01_tcl_injection_crosscheck.toml"
NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 (ns) is not installed")
ENV = {**os.environ, "PYTHONPATH": str(REPO / "python") + os.pathsep + os.environ.get("PYTHONPATH", "")}

#: Strings that would run or substitute something if written raw into Tcl ("M" is
#: replaced by a marker file's path in the tests that run ns).
HOSTILE = [
    "[exec touch M]",
    "x [exec touch M] y",
    "$env(HOME)",
    "${env(HOME)}",
    '"',
    '"[exec touch M]"',
    "{",
    "}",
    "}{",
    "{[exec touch M]}",
    "}\n[exec touch M]\n{",
    "\\",
    "ends with a backslash\\",
    "two\\\\",
    "\\\nexec touch M",
    "a;exec touch M",
    "#",
    "# [exec touch M]",
    "chain\nexec touch M\n#",
    "cr\rexec touch M\r#",
    "\n",
    "\r\n",
    "tab\there",
    "nul\x00byte",
    "eof\x1achar: Tcl's source stops at ^Z",
    "esc\x1b[31mred",
    "bidi \u202eevil\u202c",
    "line\u2028sep\u2029para",
    "Ünïcödé 名前 😀 \U0001f600",
    "\\u0041 \\x41 \\n",
    "",
    " ",
    "a b",
    "plain_name-1.0",
]
#: The hostile strings a validated name may hold (printable, no control or format characters).
PRINTABLE_HOSTILE = [
    h for h in HOSTILE if h and all(unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp") for c in h)
]


# ----------------------------------------------------------------------------- a Tcl decoder


def _backslash(s: str, i: int) -> tuple[str, int]:
    """Tcl rule [9]: the backslash sequence at s[i] -> (its value, index after it)."""
    assert s[i] == "\\"
    c = s[i + 1]  # a lone trailing backslash is an error for our writers
    simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    if c in simple:
        return simple[c], i + 2
    if c == "\n":
        j = i + 2
        while j < len(s) and s[j] in " \t":
            j += 1
        return " ", j
    if c in "xuU":
        most = {"x": 2, "u": 4, "U": 8}[c]
        j = i + 2
        while j < len(s) and j < i + 2 + most and s[j] in "0123456789abcdefABCDEF":
            j += 1
        if j == i + 2:
            return c, j
        return chr(int(s[i + 2 : j], 16)), j
    if c in "01234567":
        j = i + 1
        while j < len(s) and j < i + 4 and s[j] in "01234567":
            j += 1
        return chr(int(s[i + 1 : j], 8) & 0xFF), j
    return c, i + 2


def _join_surrogates(s: str) -> str:
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le")


def decode_word(w: str) -> str:
    """The value of `w` as one whole Tcl word standing alone, which must need no
    substitution: AssertionError for a word that would substitute a variable or a
    command, end a command, or not be a single word."""
    assert w.isascii(), w
    if w.startswith("{"):
        depth, i = 0, 0
        while True:
            c = w[i]
            if c == "\\":
                i += 2
                continue
            depth += {"{": 1, "}": -1}.get(c, 0)
            if depth == 0:
                break
            i += 1
        assert i == len(w) - 1, f"text after the closing brace: {w!r}"
        body = w[1:-1]
        assert "\\\n" not in body
        return body
    assert w and w[0] not in '"#', w
    out, i = [], 0
    while i < len(w):
        c = w[i]
        if c == "\\":
            v, i = _backslash(w, i)
            out.append(v)
            continue
        assert c not in "$[];\" \t\n\r\v\f{}", f"unescaped {c!r} in {w!r}"
        out.append(c)
        i += 1
    return _join_surrogates("".join(out))


def comment_body(line: str) -> str:
    """The text of a one-line Tcl comment as tcl_comment writes it; AssertionError when
    the line would not be one whole comment (rule [10])."""
    assert line.isascii() and line.startswith("# "), line
    assert "\n" not in line and "\r" not in line
    trailing = len(line) - len(line.rstrip("\\"))
    assert trailing % 2 == 0, f"ends in an odd run of backslashes: {line!r}"
    body = line[2:]
    out, i = [], 0
    while i < len(body):
        if body[i] == "\\":
            v, i = _backslash(body, i)
            out.append(v)
        else:
            assert body[i] not in "{}", f"unescaped brace in {line!r}"
            out.append(body[i])
            i += 1
    return _join_surrogates("".join(out))


# ----------------------------------------------------------------------------- quoting: unit


@pytest.mark.parametrize("s", HOSTILE)
def test_tcl_word_reads_back_exactly(s: str) -> None:
    w = tcl_word(s)
    assert decode_word(w) == s
    assert "\n" not in w and "\r" not in w


@pytest.mark.parametrize("s", HOSTILE)
def test_tcl_comment_is_one_whole_line(s: str) -> None:
    assert comment_body(tcl_comment(s)) == s


def test_tcl_word_forms() -> None:
    assert tcl_word("trace.tr") == "trace.tr"
    assert tcl_word("movement.tcl") == "movement.tcl"
    assert tcl_word("") == "{}"
    assert tcl_word("a b") == "{a b}"
    assert tcl_word("[exec touch M]") == "{[exec touch M]}"  # nothing is substituted in braces
    assert tcl_word("$env(HOME)") == "{$env(HOME)}"
    assert tcl_word("}{") == "\\}\\{"  # braces that do not nest: escaped
    assert tcl_word("x\\") == "x\\\\"  # a backslash: never braced
    assert tcl_word("a\nb") == "a\\nb"
    assert tcl_word("é") == "\\u00e9"
    assert tcl_word("😀") == "\\ud83d\\ude00"
    assert tcl_word("\x01a") == "\\u0001a"  # four digits: the 'a' is not read into the escape
    assert tcl_comment("a\\") == "# a\\\\"
    assert tcl_comment("x\ny") == "# x\\ny"
    assert tcl_comment("{}") == "# \\{\\}"
    assert set(BARE_CHARS) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:+-,=@%")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40))
def test_quoting_reads_back_for_any_text(s: str) -> None:
    assert decode_word(tcl_word(s)) == s
    assert comment_body(tcl_comment(s)) == s


def test_printable_and_one_line() -> None:
    assert printable("plain [x] {y} $z \\ é 😀") == "plain [x] {y} $z \\ é 😀"
    assert printable("a\nb\rc\td\x1b[0m\u202e\u2028\x00") == "a\\nb\\rc\\td\\x1b[0m\\u{202e}\\u{2028}\\x00"
    assert excerpt("x" * 500, 50) == "x" * 50 + "…"
    assert excerpt("ab\ncd", 4) == "ab\\nc…"
    assert excerpt("ok", 50) == "ok"
    for s in HOSTILE:
        t = excerpt(s, 30)
        assert t.isprintable() and len(t) <= 30 * len("\\u{10ffff}") + 1  # 30 characters, each escaped at most this long


# ----------------------------------------------------------------------------- exports


def _base(cbr_name: str = "cbr-flow", ftp_name: str = "ftp-flow", name: str = "plain") -> dict:
    return {
        "name": name,
        "duration_s": 3.0,
        "nodes": {"count": 3, "placement": {"kind": "chain", "spacing_m": 200.0}},
        "radio": {},
        "routing": {"protocol": "aodv"},
        "flows": [
            {"name": cbr_name, "kind": "cbr", "src": 0, "dst": 2, "rate_kbps": 64.0},
            {"name": ftp_name, "kind": "ftp", "src": 2, "dst": 0, "transport": "newreno", "start_s": 0.5},
        ],
    }


@pytest.fixture(scope="module")
def movement(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base scenario's movement file (manetlab's writer), shared by the exports."""
    d = tmp_path_factory.mktemp("mv")
    export_ns2(_base(), d)
    return d / "movement.tcl"


def _hostile_scenario(name: str, flow_name: str, source: str | None) -> Scenario:
    """A validated scenario whose names are replaced after validation (what a core that
    let anything through would hand the exporter)."""
    s = Scenario(_base())
    s.normalized["name"] = name
    for f in s.normalized["flows"]:
        f["name"] = flow_name
    s.source = Path(source) if source is not None else None
    return s


def _script_lines(s: Scenario) -> list[str]:
    return _tcl(s, _plan(s), "old", ns2_seed(s.seed)).split("\n")


def _check_against_plain(got: list[str], want: list[str], names: dict[str, str]) -> None:
    """A script `got` of hostile names is the script `want` of placeholder names line
    for line, except the lines naming the scenario and the flows: one-line comments
    whose text is the placeholder line's with each placeholder replaced by its name."""
    assert len(got) == len(want)
    named = 0
    for w, g in zip(want, got):
        if any(k in w for k in names):
            named += 1
            expect = comment_body(w)
            for k, v in names.items():
                expect = expect.replace(k, v)
            assert comment_body(g) == expect  # one whole comment line, holding the exact text
        else:
            assert g == w
    assert named == 3  # the scenario's line and one per flow
    assert not any(line.lstrip().startswith("exec") for line in got)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_names_bypassing_validation_are_comments(tmp_path: Path, movement: Path, text: str) -> None:
    name, flow = text or "x", text or "f"  # an empty name is no name: the label or flow<i> is shown
    s = _hostile_scenario(name, flow, f"/scen/{text}.toml")
    plain = _hostile_scenario("NAME0", "FLOW0", "/scen/SRC0.toml")
    _check_against_plain(_script_lines(s), _script_lines(plain), {"NAME0": name, "FLOW0": flow, "SRC0": text})
    e = export_ns2(s, tmp_path / "x", movement_file=movement)
    script = e.script.read_text(encoding="ascii")  # ASCII only
    assert script.split("\n") == _script_lines(s)
    meta = json.loads(e.flows_json.read_text(encoding="utf-8"))
    assert [f["name"] for f in meta["flows"]] == [flow, flow]  # data, exact, JSON-escaped
    assert meta["scenario"] == name
    assert e.movement.read_bytes() == movement.read_bytes()


@pytest.mark.parametrize("text", PRINTABLE_HOSTILE)
def test_names_that_pass_validation(tmp_path: Path, text: str) -> None:
    e = export_ns2(_base(cbr_name=text, ftp_name=text + "2", name=text), tmp_path / "h")
    p = export_ns2(_base(cbr_name="FLOW0", ftp_name="FLOW02", name="NAME0"), tmp_path / "p")
    got = e.script.read_text(encoding="ascii").split("\n")
    want = p.script.read_text(encoding="ascii").split("\n")
    _check_against_plain(got, want, {"NAME0": text, "FLOW0": text})
    meta = json.loads(e.flows_json.read_text(encoding="utf-8"))
    assert [f["name"] for f in meta["flows"]] == [text, text + "2"]


def test_movement_file_must_be_manetlabs(tmp_path: Path, movement: Path) -> None:
    """A movement file named by the caller is sourced by run.tcl: only lines manetlab's
    writer writes are accepted."""
    good = movement.read_text()
    for bad in (
        good + "exec touch M\n",
        good + "# a comment that continues \\\nexec touch M\n",
        good + '$ns_ at 1.0 "[exec touch M]"\n',
        good + "$node_(0) set X_ [exec touch M]\n",
        good.replace("\n", "\r\n"),
    ):
        f = tmp_path / "m.tcl"
        f.write_text(bad)
        with pytest.raises(Ns2Unsupported, match=r"^movement_file: .*line \d+ is not a line manetlab's movement writer writes") as ei:
            export_ns2(_base(), tmp_path / "out", movement_file=f)
        assert str(ei.value).isprintable()
    assert not (tmp_path / "out").exists()  # refused before anything is written
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(Ns2Unsupported, match="is not a regular file"):
        export_ns2(_base(), tmp_path / "out", movement_file=fifo)  # refused, not blocked on
    with pytest.raises(Ns2Unsupported, match="is not a regular file|Is a directory"):
        export_ns2(_base(), tmp_path / "out", movement_file=tmp_path)


def test_refusals_quote_values_escaped() -> None:
    s = Scenario(_base())
    s.normalized["flows"][1]["transport"] = "x\n" + "y" * 500
    with pytest.raises(Ns2Unsupported) as ei:
        _plan(s)
    msg = str(ei.value)
    assert msg.startswith('flows[1].transport: "x\\ny') and msg.isprintable() and len(msg) < 200


def test_ns_failure_message_is_one_escaped_line(tmp_path: Path) -> None:
    """What ns-2 prints on failure goes into Ns2RunFailed bounded and escaped (a fake
    `ns` that prints control characters and fails)."""
    fake = tmp_path / "fake-ns"
    fake.write_text("#!/bin/sh\nprintf 'a\\033[31mred\\tx\\n%0300d\\nlast\\007\\n' 0\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(Ns2RunFailed) as ei:
        crosscheck(_base(), seeds="1", ns=str(fake))
    msg = str(ei.value)
    assert msg.isprintable(), msg
    assert "status 3" in msg and "\\x1b[31mred\\tx" in msg and "last\\x07" in msg
    assert len(msg) < 900


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "manetlab", *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)


def _assert_clean_outcome(p: subprocess.CompletedProcess[str]) -> None:
    """Reproducer 01's accepted outcomes: the run (exit 0) with its name escaped on the
    terminal, or - once names with control characters are refused - one error line."""
    if p.returncode == 0:
        assert all(line.isprintable() for line in p.stdout.splitlines()), p.stdout
        assert "chain\\nexec touch PWNED_BY_SCENARIO\\n#" in p.stdout
    else:
        assert p.returncode == 2, p.stderr
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: name") and lines[0].isprintable(), p.stderr


def test_repro01_export_ns2_cli(tmp_path: Path) -> None:
    shutil.copy(REPRO_01, tmp_path / "s.toml")
    p = _cli(["export-ns2", "s.toml", "--out", "out"], tmp_path)
    _assert_clean_outcome(p)
    if p.returncode == 0:
        assert len(p.stdout.splitlines()) == 2
        lines = (tmp_path / "out" / "run.tcl").read_text(encoding="ascii").split("\n")
        assert comment_body(lines[1]).startswith("scenario: chain\nexec touch PWNED_BY_SCENARIO\n#")
        assert not any(line.startswith("exec") for line in lines)
    assert not list(tmp_path.rglob("PWNED_BY_SCENARIO"))


# ----------------------------------------------------------------------------- through ns-2


def _run_tcl(script: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    (cwd / "t.tcl").write_text(script, encoding="ascii")
    return subprocess.run([NS, "t.tcl"], cwd=cwd, capture_output=True, timeout=60)


@needs_ns
def test_tcl_reads_every_word_back_exactly(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    texts = [h.replace("M", str(marker)) for h in HOSTILE] + ["\x7f\x80\xff\u0100\uffff", "\U00010000\U0010fffd"]
    lines = []
    for i, t in enumerate(texts):
        lines += [
            f"set x {tcl_word(t)}",
            f"set fd [open {tcl_word(f'out {i}.bin')} w]",  # a file name that needs quoting
            "fconfigure $fd -translation binary",
            "puts -nonewline $fd [encoding convertto utf-8 $x]",
            "close $fd",
        ]
    p = _run_tcl("\n".join(lines) + "\n", tmp_path)
    assert p.returncode == 0, p.stderr
    for i, t in enumerate(texts):
        assert (tmp_path / f"out {i}.bin").read_bytes() == t.encode("utf-8"), t
    assert not marker.exists()


@needs_ns
def test_tcl_ends_every_comment_on_its_line(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    texts = [h.replace("M", str(marker)) for h in HOSTILE]
    body = ["set n 0"]
    for t in texts:
        body += [tcl_comment(t), "incr n"]
    # The same comments inside a braced body (a proc), where a comment's braces count.
    proc = ["proc p {} {", "    set k 0"] + [f"    {tcl_comment(t)}\n    incr k" for t in texts] + ["    return $k", "}"]
    script = "\n".join(body + proc + ["set fd [open count.txt w]", "puts $fd \"$n [p]\"", "close $fd"]) + "\n"
    p = _run_tcl(script, tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "count.txt").read_text().split() == [str(len(texts))] * 2
    assert not marker.exists()


@needs_ns
@pytest.mark.parametrize(
    "text",
    [
        "[exec touch M]",
        "chain\nexec touch M\n#",
        "ends with a backslash\\",
        "\\\nexec touch M",
        "}\n[exec touch M]\n{",
        "$env(HOME) ${env(HOME)} \"[exec touch M]\" {[exec touch M]}",
        "cr\rexec touch M\r#",  # source reads CR as a newline
        "eof\x1a",  # source stops reading at ^Z
    ],
)
def test_ns_runs_hostile_exports_without_running_the_names(tmp_path: Path, movement: Path, text: str) -> None:
    marker = tmp_path / "MARKER"
    t = text.replace("M", str(marker))
    s = _hostile_scenario(t, t, str(tmp_path / t))
    out = tmp_path / "ns"
    export_ns2(s, out, movement_file=movement)
    p = subprocess.run([NS, "run.tcl"], cwd=out, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    assert (out / "trace.tr").stat().st_size > 0
    assert len((out / "ports.txt").read_text().splitlines()) == 2
    assert not marker.exists() and not list(tmp_path.rglob("MARKER"))


@needs_ns
def test_repro01_crosscheck_cli(tmp_path: Path) -> None:
    shutil.copy(REPRO_01, tmp_path / "s.toml")
    p = _cli(["crosscheck", "s.toml", "--seeds", "1-2", "--keep", "keep"], tmp_path)
    _assert_clean_outcome(p)
    if p.returncode == 0:
        assert (tmp_path / "keep" / "seed1" / "ports.txt").exists() and (tmp_path / "keep" / "seed2" / "trace.tr").exists()
        assert "cbr_pdr" in p.stdout
    assert not list(tmp_path.rglob("PWNED_BY_SCENARIO"))


@needs_ns
def test_crosscheck_with_printable_hostile_names(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    name = f"[exec touch {marker}] $env(HOME) \"{{\\ ;#"
    df = crosscheck(_base(cbr_name=name, ftp_name=name + "\\", name=name + "\\"), seeds="1", keep_dir=tmp_path / "keep")
    assert set(df["metric"]) >= {"cbr_pdr", "tcp_goodput_kbps"}
    assert not df.attrs["failed"]
    assert not marker.exists() and not list(tmp_path.rglob("MARKER"))


def test_validation_outcome_for_control_characters(tmp_path: Path) -> None:
    """Independent of the core's name rule: a name with control characters is either
    refused with one ScenarioError line naming `name`, or exported safely."""
    try:
        e = export_ns2(_base(name="a\nexec touch M\n#"), tmp_path)
    except ScenarioError as err:
        assert str(err).startswith("name") and "\n" not in str(err)
        return
    lines = e.script.read_text(encoding="ascii").split("\n")
    assert comment_body(lines[1]).startswith("scenario: a\nexec touch M\n#")
    assert not any(re.match(r"\s*exec", line) for line in lines)


def test_export_replaces_planted_symlinks_without_following_them(tmp_path: Path, movement: Path) -> None:
    """A symlink under a name export writes (or ns-2 writes: trace.tr, ports.txt) is
    removed, never written through."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    names = ("run.tcl", "movement.tcl", "flows.json", "trace.tr", "ports.txt")
    for name in names:
        (out / name).symlink_to(victim)
    e = export_ns2(_base(), out, movement_file=movement)
    assert victim.read_text() == "keep me\n"
    assert not any((out / n).is_symlink() for n in names)
    assert e.script.read_text().startswith("# ns-2.35 script")
    if NS is not None:
        p = subprocess.run([NS, "run.tcl"], cwd=out, capture_output=True, timeout=120)
        assert p.returncode == 0 and (out / "trace.tr").stat().st_size > 0
        assert victim.read_text() == "keep me\n"
