"""The wheel (issue 35): installed into a fresh venv with nothing but its PyPI
dependencies, it runs a scenario, a quick reproduction and `manetlab examples`
with no Rust toolchain on PATH.

Building the wheel takes minutes, so this file never builds it: the wheel tests
run when ``dist/`` holds a wheel for this version (``make wheel``; ``make
test-wheel`` builds it and runs this file) or ``MANETLAB_WHEEL`` names one, and
skip otherwise. ``dist/`` is git-ignored, so a fresh clone (CI) skips them. The
venv's dependencies come from PyPI through pip (minutes the first time, pip's
cache after). The `manetlab examples` tests at the end run against this source
tree and never skip.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

import manetlab
from manetlab.cli import main
from manetlab.packaged import copy_examples, data_source, example_files

REPO = Path(__file__).resolve().parents[1]


def _wheel() -> Path | None:
    named = os.environ.get("MANETLAB_WHEEL")
    if named:
        return Path(named).resolve()
    found = sorted((REPO / "dist").glob(f"manetlab-{manetlab.__version__}-*.whl"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


WHEEL = _wheel()
needs_wheel = pytest.mark.skipif(
    WHEEL is None,
    reason=f"no wheel of manetlab {manetlab.__version__} in dist/ (build one with `make wheel`, or run `make test-wheel`; or set MANETLAB_WHEEL)",
)


class Venv:
    def __init__(self, root: Path, work: Path) -> None:
        self.root = root
        self.work = work
        # No Rust, no repository: only the venv's scripts and the system's basics.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP", "PYTHON", "VIRTUAL_ENV", "CONDA", "MANETLAB_"))}
        self.env["PATH"] = f"{root / 'bin'}:/usr/bin:/bin"
        self.env["VIRTUAL_ENV"] = str(root)

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), cwd=self.work, env=self.env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    assert WHEEL is not None and WHEEL.is_file(), WHEEL
    root = tmp_path_factory.mktemp("wheel-venv") / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    v = Venv(root, tmp_path_factory.mktemp("wheel-work"))
    pip = v.run(str(root / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(WHEEL), timeout=1800)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return v


@needs_wheel
def test_no_rust_on_the_venv_path(wheel_venv: Venv) -> None:
    path = wheel_venv.env["PATH"]
    assert shutil.which("cargo", path=path) is None
    assert shutil.which("rustc", path=path) is None
    assert shutil.which("manetlab", path=path) == str(wheel_venv.root / "bin" / "manetlab")


@needs_wheel
def test_the_package_comes_from_the_wheel_not_the_repository(wheel_venv: Venv) -> None:
    r = wheel_venv.run("python", "-c", "import manetlab, manetlab._core, manetlab.packaged as p; print(manetlab.__file__); print(manetlab._core.__file__); print(*p.data_source())")
    assert r.returncode == 0, r.stderr
    for line in r.stdout.split():
        assert Path(line).resolve().is_relative_to(wheel_venv.root.resolve()), line
    assert "_core.abi3" in r.stdout  # the abi3 extension, not a per-version build


@needs_wheel
def test_pip_show_names_no_placeholder_url(wheel_venv: Venv) -> None:
    r = wheel_venv.run("python", "-m", "pip", "show", "--verbose", "manetlab")
    assert r.returncode == 0, r.stderr
    assert f"Version: {manetlab.__version__}" in r.stdout
    assert "example.invalid" not in r.stdout
    assert "License: MIT" in r.stdout


@needs_wheel
def test_examples_then_run_in_the_venv(wheel_venv: Venv, tmp_path: Path) -> None:
    ex = tmp_path / "ex"
    r = wheel_venv.run("manetlab", "examples", str(ex), "--docs")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in ex.glob("*.toml")) == sorted(p.name for p in (REPO / "examples").glob("*.toml"))
    for p in (REPO / "examples").glob("*.toml"):
        assert (ex / p.name).read_bytes() == p.read_bytes()
    for doc in ("README.md", "scenarios.md", "python.md", "img/animate.png", "validation/ns2.md"):
        assert (ex / "docs" / doc).read_bytes() == (REPO / (doc if doc == "README.md" else f"docs/{doc}")).read_bytes()

    # The installed wheel's numbers are this tree's numbers (same scenario, same seed).
    out = tmp_path / "out"
    r = wheel_venv.run("manetlab", "run", str(ex / "cbr_chain.toml"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout
    here = tmp_path / "here"
    assert main(["run", str(REPO / "examples" / "cbr_chain.toml"), "--out", str(here)]) == 0
    assert (out / "flows.csv").read_bytes() == (here / "flows.csv").read_bytes()

    # A second copy into the same folder refuses, in one line, and writes nothing.
    before = {p: p.read_bytes() for p in ex.rglob("*") if p.is_file()}
    r = wheel_venv.run("manetlab", "examples", str(ex))
    assert r.returncode == 1
    assert r.stderr.startswith("error: ") and "already exists" in r.stderr and r.stderr.count("\n") == 1
    assert {p: p.read_bytes() for p in ex.rglob("*") if p.is_file()} == before


@needs_wheel
def test_reproduce_quick_in_the_venv(wheel_venv: Venv, tmp_path: Path) -> None:
    out = tmp_path / "rq"
    r = wheel_venv.run("manetlab", "reproduce", "tcp-variants-aodv", "--quick", "--jobs", "1", "--no-progress", "--out", str(out), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    for name in ("report.md", "report.html", "report.json"):
        assert (out / name).stat().st_size > 0
    assert "Vegas" in (out / "report.md").read_text()


@needs_wheel
def test_readme_quickstart_in_the_venv(wheel_venv: Venv, tmp_path: Path) -> None:
    """The README's quickstart, as the wheel's packaged README states it, in a folder
    holding only `manetlab examples examples`: no repository, no Rust."""
    work = tmp_path / "qs"
    work.mkdir()
    v = Venv(wheel_venv.root, work)
    r = v.run("manetlab", "examples", "examples", "--docs")
    assert r.returncode == 0, r.stderr
    readme = (work / "examples" / "docs" / "README.md").read_text()
    sh = next(b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "manetlab validate" in b)
    py = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "manetlab.run(" in b)
    ran = []
    for line in sh.splitlines():
        argv = shlex.split(line, comments=True)
        if not argv or argv[:2] == ["manetlab", "crosscheck"]:
            continue  # crosscheck needs ns-2.35 and a scenario under benchmarks/ (the repository's)
        r = v.run(*argv, timeout=600)
        assert r.returncode == 0, f"{line}: {r.stderr[-2000:]}"
        ran.append(argv[1])
    assert {"validate", "run", "compare", "plot", "report", "reproduce", "study", "export-ns2"} <= set(ran)
    (work / "quickstart.py").write_text(py)
    r = v.run("python", "quickstart.py")
    assert r.returncode == 0, r.stderr[-2000:]
    assert (work / "results" / "chain" / "summary.json").is_file()


# --- `manetlab examples` from this source tree (editable install): never skipped ---


def test_source_tree_reads_the_repository_examples() -> None:
    examples, docs = data_source()
    assert examples == REPO / "examples" and docs == REPO / "docs"
    assert [n for n, _ in example_files()] == sorted(p.name for p in (REPO / "examples").iterdir())


def test_examples_command_copies_and_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "new" / "dir"
    assert main(["examples", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {len(example_files())} examples to ")
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in (REPO / "examples").iterdir())
    assert (out / "abra_study.toml").read_bytes() == (REPO / "examples" / "abra_study.toml").read_bytes()
    assert main(["validate", str(out / "default_study.toml")]) == 0  # the scenario abra_study.toml names, beside it
    capsys.readouterr()

    (out / "cbr_chain.toml").write_text("mine")
    assert main(["examples", str(out), "--docs"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "already exists" in err
    assert (out / "cbr_chain.toml").read_text() == "mine"
    assert not (out / "docs").exists()  # refused before anything was written


def test_examples_refuses_a_planted_link(tmp_path: Path) -> None:
    out = tmp_path / "ex"
    out.mkdir()
    target = tmp_path / "victim"
    target.write_text("keep")
    (out / "mpr_grid.toml").symlink_to(target)
    with pytest.raises(OSError, match="already exists"):
        copy_examples(out)
    assert target.read_text() == "keep"
    assert list(out.iterdir()) == [out / "mpr_grid.toml"]


def test_examples_with_docs(tmp_path: Path) -> None:
    written = copy_examples(tmp_path / "d", docs=True)
    rel = {p.relative_to(tmp_path / "d").as_posix() for p in written}
    assert "docs/README.md" in rel and "docs/scenarios.md" in rel and "docs/img/animate.png" in rel and "docs/validation/fuzz.md" in rel
    assert (tmp_path / "d" / "docs" / "README.md").read_bytes() == (REPO / "README.md").read_bytes()
    assert not any(r.startswith("docs/reproductions") for r in rel)
