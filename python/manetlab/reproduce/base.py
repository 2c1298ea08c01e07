"""The parts a paper module is made of, the statistics its claims use, and the
report writer (Markdown + self-contained HTML + JSON), docs/reproduce.md.

A paper module declares a `Paper`: its study (a study mapping, plus an optional
`SeedHook`), and turns the finished study into `Table`s (the paper's values
beside ours), `Figure`s, `Claim`s (each checked by a stated test) and
`Difference`s (every way our setup differs, with the reason). Everything here is
generic; nothing is specific to one paper.
"""

from __future__ import annotations

import html
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from manetlab import _html
from manetlab.plots import pyplot
from manetlab.stats import MeanCI, mean_ci

if TYPE_CHECKING:
    import pandas as pd

    from manetlab.study import SeedHook, Study

__all__ = [
    "Claim",
    "Context",
    "Difference",
    "Figure",
    "Paper",
    "Report",
    "Table",
    "HOLDS",
    "NOT_HOLDS",
    "INCONCLUSIVE",
    "fmt_ci",
    "positive_test",
    "equivalence_test",
    "all_of",
    "combine",
    "finite",
    "flow_sum",
    "seed_diffs",
    "pyplot",
    "ci_errors",
    "paper_vs_ours_bars",
]

HOLDS = "holds"
NOT_HOLDS = "does not hold"
INCONCLUSIVE = "inconclusive at this sample size"
VERDICTS = (HOLDS, NOT_HOLDS, INCONCLUSIVE)

#: Reasons a difference from the paper can have.
STATED = "stated"  # the paper states it and we do the same, or we cannot and say why
ASSUMED = "assumed"  # the paper does not state it: a default of the paper's ns-2, or our choice
LOST = "lost"  # the paper had it, our copy lost it (figures are images)
OURS = "model"  # our simulator's model differs from ns-2's on this point


@dataclass
class Table:
    """A table of the paper with its values beside ours. ``paper_columns`` and
    ``ours_columns`` name the columns holding each side (the test checks both are
    filled in every row)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    paper_columns: list[str]
    ours_columns: list[str]
    caption: str = ""


@dataclass
class Figure:
    """A figure: a name (file stem), a title, a caption, and the matplotlib figure
    (rendered to SVG/PNG by the report)."""

    name: str
    title: str
    caption: str
    fig: Any = field(repr=False, default=None)
    svg: str = field(repr=False, default="")


@dataclass
class Claim:
    """A claim of the paper (quoted or paraphrased, with where it is), its verdict
    on our runs, the test used and the numbers behind the verdict."""

    claim: str
    where: str
    verdict: str
    test: str
    evidence: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, not {self.verdict!r}")

    @classmethod
    def of_parts(cls, claim: str, where: str, parts: Sequence[tuple[str, str, str]], names: Sequence[str], test_note: str = "") -> Claim:
        """A claim made of several tests (`all_of`): the first part's test stands for
        all of them (they differ only in what they compare), plus `test_note`."""
        verdict, ev = all_of(parts, names)
        return cls(claim, where, verdict, parts[0][1] + test_note, ev)


@dataclass
class Difference:
    """One way our setup differs from (or fills a gap in) the paper's."""

    topic: str
    paper: str
    ours: str
    reason: str  # STATED / ASSUMED / LOST / OURS
    why: str


@dataclass
class Report:
    name: str
    title: str
    citation: str
    setup: list[str]
    tables: list[Table]
    figures: list[Figure]
    claims: list[Claim]
    differences: list[Difference]
    run: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    extra_tables: list[Table] = field(default_factory=list)  # ours only (no paper values)


