"""Issue 34, end to end: a scenario whose names carry Tcl, HTML, CSV and (in the last
tests) control-character payloads goes through the command line as a user runs it:
``run --animate``, ``report``, ``animate``, ``plot``, ``export-ns2`` + ``ns run.tcl``
and ``crosscheck``; its CSV tables are read back, its pages opened in headless
Chromium. Nothing executes: every Tcl payload tries to create a marker file (relative
to the working folder, and at an absolute path), every HTML payload tries to set
``window.__pwned`` or the page's title; no CSV cell a spreadsheet would run; the pages
render (headings, figures, the animation plays, every node's panel opens).

The unit-level checks of each writer are in tests/test_security_tcl.py (Tcl quoting),
tests/test_security_html.py (escaping, CSP, tampered result folders) and
tests/test_security_outputs.py (CSV neutralisation); this file only proves that the
pieces hold together on one hostile scenario. ``ns`` and Chromium parts skip cleanly
where those are not installed.

Control characters in a name (newline, CR, an ANSI escape, a bidi override) are
refused by ``validate`` with one line where the name rule is enforced; a build that
still accepts them must print them escaped and export them as Tcl comments. Names of
the longest allowed length (200) leave every figure laid out (they used to collapse
the axes: plots.py now cuts or wraps names in figures).
"""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import shutil
import subprocess
import tempfile
import time
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from manetlab.animate.browser import chromium_paths
from manetlab.textsafe import printable
from _util import ROOT, run_cli
from test_security_tcl import comment_body

NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 (ns) is not installed")
needs_browser = pytest.mark.skipif(
    importlib.util.find_spec("selenium") is None or chromium_paths() is None,
    reason="needs selenium (pip install -e '.[dev]') and chromium + chromedriver on PATH (apt-get install chromium chromium-driver)",
)

#: Every marker file a payload would create starts with this.
MARK = "pwned-e2e"
#: Tcl (command substitution, variable substitution, a quote/brace break-out, a
#: trailing backslash), HTML (an event handler, an early comment) and a formula.
SCENARIO_NAME = (
    f'@SUM(1) [exec touch {MARK}-1] $env(HOME) "; exec touch {MARK}-2; # }} exec touch {MARK}-3 {{ '
    f"<img src=x onerror=\"document.title='PWNED'\"> <!--<script> \\"
)
CBR_NAME = f'=HYPERLINK("http://x","y") </script><script>window.__pwned=1</script> [exec touch {MARK}-4]'
FTP_NAME = "+cmd|' /C calc'!A0 \"><svg onload=window.__pwned=2> ${env(HOME)} \\"
# The third flow's name touches an absolute path (inside the test's folder): built per run.
BACK_NAME = "-2+3 ' onmouseover='window.__pwned=3' x=' } [exec touch ABS] {"
FORMULA = re.compile(r"[=+\-@\t\r]")
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def scenario(abs_marker: Path) -> dict[str, Any]:
    """A 3-node wireless chain under AODV: a CBR flow, a short FTP flow with its TCP
    trace, a slow CBR flow back; traces, series and movement on (animate needs them)."""
    names = [SCENARIO_NAME, CBR_NAME, FTP_NAME, BACK_NAME.replace("ABS", str(abs_marker))]
    assert all(len(n) <= 200 and n.isprintable() for n in names)  # what the name rule admits
    return {
        "name": names[0],
        "seed": 1,
        "duration_s": 3.0,
        "nodes": {"count": 3, "placement": {"kind": "chain", "spacing_m": 200.0}},
        "radio": {},
        "routing": {"protocol": "aodv"},
        "flows": [
            {"name": names[1], "kind": "cbr", "src": 0, "dst": 2, "rate_kbps": 64.0},
            {"name": names[2], "kind": "ftp", "src": 2, "dst": 0, "transport": "newreno", "start_s": 0.5, "stop_s": 2.5, "tcp": {"trace": True}},
            {"name": names[3], "kind": "cbr", "src": 2, "dst": 0, "rate_kbps": 16.0, "start_s": 1.0},
        ],
        "outputs": {"trace": "old", "movement": True, "series": True},
    }


def markers(*folders: Path, deep: bool = True) -> list[Path]:
    found: list[Path] = []
    for d in folders:
        if d.is_dir():
            found += [p for p in (d.rglob(f"{MARK}*") if deep else d.glob(f"{MARK}*"))]
    return found


