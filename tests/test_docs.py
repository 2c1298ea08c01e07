"""The docs tell the truth: their commands run and their stated values are the code's.

**Commands.** Every line of a fenced ```sh / ```bash / ```shell / ```console block
in README.md and docs/*.md that invokes ``manetlab``, ``python -m manetlab…`` or
``make`` is collected (a ``$ `` prompt is dropped, ``\\`` continuations joined,
``# comments`` stripped). Untagged blocks are synopses (``manetlab run SCENARIO
[--seed N]``) and are not run; other programs' lines (``cd``, ``ns``, ``dask``,
``pip``) are not run either. Then:

* every ``make X`` names a target of the Makefile (not run: ``make test`` is the suite);
* every ``manetlab`` line parses with the CLI's own argument parser, and a
  ``python -m manetlab.X`` line names an existing module;
* each document's ``manetlab`` lines run, in document order (a ``run`` then a ``plot``
  of its output), in a temporary folder of that document holding copies of
  ``examples/`` and ``benchmarks/scenarios/``, each bounded in time, exit status 0.

A line that cannot run as written here says so in the document, in an HTML
comment directly above its block (invisible when rendered, visible in the source),
each with its reason in parentheses:

    <!-- docs-test: skip `PREFIX` (REASON) -->              not run (listed as a skipped test)
    <!-- docs-test: add `ARGS` to `PREFIX` (REASON) -->     run with ARGS appended (later options win)
    <!-- docs-test: needs `PROGRAM` for `PREFIX` (REASON) -->  run only when PROGRAM is on PATH
    <!-- docs-test: edit `FILE` `KEY = VALUE` (REASON) -->  the copy of FILE gets this top-level key

PREFIX selects the block's lines that start with it. A marker that selects no line,
or that stands anywhere but directly above a block, fails the test.

**Stated values.** Ports, TTLs, sizes and defaults the docs state (tables of
docs/scenarios.md, docs/metrics.md, docs/animate.md, docs/wireless.md, docs/tcp.md;
the TTL paragraph of docs/scenarios.md) are read from the docs' text and compared with what short runs
of the core do (traces, pcap files, summaries). Tables are found by their section
heading and read by column name, so columns may be reordered or regenerated.
Every plain default of the parameter tables of docs/scenarios.md `[mac]`,
docs/wireless.md `[radio]`, `[mac]`, `[queue]` and docs/tcp.md `flows[].tcp` is also
checked generically: a run that sets the key to the stated value equals the run that
leaves it out (in the mode the row applies to), in a run where most of them matter.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import dpkt
import pytest

import manetlab
from manetlab.cli import _parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGS = {"sh", "bash", "shell", "console"}
#: Longest any one documented command may take here (the slowest, `study results
#: --figures`, takes about 12 s on a loaded 2-core machine).
LINE_TIMEOUT_S = 120

MARKER = re.compile(r"^[ \t]*<!--\s*docs-test:(.*?)-->", re.S | re.M)  # at the start of a line (a mention in text is no marker)


# ---------------------------------------------------------------- collecting


@dataclass
class Marker:
    doc: str
    line: int
    action: str  # skip | add | needs | edit
    args: list[str]  # the backticked words
    reason: str
    used: bool = False


@dataclass
class Command:
    doc: str
    line: int
    text: str  # as written, comments stripped, whitespace collapsed
    argv: list[str]
    skip: str | None = None  # the reason, if not run
    needs: list[str] = field(default_factory=list)
    add: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


@dataclass
class Block:
    doc: str
    line: int  # of the opening fence
    lang: str
    lines: list[tuple[int, str]]
    markers: list[Marker]


def _parse_marker(doc: str, line: int, body: str) -> Marker:
    words = re.findall(r"`([^`]*)`", body)
    action = body.strip().split(None, 1)[0] if body.strip() else ""
    rest = body[body.rfind("`") + 1 :] if "`" in body else ""
    m = re.fullmatch(r"\s*\((.+)\)\s*", rest, re.S)
    expected = {"skip": 1, "add": 2, "needs": 2, "edit": 2}
    if action not in expected or len(words) != expected[action] or not m:
        raise AssertionError(
            f"{doc}:{line}: malformed docs-test marker {body.strip()!r} (forms: skip `PREFIX` (REASON); add `ARGS` to `PREFIX` (REASON); "
            "needs `PROGRAM` for `PREFIX` (REASON); edit `FILE` `KEY = VALUE` (REASON))"
        )
    return Marker(doc, line, action, words, " ".join(m.group(1).split()))


def blocks(path: Path) -> tuple[list[Block], list[Marker]]:
    """The fenced blocks of `path` with the markers directly above each, and every marker of the file."""
    doc = str(path.relative_to(ROOT))
    lines = path.read_text(encoding="utf-8").split("\n")
    all_markers: list[Marker] = []
    for m in MARKER.finditer("\n".join(lines)):
        all_markers.append(_parse_marker(doc, "\n".join(lines).count("\n", 0, m.start()) + 1, m.group(1)))
    by_line = {mk.line: mk for mk in all_markers}
    out: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)(```+)\s*(\S*)", lines[i])
        if not fence:
            i += 1
            continue
        ticks = fence.group(2)
        start = i
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        above: list[Marker] = []
        j = start - 1
        while j >= 0 and (not lines[j].strip() or (j + 1) in by_line):
            if (j + 1) in by_line:
                above.append(by_line[j + 1])
            j -= 1
        out.append(Block(doc, start + 1, fence.group(3).lower(), body, above[::-1]))
    return out, all_markers


def shell_lines(block: Block) -> Iterator[tuple[int, str]]:
    """Logical lines: continuations joined, console prompts dropped, comment-only lines skipped."""
    pending: list[str] = []
    first = 0
    for n, raw in block.lines:
        text = raw.strip()
        if block.lang == "console":
            if not text.startswith("$ ") and not pending:
                continue  # output, not a command
            text = text.removeprefix("$ ")
        if not pending:
            first = n
        if text.endswith("\\"):
            pending.append(text[:-1])
            continue
        pending.append(text)
        joined = " ".join(pending)
        pending = []
        if joined and not joined.startswith("#"):
            yield first, joined


def _invokes(argv: list[str]) -> str | None:
    if argv[:1] == ["manetlab"]:
        return "manetlab"
    if argv[:2] == ["python", "-m"] and len(argv) > 2 and (argv[2] == "manetlab" or argv[2].startswith("manetlab.")):
        return argv[2]
    if argv[:1] == ["make"]:
        return "make"
    return None


def collect() -> tuple[list[Command], list[Marker]]:
    """Every collected command of the docs, markers applied, and every marker."""
    commands: list[Command] = []
    markers: list[Marker] = []
    for path in DOCS:
        bs, ms = blocks(path)
        markers += ms
        for b in bs:
            if b.lang not in SHELL_LANGS:
                continue
            for n, text in shell_lines(b):
                argv = shlex.split(text, comments=True)
                if not argv or _invokes(argv) is None:
                    continue
                c = Command(b.doc, n, " ".join(argv), argv)
                for mk in b.markers:
                    prefix = mk.args[-1]
                    if mk.action == "edit" or not c.text.startswith(prefix):
                        continue
                    mk.used = True
                    if mk.action == "skip":
                        c.skip = mk.reason
                    elif mk.action == "add":
                        c.add += shlex.split(mk.args[0])
                    elif mk.action == "needs":
                        c.needs.append(mk.args[0])
                commands.append(c)
            for mk in b.markers:
                if mk.action == "edit":
                    mk.used = True
    return commands, markers


COMMANDS, MARKERS = collect()
CLI_LINES = [c for c in COMMANDS if _invokes(c.argv) != "make"]


def test_every_marker_stands_above_a_block_and_selects_a_line():
    attached = {(b.doc, mk.line) for path in DOCS for b in blocks(path)[0] for mk in b.markers}
    _, markers = collect()
    assert markers, "the docs carry docs-test markers (README.md, docs/studies.md, ...): none found"
    for mk in markers:
        assert (mk.doc, mk.line) in attached, f"{mk.doc}:{mk.line}: docs-test marker not directly above a fenced block"
        assert mk.used, f"{mk.doc}:{mk.line}: docs-test marker {mk.action} `{mk.args[-1]}` selects no line of its block"


def test_the_docs_have_commands_to_check():
    # The collection itself is under test: a change of fence style must not silently empty it.
    docs = {c.doc for c in CLI_LINES}
    assert {"README.md", "docs/studies.md", "docs/python.md", "docs/animate.md", "docs/ns2.md", "docs/reproduce.md"} <= docs
    assert len(CLI_LINES) >= 30
    assert sum(1 for c in COMMANDS if c.argv[0] == "make") >= 3


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([A-Za-z0-9][\w.-]*)\s*:(?!=)", text, re.M)}


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.argv[0] == "make"], ids=lambda c: c.where)
def test_make_lines_name_makefile_targets(cmd: Command):
    targets = [a for a in cmd.argv[1:] if not a.startswith("-") and "=" not in a]
    assert targets, f"{cmd.where}: `{cmd.text}` names no target (the default target is implicit; name it)"
    missing = set(targets) - _make_targets()
    assert not missing, f"{cmd.where}: `{cmd.text}`: no Makefile target {sorted(missing)}"


@pytest.mark.parametrize("cmd", CLI_LINES, ids=lambda c: c.where)
def test_cli_lines_parse(cmd: Command, capsys: pytest.CaptureFixture[str]):
    """Every documented invocation parses — also those not run here, which then report why."""
    module = _invokes(cmd.argv)
    if module == "manetlab":
        args = cmd.argv[1:] if cmd.argv[0] == "manetlab" else cmd.argv[3:]
        try:
            _parser().parse_args([*args, *cmd.add])
        except SystemExit as e:
            if e.code != 0:  # --version, --help exit 0
                pytest.fail(f"{cmd.where}: `{cmd.text}` does not parse: {capsys.readouterr().err.strip()}")
    else:
        import importlib.util

        assert module is not None and importlib.util.find_spec(module) is not None, f"{cmd.where}: no module {module}"
    if cmd.skip:
        pytest.skip(f"docs line not run, {cmd.where} `{cmd.text}`: {cmd.skip}")


def _edit(folder: Path, mk: Marker) -> None:
    path = folder / mk.args[0]
    key = mk.args[1].split("=", 1)[0].strip()
    text = path.read_text(encoding="utf-8")
    # Top-level keys only: those before the first [table] line.
    head, sep, tail = text.partition("\n[")
    new, n = re.subn(rf"(?m)^{re.escape(key)}\s*=.*$", mk.args[1], head)
    assert n == 1, f"{mk.doc}:{mk.line}: edit marker: {mk.args[0]} has no top-level `{key} =` line"
    path.write_text(new + sep + tail, encoding="utf-8")


def _run_document(doc: str, folder: Path) -> tuple[list[str], list[str]]:
    """Run `doc`'s lines in order in `folder`; (log lines, failures)."""
    folder.mkdir(parents=True)
    shutil.copytree(ROOT / "examples", folder / "examples")
    shutil.copytree(ROOT / "benchmarks" / "scenarios", folder / "benchmarks" / "scenarios")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg"}
    log: list[str] = []
    failures: list[str] = []
    bs, _ = blocks(ROOT / doc)
    for b in bs:
        if b.lang not in SHELL_LANGS:
            continue
        for mk in b.markers:
            if mk.action == "edit":
                _edit(folder, mk)
        for c in (c for c in CLI_LINES if c.doc == doc and b.line < c.line <= b.line + len(b.lines)):
            missing = [p for p in c.needs if shutil.which(p) is None]
            if c.skip or missing:
                log.append(f"  skipped {c.where} `{c.text}`: {c.skip or f'needs `{missing[0]}` on PATH'}")
                continue
            module = _invokes(c.argv)
            rest = c.argv[1:] if c.argv[0] == "manetlab" else c.argv[3:]
            argv = [sys.executable, "-W", "error", "-m", str(module), *rest, *c.add]
            t0 = time.monotonic()
            try:
                p = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=LINE_TIMEOUT_S,
                                   stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                failures.append(f"{c.where} `{c.text}`: still running after {LINE_TIMEOUT_S} s")
                continue
            took = time.monotonic() - t0
            shown = c.text + (f" [+ {' '.join(c.add)}]" if c.add else "")
            log.append(f"  {took:5.1f} s  {c.where} `{shown}`")
            if p.returncode != 0:
                failures.append(f"{c.where} `{shown}`: exit {p.returncode}: {(p.stderr.strip() or p.stdout.strip())[-800:]}")
    return log, failures