class Context:
    """What a paper module gets to build its report: the study (finished), its
    per-run results, whether this is the quick variant, and a scratch directory."""

    def __init__(self, study: Study, quick: bool, out: Path) -> None:
        self.study = study
        self.quick = quick
        self.out = out
        self._results: pd.DataFrame | None = None
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """`make()`, computed once per report under `key`: what a paper's tables,
        claims, figures and notes all read (a per-run table, a second study)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @property
    def results(self) -> pd.DataFrame:
        if self._results is None:
            self._results = self.study.results()
        return self._results

    def cell_runs(self, **values: Any) -> pd.DataFrame:
        """The runs of the cells whose axis values equal `values` (keys are axis
        keys with dots and brackets, passed as a dict: ``cell_runs(**{"routing.protocol": "aodv"})``)."""
        df = self.results
        for k, v in values.items():
            df = df[df[k] == v]
        return df

    def cell(self, **values: Any) -> Any:
        """The one study cell with these axis values."""
        found = [c for c in self.study.cells if all(c.values.get(k) == v for k, v in values.items())]
        if len(found) != 1:
            raise KeyError(f"{values}: {len(found)} cells match")
        return found[0]

    def rerun(self, cell: Any, seed: int, overrides: dict[str, Any], checks: dict[str, tuple[int, str]], out: Path | None = None) -> Any:
        """Run (cell, seed) again with `overrides` that only record more (a trace, a
        time series; into `out` if given) and check that it is still the stored run:
        each stored metric of `checks` must equal the rerun's value at (flow index,
        column of its flows table). Returns the rerun's `manetlab.Result`."""
        import manetlab

        res = manetlab.run(self.study.scenario_for(cell, seed).with_overrides(overrides), out=out)
        stored = self.results[(self.results["cell"] == cell.index) & (self.results["seed"] == seed)]
        for metric, (flow, column) in checks.items():
            got, want = float(res.flows[column].loc[flow]), float(stored[metric].iloc[0])
            if got != want:
                raise RuntimeError(f"traced rerun of seed {seed} ({cell.label()}) differs from the stored run: {metric} {got} vs {want}")
        return res

    def paired(self, axis: str, new: Any, base: Any, metric: str, **fixed: Any) -> tuple[list[int], list[float], list[float]]:
        """Seeds and the paired values of `metric` for `new` and `base` of `axis`,
        in the cells matching `fixed` (the seeds both finished)."""
        a = self.cell_runs(**{axis: new, **fixed}).set_index("seed")[metric]
        b = self.cell_runs(**{axis: base, **fixed}).set_index("seed")[metric]
        seeds = sorted(set(a.index) & set(b.index))
        return seeds, [float(a[s]) for s in seeds], [float(b[s]) for s in seeds]


class Paper:
    """A reproduced paper. Subclasses set the attributes and implement the methods."""

    name: str = ""
    title: str = ""
    citation: str = ""
    paper_file: str = ""  # the paper's text under /work/shared/papers (provenance)
    full_seeds: str = ""
    quick_seeds: str = ""
    description: str = ""  # the study's description
    metrics: Sequence[str] = ()  # the study's metrics (docs/studies.md)

    def seeds(self, quick: bool) -> str:
        return self.quick_seeds if quick else self.full_seeds

    def scenario(self) -> dict[str, Any]:
        """The base scenario (inline in the study)."""
        raise NotImplementedError

    def axes(self, quick: bool) -> dict[str, Any]:
        """What the study varies: its ``grid`` and/or ``zip`` keys (and ``derived``)."""
        raise NotImplementedError

    def study(self, quick: bool) -> dict[str, Any]:
        """The study as a mapping (docs/studies.md), inline scenario included:
        named after the paper (``NAME-quick`` for the quick variant)."""
        return {
            "name": f"{self.name}-quick" if quick else self.name,
            "description": self.description,
            "scenario": self.scenario(),
            "seeds": self.seeds(quick),
            "metrics": list(self.metrics),
            **self.axes(quick),
        }

    def seed_hook(self) -> SeedHook | None:
        return None

    def setup(self) -> list[str]:
        raise NotImplementedError

    def differences(self) -> list[Difference]:
        raise NotImplementedError

    def tables(self, ctx: Context) -> list[Table]:
        raise NotImplementedError

    def extra_tables(self, ctx: Context) -> list[Table]:
        return []

    def claims(self, ctx: Context) -> list[Claim]:
        raise NotImplementedError

    def figures(self, ctx: Context) -> list[Figure]:
        raise NotImplementedError

    def notes(self, ctx: Context) -> list[str]:
        return []


# ----------------------------------------------------------------------------- statistics


def fmt(v: float, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:.{digits}f}"


