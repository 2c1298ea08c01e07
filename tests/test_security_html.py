"""Issue 34: the HTML pages manetlab writes are safe to open whatever the result
folder holds. Names may contain ``< > " ' & $ \\`` (docs/scenarios.md), and a result
folder may come from anyone, so summary.json, scenario.json and trace.tr are
tampered with here on top of hostile scenario and flow names.

Two layers, each checked on its own:

* escaping: the pages parsed as HTML hold only the elements and attributes manetlab
  writes (no ``on*=``, no ``style=``, no ``javascript:`` link, no script but the
  page's own), every hostile value appears as text, and the animation's JSON cannot
  end its ``<script>`` element (reproducer 12: ``<!--<script>`` in a name);
* the Content-Security-Policy: it runs only the page's own script and style (their
  SHA-256), loads nothing.

Then in headless Chromium (skipped where there is none): report.html and
animate.html open, the page's own script runs, clicking a node opens its panel with
the tampered trace fields shown as text, no payload runs (with the CSP and with the
CSP removed, so the escaping is tested by itself), and the browser reports no CSP
violation and no error; the comparison and reproduction reports likewise (figures
shown, styles applied, nothing run, no violation).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import manetlab
from manetlab.animate import animate
from manetlab.animate.browser import chromium_paths
from manetlab.plots import KINDS
from manetlab.report import report
from manetlab.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "robustness-found-2026-11-29"

# Each payload, if it ever ran, sets window.__pwned or the document's title.
P_IMG = "<img src=x onerror=window.__pwned=1>"
P_ATTR = '"><script>window.__pwned=2</script>'
P_END = "</script><script>window.__pwned=3</script>"
P_COMMENT = "<!--<script>"
P_JS = "javascript:document.title='PWNED'"
P_QUOTE = "' onmouseover='window.__pwned=4' x='"
P_AMP = "&amp; &lt;b&gt; & $\\frac{$"  # entities stay text; TeX stays text in figures

SCENARIO_NAME = f"run {P_COMMENT} {P_IMG} {P_AMP}"
FLOW_NAMES = [f"cbr {P_ATTR} {P_QUOTE}", f"ftp {P_END} {P_JS}"]
# Tampered files may hold what a name may not (control and format characters).
TAMPERED_VERSION = f"0.1.0 </title>{P_END}\u2028\u2029<!--"
TAMPERED_TRANSPORT = "<svg onload=window.__pwned=5>"
TAMPERED_SEED = f"1 {P_IMG}"
TAMPERED_COLUMN = f"<th onclick=window.__pwned=6>{P_END}"
TAMPERED_ROUTING = f"{P_IMG} \u2028"
# trace.tr fields split on whitespace: payloads without spaces.
TRACE_LEVEL = "<b>RTR</b>"
TRACE_REASON = "<img/src=x/onerror=window.__pwned=7>"
TRACE_PTYPE = "</script><script>window.__pwned=8</script>"
TRACE_DROP_S = 1.0
TRACE_DROP_NODE = 1


def hostile_scenario() -> dict[str, Any]:
    return {
        "name": SCENARIO_NAME,
        "seed": 1,
        "duration_s": 3.0,
        "nodes": {"count": 3, "placement": {"kind": "chain", "spacing_m": 200.0}},
        "radio": {},
        "flows": [
            {"name": FLOW_NAMES[0], "kind": "cbr", "src": 0, "dst": 2, "rate_kbps": 50.0},
            {"name": FLOW_NAMES[1], "kind": "ftp", "src": 2, "dst": 0, "transport": "newreno", "tcp": {"trace": True}},
        ],
        "outputs": {"trace": "old", "trace_levels": ["agt", "rtr", "ifq", "mac"], "movement": True, "series": True},
    }


def tamper(rdir: Path) -> None:
    """What someone handing over a result folder could write into it."""
    sp = rdir / "summary.json"
    s = json.loads(sp.read_text(encoding="utf-8"))
    s["manetlab_version"] = TAMPERED_VERSION
    s["seed"] = TAMPERED_SEED
    s["flows"][0]["transport"] = TAMPERED_TRANSPORT
    s["nodes"][0][TAMPERED_COLUMN] = P_IMG
    sp.write_text(json.dumps(s), encoding="utf-8")
    cp = rdir / "scenario.json"
    c = json.loads(cp.read_text(encoding="utf-8"))
    c["routing"] = {"protocol": TAMPERED_ROUTING}
    cp.write_text(json.dumps(c), encoding="utf-8")
    # A drop at node 1, in time order, with HTML in the level, reason and packet type.
    tp = rdir / "trace.tr"
    lines = tp.read_text(encoding="ascii").splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if float(ln.split()[1]) > TRACE_DROP_S)
    drop = f"D {TRACE_DROP_S:.9f} _{TRACE_DROP_NODE}_ {TRACE_LEVEL} {TRACE_REASON} 999999 {TRACE_PTYPE} 532 [0 0 0 0] ------- [0:0 2:0 32 2] [0] 0 0\n"
    # And one at a node the run does not have (the page has nowhere to draw it).
    stray = f"D {TRACE_DROP_S:.9f} _99_ RTR NRTE 999998 cbr 532 [0 0 0 0] ------- [0:0 2:0 32 2] [0] 0 0\n"
    tp.write_text("".join(lines[:at] + [drop, stray] + lines[at:]), encoding="ascii")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rdir = tmp_path_factory.mktemp("hostile") / "run"
    manetlab.run(hostile_scenario(), out=rdir)
    tamper(rdir)
    a = animate(rdir)
    r = report(rdir)
    return {"dir": rdir, "animation": a, "animate.html": a.path, "report.html": r}


# --- the pages parsed as HTML ------------------------------------------------------


class Parsed(HTMLParser):
    """Every start tag with its attributes, the text (entities decoded), and the
    contents of <script> and <style> elements as written."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._in = tag
            self.raw[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw[self._in][-1] += data
        else:
            self.text.append(data)

    def attrs(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]

    def all_text(self) -> str:
        return "".join(self.text)


def _sha(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


def check_structure(page: str, allowed_tags: set[str], scripts: int) -> Parsed:
    """The page holds only manetlab's own markup, and its CSP admits exactly its own
    inline script(s) and style."""
    p = Parsed(page)
    tags = {t for t, _ in p.tags}
    assert tags <= allowed_tags, tags - allowed_tags
    for tag, attrs in p.tags:
        for name, value in attrs.items():
            assert not name.startswith("on") and name != "style", (tag, name, value)
            if name == "href":
                assert value and not re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", value), value  # relative paths only
            if name == "src":
                assert tag == "img" and value and re.fullmatch(r"data:image/svg\+xml;base64,[A-Za-z0-9+/=]+", value), (tag, value[:80] if value else value)
    csps = [a["content"] for a in p.attrs("meta") if (a.get("http-equiv") or "").lower() == "content-security-policy"]
    assert len(csps) == 1
    csp = csps[0]
    assert csp
    directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ")}
    assert directives["default-src"] == ["'none'"] and "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert directives["base-uri"] == ["'none'"] and directives["require-trusted-types-for"] == ["'script'"]
    code = [s for (t, a), s in zip([x for x in p.tags if x[0] == "script"], p.raw["script"]) if a.get("type") != "application/json"]
    assert len(code) == scripts
    assert directives.get("script-src", []) == [_sha(s) for s in code]
    assert directives["style-src"] == [_sha(s) for s in p.raw["style"]] and len(p.raw["style"]) == 1
    assert ("img-src" in directives) == bool(p.attrs("img"))
    # The CSP comes before any script or style.
    first = next(i for i, (t, _) in enumerate(p.tags) if t in ("script", "style"))
    assert any(t == "meta" and a.get("http-equiv") for t, a in p.tags[:first])
    return p


REPORT_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "a", "code", "table", "thead", "tbody", "tr", "th", "td", "figure", "figcaption", "img", "pre"}
ANIMATE_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "div", "button", "label", "input", "span", "select", "option", "canvas", "script"}


