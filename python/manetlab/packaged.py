"""The example scenarios and studies, and the docs, that come with manetlab
(`manetlab examples DIR`).

A wheel carries them inside the package, under ``manetlab/_data/`` (``make
wheel`` copies ``examples/`` and ``docs/`` there for the build only, so git holds
one copy). An editable install or a source checkout reads them from the
repository itself, so they are never stale there.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from manetlab.safeio import OutputError, UnsafePathError, copy_file, ensure_dir, shown

__all__ = ["copy_examples", "data_source", "doc_files", "example_files"]

_PACKAGE = Path(__file__).resolve().parent


def data_source() -> tuple[Path, Path]:
    """(examples folder, docs folder) this installation reads: the repository's
    own (source checkout, editable install), else the packaged copies (wheel).
    `OutputError` when neither exists (an installation built without them)."""
    repo = _PACKAGE.parents[1]
    if (repo / "pyproject.toml").is_file() and (repo / "examples").is_dir():
        return repo / "examples", repo / "docs"
    data = _PACKAGE / "_data"
    if (data / "examples").is_dir():
        return data / "examples", data / "docs"
    raise OutputError(
        f"this manetlab installation has no examples (looked in {shown(data)}); install a wheel built with `make wheel`, or use a source checkout"
    )


def example_files() -> list[tuple[str, Path]]:
    """(name in DIR, source file) of every example scenario and study."""
    examples, _ = data_source()
    return [(p.name, p) for p in sorted(examples.iterdir()) if p.is_file() and not p.name.startswith(".")]


def doc_files() -> list[tuple[str, Path]]:
    """(path under DIR, source file) of the docs: ``docs/*.md`` with the README,
    ``docs/img/``, ``docs/validation/*.md`` (the reproduction reports stay in the
    repository: generated, and large)."""
    _, docs = data_source()
    files: list[tuple[str, Path]] = []
    readme = docs / "README.md" if (docs / "README.md").is_file() else docs.parent / "README.md"
    if readme.is_file():
        files.append(("docs/README.md", readme))
    for sub, pattern in (("", "*.md"), ("img", "*"), ("validation", "*.md")):
        folder = docs / sub if sub else docs
        for p in sorted(folder.glob(pattern)) if folder.is_dir() else []:
            if p.is_file() and not (sub == "" and p.name == "README.md"):
                files.append(("/".join(x for x in ("docs", sub, p.name) if x), p))
    return files


def copy_examples(out: str | os.PathLike[str], docs: bool = False) -> list[Path]:
    """Copy the examples (and with `docs` the docs, under ``OUT/docs/``) into the
    folder `out` (made if missing). Nothing is overwritten: when any file to be
    written already exists, `UnsafePathError` names it and nothing is written.
    Files are created exclusively, never through a link (`manetlab.safeio`).
    Returns the files written."""
    out = Path(out)
    files = example_files() + (doc_files() if docs else [])
    for name, _ in files:
        dst = out / name
        if os.path.lexists(dst):
            raise UnsafePathError(
                f"{shown(dst)} already exists; `manetlab examples` does not overwrite files (choose an empty or new folder)", dst, errno.EEXIST
            )
    out.mkdir(parents=True, exist_ok=True)  # DIR as the user named it (a link of theirs is followed)
    written = []
    for name, src in files:
        dst = out / name
        if dst.parent != out:
            ensure_dir(dst.parent)  # docs/, docs/img/: made by us, a planted link refused
        copy_file(src, dst)
        written.append(dst)
    return written