def fmt_ci(values: Sequence[float], digits: int = 2) -> str:
    """``mean [low, high]`` of the values (95 % Student t), or the mean alone for n = 1."""
    m = mean_ci(values)
    if m.n == 0:
        return "n/a (no runs)"
    if m.n == 1:
        return f"{fmt(m.mean, digits)} (n=1)"
    return f"{fmt(m.mean, digits)} [{fmt(m.ci_low, digits)}, {fmt(m.ci_high, digits)}]"


def positive_test(diffs: Sequence[float], what: str, unit: str = "") -> tuple[str, str, str]:
    """Is the mean of paired differences > 0? Two-sided 95 % Student-t interval of
    the mean difference (a paired t-test at 5 %): holds if the interval is above 0,
    does not hold if it is below or at 0 entirely, else inconclusive.
    Returns (verdict, test, evidence)."""
    m = mean_ci(diffs)
    test = f"paired t-test: 95 % CI of the mean per-scenario difference ({what})"
    if m.n < 2:
        return INCONCLUSIVE, test, f"n = {m.n}: too few paired runs for an interval"
    ev = f"mean {fmt(m.mean)}{unit}, 95 % CI [{fmt(m.ci_low)}, {fmt(m.ci_high)}]{unit}, n = {m.n}"
    if m.ci_low > 0:
        return HOLDS, test, ev
    if m.ci_high <= 0:
        return NOT_HOLDS, test, ev
    return INCONCLUSIVE, test, ev


def equivalence_test(diffs: Sequence[float], margin: float, what: str, unit: str = "") -> tuple[str, str, str]:
    """Are the two the same within ±margin? Holds if the 95 % CI of the mean paired
    difference lies inside (−margin, +margin) (two one-sided tests at 2.5 %), does
    not hold if it lies entirely outside, else inconclusive."""
    m = mean_ci(diffs)
    test = f"equivalence (TOST): 95 % CI of the mean per-scenario difference ({what}) inside ±{fmt(margin)}{unit}"
    if m.n < 2:
        return INCONCLUSIVE, test, f"n = {m.n}: too few paired runs for an interval"
    ev = f"mean {fmt(m.mean)}{unit}, 95 % CI [{fmt(m.ci_low)}, {fmt(m.ci_high)}]{unit}, n = {m.n}"
    if -margin < m.ci_low and m.ci_high < margin:
        return HOLDS, test, ev
    if m.ci_low >= margin or m.ci_high <= -margin:
        return NOT_HOLDS, test, ev
    return INCONCLUSIVE, test, ev


def combine(verdicts: Sequence[str]) -> str:
    """The verdict of a claim made of several parts: holds if every part holds,
    does not hold if any part does not, else inconclusive."""
    if all(v == HOLDS for v in verdicts):
        return HOLDS
    if any(v == NOT_HOLDS for v in verdicts):
        return NOT_HOLDS
    return INCONCLUSIVE


def all_of(parts: Sequence[tuple[str, str, str]], names: Sequence[str]) -> tuple[str, str]:
    """`combine` over tests' results (verdict, test, evidence), with every part's
    evidence under its name. Returns (verdict, evidence)."""
    ev = "; ".join(f"{n}: {p[0]} ({p[2]})" for n, p in zip(names, parts))
    return combine([p[0] for p in parts]), ev


def finite(values: Any) -> list[float]:
    """The values as floats, NaNs (what a run could not measure) left out."""
    return [float(v) for v in values if not math.isnan(float(v))]


def flow_sum(df: pd.DataFrame, field: str, n_flows: int) -> pd.Series:
    """Per run, `field` summed over flows 0 … n_flows − 1 (their ``flowI.field`` columns)."""
    # n_flows >= 1, so never sum's start value 0.
    return cast("pd.Series", sum(df[f"flow{i}.{field}"] for i in range(n_flows)))


def seed_diffs(new: pd.Series, base: pd.Series) -> list[float]:
    """Per-seed differences new − base (both indexed by seed: the same seed is the
    same scenario, common random numbers), over the seeds both have, in seed order;
    a pair with a NaN is left out."""
    seeds = sorted(set(new.index) & set(base.index))
    return [float(new[s] - base[s]) for s in seeds if not (math.isnan(new[s]) or math.isnan(base[s]))]