def test_documented_commands_run(tmp_path: Path):
    """Each document's lines in order, in a folder of its own; the documents two at a time."""
    docs = sorted({c.doc for c in CLI_LINES})
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda d: _run_document(d, tmp_path / d.replace("/", "_")), docs))
    log = [line for lg, _ in results for line in lg]
    failures = [f for _, fs in results for f in fs]
    n_skipped = sum(1 for line in log if line.startswith("  skipped"))
    print(f"docs commands: {len(log) - n_skipped} run, {n_skipped} skipped, {time.monotonic() - t0:.1f} s", *log, sep="\n")
    assert not failures, "documented commands that fail:\n" + "\n".join(failures)


# ---------------------------------------------------------------- stated values


def section(doc: str, heading: str) -> str:
    """The text of `doc` under the heading whose text contains `heading`, to the next heading of the same or a higher level."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    for m in re.finditer(r"(?m)^(#+) (.*)$", text):
        if heading in m.group(2):
            level = len(m.group(1))
            end = re.compile(rf"(?m)^#{{1,{level}}} ")
            nxt = end.search(text, m.end())
            return text[m.end() : nxt.start() if nxt else len(text)]
    raise AssertionError(f"{doc}: no heading containing {heading!r}")


def tables(text: str) -> Iterator[list[dict[str, str]]]:
    """The Markdown tables in `text`, each as rows keyed by header cell."""
    rows: list[list[str]] = []
    for line in [*text.split("\n"), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
            continue
        if len(rows) >= 2:
            header = rows[0]
            yield [dict(zip(header, r, strict=False)) for r in rows[2:]]
        rows = []


def cell(doc: str, heading: str, key: str, column: str) -> str:
    """The `column` cell of the row whose first column is `key` (as written, e.g. "`port`"), in a table under `heading`."""
    for t in tables(section(doc, heading)):
        for row in t:
            first = next(iter(row.values()))
            # A generated table (docs/scenarios.md) heads its default column "default (`ns2-2.35`)".
            col = next((h for h in row if h == column or h.startswith(column + " (")), None)
            if first == key and col is not None:
                return row[col]
    raise AssertionError(f"{doc} § {heading}: no table row {key} with a column {column!r}")


def number(pattern: str, text: str) -> Decimal:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not found in {text[:200]!r}"
    return Decimal(m.group(1).replace(" ", ""))


def arithmetic(expr: str, **names: int) -> int:
    """ "20 + 8 (UDP) + 24" → 52: the docs' size sums, parentheticals dropped, names substituted."""
    expr = re.sub(r"\([^()]*\)", "", expr).replace("·", "*")
    for k, v in names.items():
        expr = expr.replace(k, str(v))
    assert re.fullmatch(r"[\d\s+*]+", expr), f"not a size sum: {expr!r}"
    return int(sum(eval_product(t) for t in expr.split("+")))