def test_report_escapes_every_value(hostile):
    page = hostile["report.html"].read_text(encoding="utf-8")
    p = check_structure(page, REPORT_TAGS, scripts=0)
    text = p.all_text()
    for value in (SCENARIO_NAME, *FLOW_NAMES, TAMPERED_VERSION, TAMPERED_TRANSPORT, TAMPERED_SEED, TAMPERED_COLUMN, P_IMG):
        assert value in text, value  # shown, as text
    # The scenario is shown as JSON text (its strings JSON-escaped), the routing too.
    assert json.dumps(TAMPERED_ROUTING) in text
    assert [a["alt"] for a in p.attrs("img")] == list(KINDS)  # every figure: the names did not break one
    assert p.attrs("a") == [{"href": "animate.html"}]


def test_animation_page_escapes_every_value(hostile):
    page = hostile["animate.html"].read_text(encoding="utf-8")
    p = check_structure(page, ANIMATE_TAGS, scripts=1)
    js = (ROOT / "python" / "manetlab" / "animate" / "page.js").read_text(encoding="utf-8")
    assert p.raw["script"][1] == js, "the page's script is whole: the data block did not swallow it"
    raw = p.raw["script"][0]
    assert not set(raw) & set("<>&\u2028\u2029"), "nothing in the JSON can end or re-open a <script>"
    doc = json.loads(raw)
    assert doc == json.loads(json.dumps(hostile["animation"].data.doc))
    assert doc["scenario_name"] == SCENARIO_NAME and doc["manetlab_version"] == TAMPERED_VERSION
    assert [f["name"] for f in doc["flows"]] == FLOW_NAMES and doc["flows"][0]["transport"] == TAMPERED_TRANSPORT
    assert TRACE_REASON in doc["drops"]["reasons"] and TRACE_LEVEL in doc["drops"]["levels"] and TRACE_PTYPE in doc["drops"]["ptypes"]
    assert [d[1:3] for d in hostile["animation"].data.drops if d[0] == TRACE_DROP_S] == [[TRACE_DROP_NODE, TRACE_REASON]], "node 99 left out"
    text = p.all_text()
    assert f"manetlab animate: {SCENARIO_NAME} (seed {TAMPERED_SEED})" in text
    assert TAMPERED_VERSION in text and TAMPERED_ROUTING in text