# ----------------------------------------------------------------------------- figures


def ci_errors(ms: Sequence[MeanCI]) -> tuple[list[float], list[float]]:
    """Error bars (below, above the mean) of 95 % intervals; 0 where there is none (n < 2)."""
    return ([m.mean - m.ci_low if not math.isnan(m.ci_low) else 0.0 for m in ms],
            [m.ci_high - m.mean if not math.isnan(m.ci_high) else 0.0 for m in ms])


def paper_vs_ours_bars(ax: Any, labels: Sequence[str], paper: Sequence[float], ours: Sequence[MeanCI], capsize: float, **tick_kw: Any) -> None:
    """A paper's values (hatched) beside ours (solid: mean with its 95 % CI) per label."""
    x = list(range(len(labels)))
    ax.bar([i - 0.2 for i in x], paper, 0.4, label="paper", color="white", edgecolor="#555", hatch="///")
    ax.bar([i + 0.2 for i in x], [m.mean if m.n else 0.0 for m in ours], 0.4, yerr=ci_errors(ours), capsize=capsize,
           color="#3b75af", label="ours (mean, 95 % CI)")
    ax.set_xticks(x, labels, **tick_kw)


# ----------------------------------------------------------------------------- rendering


def render_figures(figures: list[Figure], fig_dir: Path) -> None:
    """Each figure to ``fig_dir/<name>.svg`` and ``.png``; its SVG text kept for the HTML."""
    import matplotlib.pyplot as plt

    from manetlab import safeio

    safeio.ensure_dir(fig_dir)  # a real folder: a planted link would redirect every figure
    for f in figures:
        if f.fig is None:
            continue
        buf = io.StringIO()
        # A fixed id salt: the same figure gives the same SVG bytes on every run.
        with plt.rc_context({"svg.hashsalt": f.name}):
            f.fig.savefig(buf, format="svg", dpi=110, metadata={"Date": None, "Creator": None})
        text = buf.getvalue()
        f.svg = text[text.index("<svg"):]
        safeio.write_text(fig_dir / f"{f.name}.svg", text)  # whole, never through a link
        png = io.BytesIO()
        f.fig.savefig(png, format="png", dpi=100, metadata={"Software": None})
        safeio.write_bytes(fig_dir / f"{f.name}.png", png.getvalue())
        plt.close(f.fig)
        f.fig = None


def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _md_table(t: Table) -> str:
    lines = ["| " + " | ".join(_md_escape(c) for c in t.columns) + " |", "|" + "|".join("---" for _ in t.columns) + "|"]
    lines += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in t.rows]
    return "\n".join(lines)


def to_markdown(r: Report) -> str:
    run = r.run
    out = [f"# Reproduction: {r.title}", "", f"*{r.citation}*", ""]
    out += [f"`{run['command']}` — {run['summary']}", ""]
    out += ["## Setup as we read it", ""] + [f"* {s}" for s in r.setup] + [""]
    out += ["## Tables: the paper's values beside ours", ""]
    for t in r.tables:
        out += [f"### {t.title}", "", _md_table(t), ""]
        if t.caption:
            out += [t.caption, ""]
    if r.extra_tables:
        out += ["## Our further measurements (no paper values)", ""]
        for t in r.extra_tables:
            out += [f"### {t.title}", "", _md_table(t), ""]
            if t.caption:
                out += [t.caption, ""]
    out += ["## Figures", ""]
    for f in r.figures:
        out += [f"### {f.title}", "", f"![{f.title}](figures/{f.name}.svg)", "", f.caption, ""]
    out += ["## Claims", "", "| claim | where | verdict | test | evidence |", "|---|---|---|---|---|"]
    out += [f"| {_md_escape(c.claim)} | {_md_escape(c.where)} | **{c.verdict}** | {_md_escape(c.test)} | {_md_escape(c.evidence)} |" for c in r.claims]
    out += ["", "## How our setup differs from the paper's", "", "| topic | paper | ours | reason | why |", "|---|---|---|---|---|"]
    out += [f"| {_md_escape(d.topic)} | {_md_escape(d.paper)} | {_md_escape(d.ours)} | {d.reason} | {_md_escape(d.why)} |" for d in r.differences]
    if r.notes:
        out += ["", "## Notes", ""] + [f"* {n}" for n in r.notes]
    out += ["", "## Run", "", "| | |", "|---|---|"]
    out += [f"| {k} | {_md_escape(v)} |" for k, v in run.items() if k not in ("summary",)]
    return "\n".join(out) + "\n"