def eval_product(term: str) -> int:
    out = 1
    for f in term.split("*"):
        out *= int(f)
    return out


# One short run of each kind, shared by the checks below.
CHAIN = {"count": 3, "placement": {"kind": "chain", "spacing_m": 200}}


def _wireless(routing: str, **extra: Any) -> dict[str, Any]:
    return {
        "duration_s": 3,
        "nodes": CHAIN,
        "radio": {},
        "routing": {"protocol": routing},
        # Nothing but what the checks need: sizes, ports, names, times left to their defaults.
        "flows": [
            {"kind": "cbr", "src": 0, "dst": 2, "interval_s": 0.25},
            {"kind": "ftp", "src": 2, "dst": 0, "start_s": 1},
        ],
        "outputs": {"trace": "old", "trace_levels": ["agt", "rtr", "mac"], "pcap": True},
        **extra,
    }


@dataclass
class Run:
    summary: dict[str, Any]
    trace: list[list[str]]
    pcaps: dict[int, list[dpkt.ip.IP]]


def _run(scenario: dict[str, Any], out: Path) -> Run:
    r = manetlab.run(scenario, out=out)
    trace = (out / "trace.tr").read_text().splitlines() if (out / "trace.tr").exists() else []
    pcaps = {}
    for p in out.glob("node*.pcap"):
        with p.open("rb") as fh:
            reader = dpkt.pcap.Reader(fh)
            pcaps[int(p.stem[4:])] = [dpkt.ip.IP(buf) for _, buf in reader]
    return Run(r.summary, [line.split() for line in trace], pcaps)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    d = tmp_path_factory.mktemp("stated")
    wired = {
        "duration_s": 3,
        "nodes": {"count": 3},
        "links": [{"a": 0, "b": 1, "bandwidth_mbps": 1, "delay_ms": 1}, {"a": 1, "b": 2, "bandwidth_mbps": 0.1, "delay_ms": 1}],
        "flows": [{"kind": "cbr", "src": 0, "dst": 2, "interval_s": 0.001}],
        "outputs": {"trace": "old"},
    }
    saturated = {
        "duration_s": 2,
        "nodes": {"count": 2, "placement": {"kind": "chain", "spacing_m": 100}},
        "radio": {},
        "flows": [{"kind": "cbr", "src": 0, "dst": 1, "interval_s": 0.0005}],
    }
    rwp = {"duration_s": 2, "nodes": {"count": 3}, "area": {"width_m": 300, "height_m": 300}, "radio": {},
           "mobility": {"model": "random_waypoint", "max_speed_mps": 1}}
    frn = {"duration_s": 3, "nodes": CHAIN, "radio": {}, "mac": {"kind": "frn", "arp": False}, "routing": {"protocol": "frn"},
           "outputs": {"pcap": True}}
    return {
        # An explicit data rate: the header check reads the frame's air time.
        "aodv": _run(_wireless("aodv", mac={"data_rate_mbps": 2}), d / "aodv"),
        "aodv_no_mac_header": _run(_wireless("aodv", mac={"data_rate_mbps": 2, "data_header_bytes": 0}), d / "aodv0"),
        "aodv_default_levels": _run(_wireless("aodv", outputs={"trace": "old"}), d / "levels"),
        "aodv_default_mac": _run(_wireless("aodv"), d / "aodv_default_mac"),
        "aodv_1mbps": _run(_wireless("aodv", mac={"data_rate_mbps": 1}), d / "aodv1"),
        "dsdv": _run(_wireless("dsdv"), d / "dsdv"),
        "frn": _run(frn, d / "frn"),
        "wired": _run(wired, d / "wired"),
        "saturated": _run(saturated, d / "saturated"),
        "rwp": _run(rwp, d / "rwp"),
    }