def test_animation_page_of_characters_html_cannot_hold(hostile, tmp_path):
    """A tampered summary may hold NUL (the page's own size marker), other control
    characters and lone surrogates (valid JSON, not UTF-8): shown as U+FFFD."""
    rdir = tmp_path / "run"
    shutil.copytree(hostile["dir"], rdir)
    s = json.loads((rdir / "summary.json").read_text())
    s["scenario_name"] = "x\x00size\x00 \x1b[31m \ud800"
    (rdir / "summary.json").write_text(json.dumps(s))
    a = animate(rdir)
    page = a.path.read_text(encoding="utf-8")
    assert "\x00" not in page and "\x1b" not in page
    assert page.count(f"this page {a.bytes / 1e6:.1f} MB") == 1
    assert "<title>manetlab animate: x\ufffdsize\ufffd \ufffd[31m \ufffd (seed " in page
    assert json.loads(Parsed(page).raw["script"][0])["scenario_name"] == s["scenario_name"]


def test_page_js_builds_no_html_from_strings():
    """page.js puts data into the page with DOM calls only: no HTML parsing sinks, no
    handler attributes, no eval."""
    js = (ROOT / "python" / "manetlab" / "animate" / "page.js").read_text(encoding="utf-8")
    code = "\n".join(ln for ln in js.splitlines() if not ln.lstrip().startswith("//"))
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute", ".onclick", ".oninput", ".onchange", "cssText"):
        assert sink not in code, sink


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from manetlab.compare import compare

    s = {**hostile_scenario(), "duration_s": 2.0, "outputs": {}}
    return compare(Scenario(s), 1, ["newreno", "sack"]).write(tmp_path_factory.mktemp("cmp") / "cmp")