_CSS = """body{font-family:sans-serif;max-width:1150px;margin:2em auto;color:#222;line-height:1.4}
table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1.2em}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f3f3f3}.holds{color:#176b2c;font-weight:bold}.not{color:#a11;font-weight:bold}.inc{color:#8a6d00;font-weight:bold}
figure{margin:1em 0}figcaption{font-size:13px;color:#444}code{background:#f4f4f4;padding:0 3px}img{max-width:100%;height:auto}"""


def _h(s: Any) -> str:
    text = html.escape(str(s))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{_h(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def to_html(r: Report) -> str:
    run = r.run
    parts = [f"<h1>Reproduction: {_h(r.title)}</h1><p><em>{_h(r.citation)}</em></p>",
             f"<p><code>{_h(run['command'])}</code> — {_h(run['summary'])}</p>",
             "<h2>Setup as we read it</h2><ul>" + "".join(f"<li>{_h(s)}</li>" for s in r.setup) + "</ul>",
             "<h2>Tables: the paper's values beside ours</h2>"]
    for t in r.tables:
        parts.append(f"<h3>{_h(t.title)}</h3>" + _html_table(t.columns, [[_h(c) for c in row] for row in t.rows]) + (f"<p>{_h(t.caption)}</p>" if t.caption else ""))
    if r.extra_tables:
        parts.append("<h2>Our further measurements (no paper values)</h2>")
        for t in r.extra_tables:
            parts.append(f"<h3>{_h(t.title)}</h3>" + _html_table(t.columns, [[_h(c) for c in row] for row in t.rows]) + (f"<p>{_h(t.caption)}</p>" if t.caption else ""))
    parts.append("<h2>Figures</h2>")
    for f in r.figures:
        parts.append(f"<figure><h3>{_h(f.title)}</h3>{_html.svg_img(f.svg, f.title) if f.svg else ''}<figcaption>{_h(f.caption)}</figcaption></figure>")
    cls = {HOLDS: "holds", NOT_HOLDS: "not", INCONCLUSIVE: "inc"}
    parts.append("<h2>Claims</h2>" + _html_table(["claim", "where", "verdict", "test", "evidence"],
                 [[_h(c.claim), _h(c.where), f'<span class="{cls[c.verdict]}">{_h(c.verdict)}</span>', _h(c.test), _h(c.evidence)] for c in r.claims]))
    parts.append("<h2>How our setup differs from the paper's</h2>" + _html_table(["topic", "paper", "ours", "reason", "why"],
                 [[_h(d.topic), _h(d.paper), _h(d.ours), _h(d.reason), _h(d.why)] for d in r.differences]))
    if r.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_h(n)}</li>" for n in r.notes) + "</ul>")
    parts.append("<h2>Run</h2>" + _html_table(["", ""], [[_h(k), _h(v)] for k, v in run.items() if k != "summary"]))
    return f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{_html.csp_meta(styles=[_CSS], images=True)}<title>manetlab reproduce {_h(r.name)}</title><style>{_CSS}</style></head><body>{''.join(parts)}</body></html>\n"


def to_json(r: Report) -> str:
    d = asdict(r)
    for f in d["figures"]:
        f.pop("fig", None)
        f.pop("svg", None)
    return json.dumps(d, indent=1, sort_keys=False, default=str) + "\n"


def write_report(r: Report, out: Path) -> list[Path]:
    """report.md, report.html (self-contained), report.json and figures/ into `out`
    (each file written whole then renamed, so a reader never sees half a report;
    never through a symbolic link: `manetlab.safeio.write_text`)."""
    from manetlab import safeio

    out.mkdir(parents=True, exist_ok=True)
    render_figures(r.figures, out / "figures")
    paths = []
    for name, text in (("report.md", to_markdown(r)), ("report.html", to_html(r)), ("report.json", to_json(r))):
        paths.append(safeio.write_text(out / name, text))
    return paths