def agent_lines(r: Run, event: str, level: str, ptype: str) -> list[list[str]]:
    return [f for f in r.trace if f[0] == event and f[3] == level and f[6] == ptype]


def ip_part(fields: list[str]) -> tuple[str, str, int]:
    """(src:port, dst:port, ttl) of an old-format line's `[src:port dst:port ttl nexthop]`."""
    i = fields.index("-------") + 1
    return fields[i].lstrip("["), fields[i + 1], int(fields[i + 2])


def udp_ports(r: Run) -> set[int]:
    return {ip.data.dport for pk in r.pcaps.values() for ip in pk if isinstance(ip.data, dpkt.udp.UDP)}


def flow_ports(r: Run) -> dict[int, set[int]]:
    """Each flow's ports in the pcap files: flow 0 is UDP 0→2, flow 1 TCP 2→0."""
    out: dict[int, set[int]] = {0: set(), 1: set()}
    for ip in r.pcaps[0] + r.pcaps[2]:
        if isinstance(ip.data, dpkt.tcp.TCP):
            out[1] |= {ip.data.sport, ip.data.dport}
        elif isinstance(ip.data, dpkt.udp.UDP) and ip.data.dport != 654:
            out[0] |= {ip.data.sport, ip.data.dport}
    return out


def default_port_base(r: Run) -> int:
    ports = flow_ports(r)
    assert all(len(p) == 1 for p in ports.values()), ports
    bases = {next(iter(p)) - f for f, p in ports.items()}
    assert len(bases) == 1, f"ports are not base + flow index: {ports}"
    return bases.pop()


def mac_size(r: Run, ptype: str) -> int:
    sizes = {int(f[7]) for f in r.trace if f[0] == "s" and f[3] == "MAC" and f[6] == ptype}
    assert len(sizes) == 1, (ptype, sizes)
    return sizes.pop()


def ip_size(r: Run, ptype: str) -> int:
    sizes = {int(f[7]) for f in r.trace if f[0] == "r" and f[3] == "MAC" and f[6] == ptype}
    assert len(sizes) == 1, (ptype, sizes)
    return sizes.pop()


