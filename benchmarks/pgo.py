"""Profile-guided optimisation (PGO) of the core, used by `make` and `make bench`.

    python benchmarks/pgo.py available   # exit 0 iff the toolchain has llvm-profdata
    python benchmarks/pgo.py profile     # build instrumented, run the training set, merge
    python benchmarks/pgo.py rustflags   # the RUSTFLAGS that build with the profile
    python benchmarks/pgo.py binary      # profile, then build run_scenario with it; prints its path

The training set is `benchmarks/pgo/*.toml`: random-waypoint networks of 30-200
nodes under AODV, DSR and DSDV with TCP (six variants) and CBR, and a static chain.
Its sizes, seeds and flows differ from `benchmarks/scenarios/` on purpose, so the
profile describes the kind of work manetlab does, not the timed runs. PGO changes
which branches the compiler lays out as likely and what it inlines, never the
arithmetic: results are byte-identical with and without it
(`benchmarks/identity.py --binary`).

`llvm-profdata` comes with rustup's `llvm-tools` component
(`rustup component add llvm-tools`); without it everything builds as before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRAINING = sorted((ROOT / "benchmarks" / "pgo").glob("*.toml"))
GEN_DIR = ROOT / "target" / "pgo-gen"  # cargo target dir of the instrumented build
USE_DIR = ROOT / "target" / "pgo-use"  # cargo target dir of builds that use the profile
RAW_DIR = ROOT / "target" / "pgo" / "raw"
PROFILE = ROOT / "target" / "pgo" / "manetlab.profdata"


def profdata_tool() -> Path | None:
    """The toolchain's own llvm-profdata (its LLVM must match rustc's), or None."""
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
        host = next(ln.split(":", 1)[1].strip() for ln in subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.splitlines() if ln.startswith("host:"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        return None
    tool = Path(sysroot) / "lib" / "rustlib" / host / "bin" / "llvm-profdata"
    return tool if tool.is_file() else None


def _cargo_example(target_dir: Path, rustflags: str) -> Path:
    env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir), RUSTFLAGS=rustflags)
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "manetlab-core", "--example", "run_scenario"], cwd=ROOT, env=env, check=True)
    return target_dir / "release" / "examples" / "run_scenario"


def profile() -> Path:
    """Build the instrumented core, run the training set, merge its counts."""
    tool = profdata_tool()
    if tool is None:
        sys.exit("pgo: no llvm-profdata in the Rust toolchain (rustup component add llvm-tools)")
    shutil.rmtree(RAW_DIR, ignore_errors=True)
    RAW_DIR.mkdir(parents=True)
    binary = _cargo_example(GEN_DIR, f"-Cprofile-generate={RAW_DIR}")
    env = dict(os.environ, LLVM_PROFILE_FILE=str(RAW_DIR / "train-%p-%m.profraw"))
    for scenario in TRAINING:
        subprocess.run([str(binary), str(scenario)], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([str(tool), "merge", "-o", str(PROFILE), *map(str, sorted(RAW_DIR.glob("*.profraw")))], check=True)
    return PROFILE


def rustflags() -> str:
    return f"-Cprofile-use={PROFILE}"


def build_binary() -> Path:
    """Profile, then build `run_scenario` with the profile; returns its path."""
    profile()
    return _cargo_example(USE_DIR, rustflags())


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else ""
    if cmd == "available":
        return 0 if profdata_tool() is not None else 1
    if cmd == "profile":
        print(profile())
        return 0
    if cmd == "rustflags":
        if not PROFILE.is_file():
            sys.exit(f"pgo: no profile at {PROFILE}; run `python benchmarks/pgo.py profile` first")
        print(rustflags())
        return 0
    if cmd == "binary":
        print(build_binary())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