def test_comparison_report_escapes_the_name(comparison):
    page = comparison.read_text(encoding="utf-8")
    p = check_structure(page, REPORT_TAGS | {"ul", "li"}, scripts=0)
    assert f"{SCENARIO_NAME}: flow 1" in p.all_text()
    assert [a["href"] for a in p.attrs("a")] == ["newreno/summary.json", "sack/summary.json"]
    assert len(p.attrs("img")) == 3


REPRO_TEXT = f"{P_IMG} {P_END} {P_COMMENT} {P_QUOTE}"


def reproduction_page() -> str:
    from manetlab.reproduce.base import Claim, Difference, Figure, Report, Table, to_html

    h = REPRO_TEXT
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100"><style>rect{fill:#1f77b4}</style><rect width="200" height="100"/></svg>'
    r = Report(name=h, title=h, citation=h, setup=[h], tables=[Table(h, [h, "b"], [[h, "1"]], [h], ["b"], caption=h)],
               figures=[Figure("f", h, h, svg=svg)],
               claims=[Claim(h, h, "holds", h, h)], differences=[Difference(h, h, h, h, h)], run={"command": h, "summary": h, h: h}, notes=[h])
    return to_html(r)


def test_reproduction_report_escapes_and_has_a_csp():
    p = check_structure(reproduction_page(), REPORT_TAGS | {"h3", "em", "ul", "li", "span"}, scripts=0)
    assert p.all_text().count(REPRO_TEXT) >= 15
    assert [a["alt"] for a in p.attrs("img")] == [REPRO_TEXT]


def test_report_link_to_a_folder_named_like_a_url(tmp_path):
    """A relative link never becomes a ``javascript:`` URL; a folder's name shown
    when the summary has no scenario name is text."""
    rdir = tmp_path / f"javascript:document.title='PWNED'{P_IMG}"
    manetlab.run({**hostile_scenario(), "duration_s": 1.0, "outputs": {}}, out=rdir)
    s = json.loads((rdir / "summary.json").read_text())
    del s["scenario_name"]
    (rdir / "summary.json").write_text(json.dumps(s))
    (rdir / "animate.html").write_text("not an animation")
    page = report(rdir, tmp_path / "r.html").read_text(encoding="utf-8")
    p = check_structure(page, REPORT_TAGS, scripts=0)
    assert [a["href"] for a in p.attrs("a")] == ["javascript%3Adocument.title%3D%27PWNED%27%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D1%3E/animate.html"]
    assert rdir.name in p.all_text()


def test_reproducer_12_name_opening_a_script_comment(tmp_path):
    """``<!--<script>`` in the name put the tokenizer in the double-escaped state: the
    JSON block swallowed the page's script and the animation never started."""
    from manetlab.animate import animate_outputs
    from manetlab.scenario import load_scenario

    s = load_scenario(FIXTURES / "12_animate_page_broken_by_name.toml")
    manetlab.run(s.with_overrides(animate_outputs(s.normalized)), out=tmp_path / "run")
    page = animate(tmp_path / "run").path.read_text(encoding="utf-8")
    p = check_structure(page, ANIMATE_TAGS, scripts=1)
    assert json.loads(p.raw["script"][0])["scenario_name"] == "run <!--<script>"
    assert p.raw["script"][1] == (ROOT / "python" / "manetlab" / "animate" / "page.js").read_text(encoding="utf-8")
    assert page.count("<script") == 2 and "<!--" not in page


# --- in a real browser ------------------------------------------------------------

needs_browser = pytest.mark.skipif(
    importlib.util.find_spec("selenium") is None or chromium_paths() is None,
    reason="needs selenium (pip install -e '.[dev]') and chromium + chromedriver on PATH (apt-get install chromium chromium-driver)",
)
DOC_READY = "document.readyState === 'complete'"