def aodv_sizes(r: Run, kind: str) -> tuple[int, int]:
    """(size in the trace, datagram length in the pcap) of an AODV REQUEST or REPLY (pcap type 1 or 2)."""
    sim = {int(f[7]) for f in r.trace if f[6] == "AODV" and f[-1] == f"({kind})" and f[3] == "RTR"}
    code = {"REQUEST": 1, "REPLY": 2}[kind]
    pcap = {len(ip) for pk in r.pcaps.values() for ip in pk
            if isinstance(ip.data, dpkt.udp.UDP) and ip.data.dport == 654 and bytes(ip.data.data)[:1] == bytes([code])}
    assert len(sim) == 1 and len(pcap) == 1, (kind, sim, pcap)
    return sim.pop(), pcap.pop()


def air_time(r: Run) -> Decimal:
    """From the start of flow 0's first data frame at node 0 to its reception at node 1 (s).
    (The trace prints ns-2's fixed 58-B MAC overhead whatever `data_header_bytes` is, so
    the header is read from the time the frame takes at 2 Mb/s.)"""
    sent = next(f for f in r.trace if f[0] == "s" and f[2] == "_0_" and f[3] == "MAC" and f[6] == "cbr")
    got = next(f for f in r.trace if f[0] == "r" and f[2] == "_1_" and f[3] == "MAC" and f[5:7] == sent[5:7])
    return Decimal(got[1]) - Decimal(sent[1])


def default_data_rate(rs: dict[str, Run]) -> int | None:
    """The explicit data rate (Mb/s) whose frames take as long as the default's."""
    default = air_time(rs["aodv_default_mac"])
    return next((r for r, run in ((1, "aodv_1mbps"), (2, "aodv")) if air_time(rs[run]) == default), None)


def plcp_us(r: Run) -> Decimal:
    """The air time of flow 0's first frame at 2 Mb/s less its bits (IP datagram + 34-B MAC
    header) and the 200-m propagation delay, in µs."""
    bits = (ip_size(r, "cbr") + 34) * 8
    prop_s = Decimal(200) / Decimal(299_792_458)
    return ((air_time(r) - Decimal(bits) / Decimal(2_000_000) - prop_s) * 1_000_000).quantize(Decimal(1))


def cbr_jitter(r: Run) -> Decimal:
    """Largest departure of flow 0's gaps from its interval (0.25 s), from its `s AGT` times."""
    times = [Decimal(f[1]) for f in agent_lines(r, "s", "AGT", "cbr")]
    assert len(times) > 5
    return max(abs(b - a - Decimal("0.25")) for a, b in itertools.pairwise(times))


def cbr(r: Run) -> dict[str, Any]:
    return r.summary["flows"][0]


WI = "docs/wireless.md"
SC = "docs/scenarios.md"
ME = "docs/metrics.md"
AN = "docs/animate.md"
Check = tuple[str, Callable[[], Any], Callable[[dict[str, Run]], Any]]