def clean(p: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    """A command that succeeded, printed no traceback and only printable lines."""
    assert p.returncode == 0, (what, p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr, (what, p.stderr[-2000:])
    for line in (p.stdout + p.stderr).splitlines():
        assert line.isprintable(), (what, line)
    return p


@pytest.fixture(scope="module")
def e2e(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The whole pipeline through the CLI, working folder a fresh tmp folder; the
    commands' temporary folders (TMPDIR) inside it too, so a marker anywhere they
    work is found."""
    cwd = tmp_path_factory.mktemp("e2e")
    (cwd / "tmp").mkdir()
    abs_marker = cwd / f"{MARK}-abs"
    s = scenario(abs_marker)
    (cwd / "s.json").write_text(json.dumps(s), encoding="utf-8")
    out: dict[str, Any] = {"cwd": cwd, "scenario": s, "names": [f["name"] for f in s["flows"]]}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(cwd / "tmp"))
        out["run"] = clean(run_cli("run", "s.json", "--out", "R", "--animate", cwd=cwd), "run")
        out["report"] = clean(run_cli("report", "R", cwd=cwd), "report")
        out["animate"] = clean(run_cli("animate", "R", cwd=cwd), "animate")
        out["plot"] = [clean(run_cli("plot", "R", "--kind", k, cwd=cwd), f"plot {k}") for k in ("throughput", "drops")]
        out["export"] = clean(run_cli("export-ns2", "s.json", "--out", "E", cwd=cwd), "export-ns2")
        if NS is not None:
            p = subprocess.run([NS, "run.tcl"], cwd=cwd / "E", capture_output=True, timeout=60)
            assert p.returncode == 0, p.stderr[-2000:]
            out["crosscheck"] = clean(
                run_cli("crosscheck", "s.json", "--seeds", "1-2", "--per-flow", "--csv", "X.csv", "--keep", "K", cwd=cwd), "crosscheck"
            )
    return out


def test_cli_runs_and_shows_the_names_as_they_are(e2e):
    run = e2e["run"].stdout.splitlines()
    assert run[0].startswith(f"{SCENARIO_NAME}: seed 1, 3 nodes")
    for i, name in enumerate(e2e["names"]):
        assert any(line.split(None, 1)[0] == str(i) and name in line for line in run[2:5]), name
    assert (e2e["cwd"] / "R" / "animate.html").is_file() and (e2e["cwd"] / "R" / "report.html").is_file()
    assert e2e["export"].stdout.startswith(f"{SCENARIO_NAME}: seed 1 (ns-2 RNG seed")
    summary = json.loads((e2e["cwd"] / "R" / "summary.json").read_text(encoding="utf-8"))
    assert summary["scenario_name"] == SCENARIO_NAME and [f["name"] for f in summary["flows"]] == e2e["names"]
    assert not markers(e2e["cwd"])


def test_export_names_are_tcl_comments_and_ns_runs_it(e2e):
    e = e2e["cwd"] / "E"
    lines = (e / "run.tcl").read_text(encoding="ascii").split("\n")
    named = [ln for ln in lines if "pwned" in ln or "HYPERLINK" in ln]
    assert len(named) == 4  # the scenario's comment and one per flow
    bodies = [comment_body(ln) for ln in named]  # each one whole comment line
    assert SCENARIO_NAME in bodies[0] and all(n in b for n, b in zip(e2e["names"], bodies[1:]))
    assert not any(re.match(r"\s*exec\b", ln) for ln in lines)
    flows = json.loads((e / "flows.json").read_text(encoding="utf-8"))
    assert flows["scenario"] == SCENARIO_NAME and [f["name"] for f in flows["flows"]] == e2e["names"]
    if NS is None:
        pytest.skip("ns-2 (ns) is not installed: run.tcl checked, not run")
    assert (e / "trace.tr").stat().st_size > 0  # ns ran the scenario
    assert len((e / "ports.txt").read_text().splitlines()) == 3
    assert not markers(e2e["cwd"])


@needs_ns
def test_crosscheck_runs_both_simulators(e2e):
    out = e2e["crosscheck"].stdout
    assert out.startswith(f"{SCENARIO_NAME}: 3 nodes") and "cbr_pdr" in out and "flow2.pdr" in out
    for seed in (1, 2):
        k = e2e["cwd"] / "K" / f"seed{seed}"
        assert (k / "trace.tr").stat().st_size > 0 and len((k / "ports.txt").read_text().splitlines()) == 3
    with open(e2e["cwd"] / "X.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["seed"] for r in rows} == {"1", "2"} and {"cbr_pdr", "tcp_goodput_kbps"} <= {r["metric"] for r in rows}
    assert not markers(e2e["cwd"])


def csv_files(e2e: dict[str, Any]) -> list[Path]:
    files = sorted((e2e["cwd"] / "R").glob("*.csv"))
    assert {p.name for p in files} >= {"flows.csv", "nodes.csv", "links.csv", "packet_series.csv", "queue_series.csv", "timeseries.csv"}
    return files + ([e2e["cwd"] / "X.csv"] if NS is not None else [])


def test_no_csv_cell_is_a_formula(e2e):
    """Read as a spreadsheet would: no cell (header included) starts with = + - @, TAB
    or CR unless it is a plain number; the names are there, neutralised."""
    cells = 0
    for path in csv_files(e2e):
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.reader(f):
                for cell in row:
                    cells += 1
                    assert not FORMULA.match(cell) or NUMBER.fullmatch(cell), (path.name, cell)
    assert cells > 1000
    with open(e2e["cwd"] / "R" / "flows.csv", newline="", encoding="utf-8") as f:
        names = [r["name"] for r in csv.DictReader(f)]
    assert names == ["'" + n for n in e2e["names"]]  # all three start like a formula
    with open(e2e["cwd"] / "R" / "packet_series.csv", newline="", encoding="utf-8") as f:
        assert {r["name"] for r in csv.DictReader(f)} == {"'" + n for n in e2e["names"][0::2]}  # the CBR flows


def test_figures_are_plain_svg(e2e):
    for kind in ("throughput", "drops"):
        assert (e2e["cwd"] / "R" / f"{kind}.png").stat().st_size > 1000
        root = ET.parse(e2e["cwd"] / "R" / f"{kind}.svg").getroot()  # well-formed: no name broke it
        for el in root.iter():
            assert not el.tag.endswith("script") and not el.tag.endswith("foreignObject"), el.tag
            assert not [a for a in el.attrib if a.lower().startswith("on")], (el.tag, el.attrib)


def test_names_of_200_characters_leave_every_figure_drawn(tmp_path):
    """The longest names the rule admits: every figure is laid out (matplotlib used to
    warn "axes sizes collapsed to zero" and draw the axes as nothing), the names cut
    or wrapped in it; the tables keep them whole."""
    import warnings

    import manetlab
    from manetlab.plots import KINDS, plot

    s = scenario(tmp_path / MARK)
    long_names = ["a" * 200, ("word " * 40)[:200], "<b>" * 66 + "$$"]
    s["name"] = "s" * 200
    for f, name in zip(s["flows"], long_names):
        f["name"] = name
    rdir = tmp_path / "R"
    manetlab.run(s, out=rdir)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for kind in KINDS:
            png, svg = plot(rdir, kind)
            assert png.stat().st_size > 1000
            ET.parse(svg)
    with open(rdir / "flows.csv", newline="", encoding="utf-8") as f:
        assert [r["name"] for r in csv.DictReader(f)] == long_names


# --- the pages in headless Chromium ----------------------------------------------------


def _not_pwned(page: Any, title: str) -> None:
    """No payload ran: window.__pwned unset, the title still the page's own (the
    name holds the text "document.title='PWNED'": as text)."""
    assert page.js("return window.__pwned === undefined"), page.js("return window.__pwned")
    assert page.js("return document.title") == title


@needs_browser
def test_report_page_renders_and_runs_nothing(e2e):
    from selenium.webdriver.common.action_chains import ActionChains

    from manetlab.animate.browser import open_page

    page = open_page(e2e["cwd"] / "R" / "report.html", ready="document.readyState === 'complete'")
    try:
        assert page.js("return document.querySelector('h1').textContent") == SCENARIO_NAME
        body = page.js("return document.body.textContent")
        assert all(n in body for n in e2e["names"])
        sizes = page.js("return [...document.images].map(function (i) { return [i.complete, i.naturalWidth]; })")
        assert sizes and all(c and w > 100 for c, w in sizes), sizes
        # Hover over and click everything that shows a payload.
        act = ActionChains(page.driver)
        shown = page.js("return [...document.querySelectorAll('h1, p, th, td, pre')].filter(function (e) { return e.textContent.includes('<'); })")
        assert len(shown) >= 4
        for el in shown:
            act.move_to_element(el).click()
        act.perform()
        _not_pwned(page, f"manetlab: {SCENARIO_NAME}")
        assert page.csp_violations() == []
        assert page.console_errors() == []
    finally:
        page.close()


@needs_browser
def test_animation_page_renders_plays_and_runs_nothing(e2e):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    from manetlab.animate.browser import open_page

    page = open_page(e2e["cwd"] / "R" / "animate.html")  # returns once the page's script is ready
    try:
        assert page.js("return document.querySelector('header h1').textContent") == f"manetlab animate: {SCENARIO_NAME} (seed 1)"
        labels = page.js("return [...document.querySelectorAll('#flows label')].map(function (l) { return l.textContent; })")
        assert [lb for lb in labels if lb.startswith("flow ")] == [f"flow {i} {n}" for i, n in enumerate(e2e["names"])]
        page.js("manetlab.setSpeed(5); manetlab.play()")
        start, deadline = page.state()["frames"], time.monotonic() + 30
        while page.state()["frames"] < start + 3:  # a bound on a hang, not a timed assertion
            assert time.monotonic() < deadline, "the animation does not advance"
            time.sleep(0.02)
        page.js("manetlab.pause(); manetlab.seek(2.0)")
        assert page.state()["t"] == 2.0 and len(page.state()["positions"]) == 3
        canvas = page.driver.find_element(By.ID, "map")
        w, h = canvas.size["width"], canvas.size["height"]
        for i in range(3):  # click each node: its panel opens
            x, y = page.js("return manetlab.pixel(arguments[0])", i)
            ActionChains(page.driver).move_to_element_with_offset(canvas, int(x - w / 2), int(y - h / 2)).click().perform()
            assert page.state()["panel"]["node"] == i
        for box in page.driver.find_elements(By.CSS_SELECTOR, "#flows input"):
            box.click()
            box.click()
        ActionChains(page.driver).move_to_element(page.driver.find_element(By.CSS_SELECTOR, "header")).perform()
        _not_pwned(page, f"manetlab animate: {SCENARIO_NAME} (seed 1)")
        assert page.csp_violations() == []
        assert page.console_errors() == []
    finally:
        page.close()


# --- control characters: refused, or accepted and escaped ---------------------------------

CONTROL = {"newline": "\n", "cr": "\r", "ansi": "\x1b[31m", "bidi": "\u202e"}


def _unsafe(s: str) -> bool:
    return any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in s)


def _with_control(where: str, c: str, marker: str) -> dict[str, Any]:
    s = scenario(Path(marker))
    payload = f"x{c}exec touch {marker}{c}#"
    if where == "name":
        s["name"] = payload
    else:
        s["flows"][0]["name"] = payload
    return s


@pytest.mark.parametrize("where", ["name", "flows[0].name"])
@pytest.mark.parametrize("kind", list(CONTROL))
def test_control_characters_in_a_name_are_refused_or_escaped(tmp_path, where, kind):
    """`manetlab validate`: one clean `error: <key>: ...` line (exit 2) where the name
    rule is enforced, else ok with the name shown escaped. Never a traceback, never a
    raw control character on the terminal."""
    marker = f"{MARK}-ctl"
    s = _with_control(where, CONTROL[kind], marker)
    (tmp_path / "c.json").write_text(json.dumps(s), encoding="utf-8")
    p = run_cli("validate", "c.json", cwd=tmp_path)
    assert "Traceback" not in p.stderr and not _unsafe(p.stderr.replace("\n", "")), p.stderr
    if p.returncode == 2:
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {where}: "), p.stderr
    else:
        assert p.returncode == 0 and p.stderr == "", p.stderr
        assert not _unsafe(p.stdout.replace("\n", "")) and p.stdout.count("\n") == 1, p.stdout
        if where == "name":
            assert p.stdout.startswith(f"ok: {printable(s['name'])}: 3 nodes")
    assert not markers(tmp_path)


def test_control_characters_through_run_export_and_ns(tmp_path):
    """Every control character at once in both names: where the build still accepts
    them, `run` and `export-ns2` print them escaped and `ns run.tcl` runs no payload."""
    marker = f"{MARK}-ctl"
    c = "".join(CONTROL.values())
    s = scenario(tmp_path / marker)
    s["name"] = f"x{c}\nexec touch {marker}\n#{c}"
    s["flows"][0]["name"] = f"f{c}\r[exec touch {tmp_path / marker}]\n#"
    (tmp_path / "c.json").write_text(json.dumps(s), encoding="utf-8")
    for args in (("run", "c.json", "--out", "R"), ("export-ns2", "c.json", "--out", "E")):
        p = run_cli(*args, cwd=tmp_path)
        assert "Traceback" not in p.stderr and not _unsafe((p.stdout + p.stderr).replace("\n", "")), (args, p.stdout, p.stderr)
        if p.returncode == 2:
            assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("error: "), p.stderr
            continue
        assert p.returncode == 0 and printable(s["name"]) in p.stdout, (args, p.stdout, p.stderr)
        if args[0] == "run":
            assert printable(s["flows"][0]["name"]) in p.stdout
        elif NS is not None:
            ns = subprocess.run([NS, "run.tcl"], cwd=tmp_path / "E", capture_output=True, timeout=60)
            assert ns.returncode == 0, ns.stderr[-2000:]
            assert (tmp_path / "E" / "trace.tr").stat().st_size > 0
    assert not markers(tmp_path)


# --- last: no marker anywhere -------------------------------------------------------------


def test_no_marker_file_anywhere(e2e, tmp_path_factory):
    """After everything above: no marker under this session's tmp folders (the
    pipeline's working folder and TMPDIR among them), in the home folder, the system's
    temporary folder or the repository."""
    assert markers(tmp_path_factory.getbasetemp()) == []
    roots = {Path.home(), Path(tempfile.gettempdir()), Path("/tmp"), ROOT, Path.cwd()}
    assert markers(*roots, deep=False) == []