def _open(path: Path, **kw: Any):
    from manetlab.animate.browser import open_page

    return open_page(path, **kw)


def _without_csp(page: Path, out: Path) -> Path:
    """The page with its CSP removed: what the escaping alone holds."""
    text = page.read_text(encoding="utf-8")
    stripped = re.sub(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">', "", text, count=1)
    assert stripped != text
    out.write_text(stripped, encoding="utf-8")
    return out


def _not_pwned(page) -> None:
    assert page.js("return window.__pwned === undefined"), page.js("return window.__pwned")
    assert "PWNED" not in page.js("return document.title")


def _wait_frames(page, n: int) -> dict[str, Any]:
    """The page's state once it has drawn `n` frames more (playing); fails only if it
    never does (a generous bound, not a timing check)."""
    start = page.state()["frames"]
    deadline = time.monotonic() + 30
    while (s := page.state())["frames"] < start + n:
        assert time.monotonic() < deadline, "the animation does not advance"
        time.sleep(0.02)
    return s


def _screenshot(page, path: Path) -> None:
    shot = page.screenshot(path)
    assert shot.stat().st_size > 10_000
    if os.environ.get("MANETLAB_SCREENSHOT_DIR"):
        shutil.copy(shot, Path(os.environ["MANETLAB_SCREENSHOT_DIR"]) / path.name)


@needs_browser
@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "without-csp"])
def test_report_in_browser(hostile, tmp_path, csp):
    path = hostile["report.html"] if csp else _without_csp(hostile["report.html"], hostile["dir"] / "report-nocsp.html")
    page = _open(path, ready=DOC_READY)
    try:
        # Hover over and click everything holding a payload.
        from selenium.webdriver.common.action_chains import ActionChains

        hover = ActionChains(page.driver)
        shown = page.js("return [...document.querySelectorAll('h1, p, th, td, pre')].filter(function (e) { return e.textContent.includes('<'); })")
        assert len(shown) >= 6
        for e in shown:
            hover.move_to_element(e).click()
        hover.perform()
        _not_pwned(page)
        assert page.js("return document.querySelector('h1').textContent") == SCENARIO_NAME
        assert page.js("return document.title") == f"manetlab: {SCENARIO_NAME}"
        # The figures render (SVG images under img-src data:), and the style applies.
        sizes = page.js("return [...document.images].map(function (i) { return [i.complete, i.naturalWidth]; })")
        assert len(sizes) == len(KINDS) and all(c and w > 100 for c, w in sizes), sizes
        assert page.js("return getComputedStyle(document.body).fontFamily") == "sans-serif"
        if csp:
            page.js("window.scrollTo(0, 0)")
            _screenshot(page, tmp_path / "report-hostile.png")
        assert page.csp_violations() == []
        assert page.console_errors() == []
    finally:
        page.close()


@needs_browser
def test_reproduction_report_in_browser(tmp_path):
    path = tmp_path / "report.html"
    path.write_text(reproduction_page(), encoding="utf-8")
    page = _open(path, ready=DOC_READY)
    try:
        _not_pwned(page)
        assert page.js("return document.querySelector('h1').textContent") == f"Reproduction: {REPRO_TEXT}"
        assert page.js("return [...document.images].map(function (i) { return i.naturalWidth; })") == [200]
        assert page.js("return getComputedStyle(document.querySelector('.holds')).fontWeight") == "700"
        assert page.csp_violations() == []
        assert page.console_errors() == []
    finally:
        page.close()


@needs_browser
def test_comparison_report_in_browser(comparison, tmp_path):
    page = _open(comparison, ready=DOC_READY)
    try:
        _not_pwned(page)
        assert page.js("return document.querySelector('h1').textContent") == f"{SCENARIO_NAME}: flow 1"
        sizes = page.js("return [...document.images].map(function (i) { return [i.complete, i.naturalWidth]; })")
        assert len(sizes) == 3 and all(c and w > 100 for c, w in sizes), sizes
        _screenshot(page, tmp_path / "compare-hostile.png")
        assert page.csp_violations() == []
        assert page.console_errors() == []
    finally:
        page.close()