def checks() -> list[Check]:
    """(what, stated value read from the docs, observed value from the runs)."""
    flows = (SC, "`[[flows]]`")
    return [
        ("scenarios.md top level: seed default", lambda: number(r"`(\d+)`", cell(SC, "Top level", "`seed`", "default")),
         lambda rs: rs["aodv"].summary["seed"]),
        ("scenarios.md [[flows]]: name default", lambda: cell(*flows, "`name`", "default"),
         lambda rs: '`"flow<i>"`' if [f["name"] for f in rs["aodv"].summary["flows"]] == ["flow0", "flow1"] else None),
        ("scenarios.md [[flows]]: start_s default", lambda: number(r"`(\d+)`", cell(*flows, "`start_s`", "default")),
         lambda rs: Decimal(str(cbr(rs["aodv"])["start_s"]))),
        ("scenarios.md [[flows]]: stop_s default", lambda: cell(*flows, "`stop_s`", "default"),
         lambda rs: "end of run" if cbr(rs["aodv"])["stop_s"] == rs["aodv"].summary["duration_s"] else None),
        ("scenarios.md [[flows]]: transport defaults (CBR, FTP)",
         lambda: re.search(r'`"(\w+)"` for CBR, `"(\w+)"` for FTP', cell(*flows, "`transport`", "default")).groups(),  # type: ignore[union-attr]
         lambda rs: tuple(f["transport"] for f in rs["aodv"].summary["flows"])),
        ("scenarios.md [[flows]]: packet_size_bytes default", lambda: number(r"(\d+)", cell(*flows, "`packet_size_bytes`", "default")),
         lambda rs: Decimal(cbr(rs["aodv"])["tx_bytes"] // cbr(rs["aodv"])["tx_packets"])),
        ("scenarios.md [[flows]]: udp_header default (false: payload + 20 B IP on the air)",
         lambda: cell(*flows, "`udp_header`", "default"),
         lambda rs: "`false`" if ip_size(rs["aodv"], "cbr") == cbr(rs["aodv"])["tx_bytes"] // cbr(rs["aodv"])["tx_packets"] + 20 else None),
        ("scenarios.md [[flows]]: jitter_s default (gaps exactly interval_s)", lambda: number(r"`(\d+)`", cell(*flows, "`jitter_s`", "default")),
         lambda rs: cbr_jitter(rs["aodv"])),
        ("scenarios.md [[flows]]: port default base", lambda: number(r"(\d+) \+ the flow's index", cell(*flows, "`port`", "default")),
         lambda rs: default_port_base(rs["aodv"])),
        ("scenarios.md [[links]]: queue_limit_pkts default", lambda: number(r"\*\*(\d+)\*\*", cell(SC, "`[[links]]`", "`queue_limit_pkts`", "default")),
         lambda rs: max(ln["max_queue_pkts"] for ln in rs["wired"].summary["links"])),
        # The wireless queue holds limit_pkts - 1 waiting packets (docs: ns-2's DropTail::enque).
        ("scenarios.md [queue]: limit_pkts default", lambda: number(r"^(\d+)$", cell(SC, "`[queue]`", "`limit_pkts`", "default")),
         lambda rs: rs["saturated"].summary["nodes"][0]["ifq_max_pkts"] + 1),
        ("scenarios.md [mac]: data_header_bytes default", lambda: number(r"^(\d+)$", cell(SC, "`[mac]`", "`data_header_bytes`", "default")),
         lambda rs: (air_time(rs["aodv"]) - air_time(rs["aodv_no_mac_header"])) * 2_000_000 / 8),
        ("scenarios.md [mac]: arp default (ARP frames in the trace)", lambda: cell(SC, "`[mac]`", "`arp`", "default"),
         lambda rs: "true" if any(f[6] == "ARP" for f in rs["aodv"].trace) else "false"),
        ("scenarios.md: packets start with TTL", lambda: number(r"Packets start with TTL (\d+)", section(SC, "`[routing]`")),
         lambda rs: {ip_part(f)[2] for f in agent_lines(rs["wired"], "s", "AGT", "cbr") + agent_lines(rs["aodv"], "s", "AGT", "cbr")}.pop()),
        ("scenarios.md: AODV (ns-2 rules) data leaves its source with TTL",
         lambda: number(r"originates TTL (\d+)", " ".join(section(SC, "`[routing]`").split())),
         lambda rs: {ip_part(f)[2] for f in agent_lines(rs["aodv"], "s", "RTR", "cbr")}.pop()),
        ("metrics.md outputs: trace_levels default", lambda: re.search(r"default `(\[[^]]*\])`", cell(ME, "Trace files", "`trace = \"old\"` or `\"new\"`", "content")).group(1),  # type: ignore[union-attr]
         lambda rs: "[" + ", ".join(f'"{v}"' for v in sorted({f[3].lower() for f in rs["aodv_default_levels"].trace})) + "]"),
        ("metrics.md traces: `s MAC` adds (802.11 header, FCS, PLCP)", lambda: number(r"`s MAC`: \+ (\d+) B", cell(ME, "ns-2 traces", "sizes", "as ns-2.35")),
         lambda rs: mac_size(rs["aodv"], "cbr") - ip_size(rs["aodv"], "cbr")),
        ("metrics.md traces: RTS, CTS, ACK, ARP sizes",
         lambda: re.search(r"RTS (\d+), CTS (\d+), ACK (\d+), ARP (\d+) \((\d+) sent\)", cell(ME, "ns-2 traces", "sizes", "as ns-2.35")).groups(),  # type: ignore[union-attr]
         lambda rs: tuple(str(x) for x in (mac_size(rs["aodv"], "RTS"), mac_size(rs["aodv"], "CTS"), mac_size(rs["aodv"], "ACK"),
                                            ip_size(rs["aodv"], "ARP"), mac_size(rs["aodv"], "ARP")))),
        ("metrics.md traces: the broadcast example `[0:255 -1:255 30 0]` is a line's IP part",
         lambda: re.search(r"`(\[0:255 -1:255 \d+ 0\])`", cell(ME, "ns-2 traces", "addresses", "as ns-2.35")).group(1),  # type: ignore[union-attr]
         lambda rs: next(" ".join(f[i + 1 : i + 5]) for f in rs["aodv"].trace for i in [f.index("-------")] if f[1:3] == ["0.000000000", "_0_"] and f[6] == "AODV" and "-------" in f)),
        ("metrics.md pcap: flow f's port base", lambda: number(r"port (\d+) \+ \*f\*", section(ME, "What a pcap holds")),
         lambda rs: default_port_base(rs["aodv"])),
        ("metrics.md pcap: AODV port", lambda: number(r"port (\d+) → \d+", cell(ME, "What a pcap holds", "AODV", "on the wire in the pcap")),
         lambda rs: 654 if 654 in udp_ports(rs["aodv"]) else None),
        ("metrics.md pcap: DSDV port", lambda: number(r"port (\d+) → \d+", cell(ME, "What a pcap holds", "DSDV", "on the wire in the pcap")),
         lambda rs: next(iter(udp_ports(rs["dsdv"]) - {50000})) if len(udp_ports(rs["dsdv"]) - {50000}) == 1 else udp_ports(rs["dsdv"])),
        ("metrics.md pcap: FRN port", lambda: number(r"port (\d+) → \d+", cell(ME, "What a pcap holds", "FRN", "on the wire in the pcap")),
         lambda rs: udp_ports(rs["frn"]).pop() if len(udp_ports(rs["frn"])) == 1 else udp_ports(rs["frn"])),
        ("metrics.md pcap sizes: AODV RREQ (simulated, pcap)",
         lambda: (arithmetic(cell(ME, "What a pcap holds", "AODV RREQ", "simulated (IP + rest, ns-2)")),
                  arithmetic(cell(ME, "What a pcap holds", "AODV RREQ", "in the pcap"))),
         lambda rs: aodv_sizes(rs["aodv"], "REQUEST")),
        ("metrics.md pcap sizes: AODV RREP (simulated, pcap)",
         lambda: (arithmetic(cell(ME, "What a pcap holds", "AODV RREP, HELLO", "simulated (IP + rest, ns-2)")),
                  arithmetic(cell(ME, "What a pcap holds", "AODV RREP, HELLO", "in the pcap"))),
         lambda rs: aodv_sizes(rs["aodv"], "REPLY")),
        ("metrics.md pcap sizes: CBR without udp_header (simulated, pcap)",
         lambda: (arithmetic(cell(ME, "What a pcap holds", "CBR without `udp_header`", "simulated (IP + rest, ns-2)"), payload=512),
                  arithmetic(cell(ME, "What a pcap holds", "CBR without `udp_header`", "in the pcap"), payload=512)),
         lambda rs: (ip_size(rs["aodv"], "cbr"),
                     {len(ip) for ip in rs["aodv"].pcaps[2] if isinstance(ip.data, dpkt.udp.UDP) and ip.data.dport == 50000}.pop())),
        ("tcp.md flows[].tcp: mss_bytes default", lambda: number(r"^(\d+)$", cell("docs/tcp.md", "`flows[].tcp`", "`mss_bytes`", "default")),
         lambda rs: rs["aodv"].summary["flows"][1]["tcp"]["mss_bytes"]),
        ("scenarios.md [mac]: data_rate_mbps default", lambda: number(r"^(\d+)$", cell(SC, "`[mac]`", "`data_rate_mbps`", "default")),
         default_data_rate),
        ("scenarios.md [mac]: plcp_us default", lambda: number(r"^(\d+)$", cell(SC, "`[mac]`", "`plcp_us`", "default")),
         lambda rs: plcp_us(rs["aodv"])),
        ("scenarios.md [mac]: data_header_bytes on the air default", lambda: number(r"^(\d+)$", cell(SC, "`[mac]`", "`data_header_bytes`", "default")),
         lambda rs: (air_time(rs["aodv"]) - air_time(rs["aodv_no_mac_header"])) * 2_000_000 / 8),
        ("wireless.md [queue]: limit_pkts default and the packets waiting",
         lambda: tuple(map(Decimal, re.search(r"^(\d+) \(ns-2 `qlim_`: (\d+) waiting", cell(WI, "`[queue]`", "`limit_pkts`", "default")).groups())),  # type: ignore[union-attr]
         lambda rs: (Decimal(rs["saturated"].summary["nodes"][0]["ifq_max_pkts"] + 1), Decimal(rs["saturated"].summary["nodes"][0]["ifq_max_pkts"]))),
        ("wireless.md [radio]: rx_threshold_w default's range (m)", lambda: number(r"\((\d+) m under two-ray\)", cell(WI, "`[radio]`", "`rx_threshold_w`", "source")),
         lambda rs: Decimal(round(rs["rwp"].summary["connectivity"]["range_m"]))),
        ("animate.md: flow ports by default", lambda: number(r"by default (\d+) \+ \*f\*", section(AN, "What it reads")),
         lambda rs: default_port_base(rs["aodv"])),
        ("animate.md ranges: reception range by default (m)",
         lambda: number(r"RXThresh, (\d+) m by default", cell(AN, "What it reads", "ranges", "source (written by `manetlab run`)")),
         lambda rs: Decimal(round(rs["rwp"].summary["connectivity"]["range_m"]))),
        ("animate.md ranges: carrier-sense range by default (m)",
         lambda: number(r"formula \((\d+) m by default\)", cell(AN, "What it reads", "ranges", "source (written by `manetlab run`)")),
         lambda rs: Decimal(round(_cs_range()))),
    ]


def _cs_range() -> float:
    from manetlab.animate.data import _ranges

    cs = _ranges({"radio": {}}, {})[1]
    assert cs is not None
    return cs


@pytest.mark.parametrize("check", checks(), ids=lambda c: c[0])
def test_stated_value_is_the_codes(check: Check, runs: dict[str, Run]):
    what, stated, observed = check
    s, o = stated(), observed(runs)
    if isinstance(s, tuple):
        o = tuple(str(x) if isinstance(s[0], str) else x for x in o)
    elif isinstance(s, Decimal):
        o = Decimal(o) if isinstance(o, int) else o
    assert s == o, f"{what}: the docs say {s!r}, the code gives {o!r}"


# ---------------------------------------------------------------- stated defaults, generically

# A parameter table's default is the code's when a run that sets the key to the stated
# value equals, summary for summary, the run that leaves it out. Tables: (doc, heading,
# key prefix of the override). Rows whose default is not a plain value ("—", "true for
# sack/fack, else false", a formula) are listed as not checked; a row that applies
# only in a mode ("only with `transport = "vegas"`", "shadowing only", "red") runs in it.
DEFAULT_TABLES = [
    # The [mac] table is the one generated from the declarations (wireless.md points to it).
    (SC, "`[mac]`", "mac."),
    (WI, "`[radio]`", "radio."),
    (WI, "`[queue]`", "queue."),
    ("docs/tcp.md", "`flows[].tcp`", "flows[1].tcp."),
]
_LITERAL = r'(?:-?\d+(?:\.\d+)?(?:e-?\d+)?|true|false|"[^"]*")'


def _stated_defaults(cell_text: str, n_keys: int) -> list[str] | None:
    """The literal default(s) a cell states ("20", "`\\"ns2\\"`", "31, 1023",
    "50 (ns-2 ...)", "`\\"priqueue\\"`; `\\"cmupriqueue\\"` with DSR"), or None."""
    text = cell_text.replace("**", "").replace("`", "").strip()
    m = re.fullmatch(rf"({_LITERAL}(?:, {_LITERAL})*)(?:\s*(?:\(.*\)|;.*))?", text)
    if not m:
        return None
    values = [v.strip() for v in m.group(1).split(", ")]
    if len(values) == 1:
        values *= n_keys  # "`tx_antenna_gain`, `rx_antenna_gain` | 1.0": each
    return values if len(values) == n_keys else None


def _mode(heading: str, row: dict[str, str]) -> dict[str, Any]:
    """The overrides a row applies under (both runs get them)."""
    text = " ".join(row.values())
    if heading == "`flows[].tcp`":
        m = re.search(r'only with `(?:transport = )?"([\w+-]+)"`', text)
        return {"flows[1].transport": m.group(1)} if m else {}
    if heading == "`[radio]`":
        if "shadowing only" in text:
            return {"radio.propagation": "shadowing"}
        return {"radio.reception": "sinr"} if "sinr mode only" in text else {}
    if heading == "`[queue]`":
        kind = row.get("applies to", "").split(" ")[0].strip(",:")
        return {"queue.kind": kind} if kind in ("red", "lred") else {}
    return {}


def default_rows() -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
    """(what, mode, {override key: stated value} or None when not a plain value)."""
    from manetlab.scenario import parse_value

    out = []
    for doc, heading, prefix in DEFAULT_TABLES:
        # A hand-written table's column is "default"; a generated one's (docs/scenarios.md,
        # `cargo run --example param_docs`) "default (`ns2-2.35`)", the default profile's.
        # Every such table of the section (scenarios.md's [mac]: `kind`/`frn`, then the generated one).
        with_default = [t for t in tables(section(doc, heading)) if t and any(h.startswith("default") for h in t[0])]
        assert with_default, f"{doc} § {heading}: no table with a default column"
        for row in (r for t in with_default for r in t):
            col = next(h for h in row if h.startswith("default"))
            keys = re.findall(r"`([a-z_0-9]+)`", next(iter(row.values())))
            values = _stated_defaults(row[col], len(keys))
            what = f"{doc.removeprefix('docs/')} {heading.strip('`')}: {', '.join(keys)} = {row[col][:40]}"
            out.append((what, _mode(heading, row), None if values is None else {prefix + k: parse_value(v) for k, v in zip(keys, values, strict=True)}))
    return out


DEFAULT_ROWS = default_rows()


#: A run in which most parameters matter: a 5-node chain at 240 m (near the 250-m
#: range: hidden nodes, retries, collisions), CBR above the chain's capacity and TCP the
#: other way, so queues fill, the MAC retries and gives up, TCP times out.
STRESS: dict[str, Any] = {
    "duration_s": 6,
    "nodes": {"count": 5, "placement": {"kind": "chain", "spacing_m": 240}},
    "radio": {},
    "routing": {"protocol": "aodv"},
    "flows": [
        {"kind": "cbr", "src": 0, "dst": 4, "interval_s": 0.005, "start_s": 0.5},
        {"kind": "ftp", "src": 4, "dst": 0},
    ],
}


def _summary(overrides: dict[str, Any], cache: dict[str, Any] = {}) -> dict[str, Any]:  # noqa: B006 - a cache on purpose
    import json

    key = json.dumps(overrides, sort_keys=True)
    if key not in cache:
        cache[key] = manetlab.run(manetlab.Scenario(STRESS).with_overrides(overrides)).summary
    return cache[key]


def test_default_tables_are_read() -> None:
    checked = [w for w, _, ov in DEFAULT_ROWS if ov is not None]
    assert len(checked) >= 45, checked
    # Those left out state no plain value: "—" (computed from another key), "true for
    # `sack`/`fack`, else false", "see frn.md".
    assert {w.split(" = ")[0] for w, _, ov in DEFAULT_ROWS if ov is None} == {
        "wireless.md [radio]: rx_range_m", "wireless.md [radio]: cs_range_m", "tcp.md flows[].tcp: sack", "scenarios.md [mac]: frn"}


@pytest.mark.parametrize(("what", "mode", "stated"), [r for r in DEFAULT_ROWS if r[2] is not None], ids=lambda v: v if isinstance(v, str) else "")
def test_stated_default_equals_leaving_the_key_out(what: str, mode: dict[str, Any], stated: dict[str, Any]) -> None:
    assert _summary(mode) == _summary({**mode, **stated}), f"{what}: setting the stated default changes the run, so it is not the code's default"


def test_most_checked_defaults_matter_in_the_run() -> None:
    """The check above means something only for keys the run depends on: another
    value (a bool flipped, a number doubled) changes the summary for most rows."""
    from manetlab.scenario import ScenarioError

    matter, not_here = 0, []
    for what, mode, stated in DEFAULT_ROWS:
        if stated is None or any(isinstance(v, str) for v in stated.values()):
            continue
        # Integers go to 2v + 1 (so windows of 2^k - 1 slots stay valid: cw_min 31 -> 63).
        other = {k: (not v) if isinstance(v, bool) else 2 * v + 1 if isinstance(v, int) else (2 * v if v else 1) for k, v in stated.items()}
        try:
            changed = _summary(mode) != _summary({**mode, **other})
        except ScenarioError:
            changed = False  # doubled out of its range (cw_min, an alpha)
        if changed:
            matter += 1
        else:
            not_here.append(what)
    print(f"{matter} stated defaults change the run when changed; not in this run: {not_here}")
    assert matter >= 40