@needs_browser
@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "without-csp"])
def test_animation_in_browser(hostile, tmp_path, csp):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    path = hostile["animate.html"] if csp else _without_csp(hostile["animate.html"], hostile["dir"] / "animate-nocsp.html")
    page = _open(path)  # returns once the page's own script has set window.manetlab.ready
    try:
        page.js("manetlab.setSpeed(5); manetlab.play()")
        s = _wait_frames(page, 3)
        page.js("manetlab.pause()")
        assert s["t"] > 0, "the animation plays"
        # Click node 1 on the map after the tampered drop: its panel lists it, as text.
        page.js("manetlab.seek(arguments[0])", TRACE_DROP_S + 0.2)
        canvas = page.driver.find_element(By.ID, "map")
        x, y = page.js(f"return manetlab.pixel({TRACE_DROP_NODE})")
        w, h = canvas.size["width"], canvas.size["height"]
        ActionChains(page.driver).move_to_element_with_offset(canvas, int(x - w / 2), int(y - h / 2)).click().perform()
        assert page.state()["panel"]["node"] == TRACE_DROP_NODE
        side = page.js("return document.getElementById('side').textContent")
        assert f"{TRACE_DROP_S:.3f} {TRACE_LEVEL} {TRACE_REASON} {TRACE_PTYPE}" in side
        assert page.js("return document.querySelectorAll('#side img, #side script, #side b, #side svg').length") == 0
        # Flow names and the tampered transport are text in the flow list and chart titles.
        labels = page.js("return [...document.querySelectorAll('#flows label')].map(function (l) { return l.textContent; })")
        assert labels[2:] == [f"flow {i} {n}" for i, n in enumerate(FLOW_NAMES)]
        titles = page.js("return [...document.querySelectorAll('#charts .t')].map(function (l) { return l.textContent; })")
        assert titles[0] == f"flow 0 {FLOW_NAMES[0]} (cbr {TAMPERED_TRANSPORT}, 0→2)"
        assert page.js("return document.querySelector('header h1').textContent") == f"manetlab animate: {SCENARIO_NAME} (seed {TAMPERED_SEED})"
        # Click the other nodes and the flow boxes, hover the header: nothing runs.
        for i in (0, 2):
            x, y = page.js(f"return manetlab.pixel({i})")
            ActionChains(page.driver).move_to_element_with_offset(canvas, int(x - w / 2), int(y - h / 2)).click().perform()
            assert page.state()["panel"]["node"] == i
        for box in page.driver.find_elements(By.CSS_SELECTOR, "#flows input")[2:]:
            box.click()
            box.click()
        ActionChains(page.driver).move_to_element(page.driver.find_element(By.CSS_SELECTOR, "header")).perform()
        _not_pwned(page)
        if csp:
            page.js(f"manetlab.selectNode({TRACE_DROP_NODE})")
            _screenshot(page, tmp_path / "animate-hostile.png")
        assert page.csp_violations() == []
        assert page.console_errors() == []
    finally:
        page.close()


@needs_browser
def test_reproducer_12_animation_starts(tmp_path):
    from manetlab.animate import animate_outputs
    from manetlab.scenario import load_scenario

    s = load_scenario(FIXTURES / "12_animate_page_broken_by_name.toml")
    manetlab.run(s.with_overrides(animate_outputs(s.normalized)), out=tmp_path / "run")
    page = _open(animate(tmp_path / "run").path)  # was: window.manetlab never set
    try:
        page.js("manetlab.play()")
        assert _wait_frames(page, 3)["t"] > 0
        assert page.js("return document.querySelector('header h1').textContent") == "manetlab animate: run <!--<script> (seed 1)"
        assert page.csp_violations() == [] and page.console_errors() == []
    finally:
        page.close()
