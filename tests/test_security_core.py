"""Issue 34, the core's side: resources bounded by what a run needs, never an
abort on valid input, no panic reaching a user (tests/fixtures/robustness-found-2026-11-29/).

Memory is checked in a child process under an address-space limit (a regression
fails there instead of swapping the machine), and its peak resident set is read
from the kernel's accounting of that child (getrusage of a small wrapper's children)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import manetlab
from _util import ROOT

CASES = ROOT / "tests" / "fixtures" / "robustness-found-2026-11-29"
MB = 1 << 20


# Runs the command under the limit and writes its peak RSS (KiB) to a file.
# The command must be a grandchild of a small process: on Linux a child's
# ru_maxrss starts at its parent's resident size at fork (kept across exec), so
# measuring straight from a pytest process that has grown would measure pytest.
_MEASURE = """
import os, resource, subprocess, sys
limit, peak_file = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
rc = subprocess.call(sys.argv[3:])
with open(peak_file, "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc if rc >= 0 else 128 - rc)
"""


def _run_measured(args: list[str], address_space_bytes: int, timeout_s: float = 300) -> tuple[int, str, str, int]:
    """`python -m manetlab ARGS` under RLIMIT_AS; returns (exit status, stdout,
    stderr, peak RSS in bytes of that process)."""
    with tempfile.TemporaryDirectory() as d:
        peak_file = Path(d) / "peak"
        p = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(address_space_bytes), str(peak_file), sys.executable, "-W", "error", "-m", "manetlab", *args],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s,
        )
        peak_kib = int(peak_file.read_text()) if peak_file.exists() else 0
    return p.returncode, p.stdout, p.stderr, peak_kib * 1024


# ---- 05: memory follows the packets in flight, not every packet ever sent ----


def test_05_fifty_million_packets_through_a_1_mbps_link_in_under_100_mb(tmp_path: Path) -> None:
    # The "must show": two wired nodes, a CBR packet every 10 µs for 500 s
    # (5·10^7 packets offered, nearly all dropped at the queue). Before, the core
    # kept a record of every packet ever sent: about 2 GB here (37 bytes each).
    # The fixture is the reproducer (10^4 s); 500 s is the "must show" run.
    out = tmp_path / "out"
    code, stdout, stderr, peak = _run_measured(
        ["run", str(CASES / "05_memory_grows_per_packet.json"), "--set", "duration_s=500", "--out", str(out)],
        address_space_bytes=2 << 30,
    )
    assert code == 0, stderr[-2000:]
    assert peak < 100 * MB, f"peak RSS {peak / MB:.0f} MB"
    f = json.loads((out / "summary.json").read_text())["flows"][0]
    assert f["tx_packets"] == 50_000_000
    # Every packet still has exactly one fate.
    assert f["delivered_packets"] + f["dropped_packets"] + f["in_flight_packets"] == f["tx_packets"]
    assert f["drops"]["ifq.IFQ"] == f["dropped_packets"] > 49_000_000


# ---- 06: a mean never leaves [min, max] ----


def test_06_equal_delays_have_a_mean_equal_to_them() -> None:
    r = manetlab.run(CASES / "06_mean_delay_above_max.toml")
    f = r.summary["flows"][0]
    assert f["rx_packets"] > 20_000
    # Every packet has the same delay: serialisation of 230 bytes at 1 Mb/s + 10 ms.
    assert f["delay_min_s"] == f["delay_max_s"]
    assert f["delay_mean_s"] == f["delay_max_s"], (f["delay_mean_s"], f["delay_max_s"])


# ---- 18: a run too large for the memory limit is refused before it starts ----

REFUSED = {
    "18_dense_10k_nodes_oom.json": ("nodes.count", "10000 radio nodes need about 3.1 GiB"),
    "18_million_radio_nodes_oom.json": ("nodes.count", "1000000 radio nodes need about 8.0 GiB"),
    "05b_random_link_failures_oom.json": ("faults.random_link_failures.rate_per_s", "make about 1.00e11 faults, which need about"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_too_large_runs_are_refused_with_one_line_from_the_cli(tmp_path: Path, name: str) -> None:
    # Measured without a limit on a 23 GiB machine (default limit 11.8 GiB, so
    # both ran): the 10^4 co-located nodes peak at 2.9 GiB RSS in 12 s (estimate
    # 3.1 GiB), the 10^6 chain at 7.2 GiB in 120 s (estimate 8.0 GiB); 05b would
    # log 10^11 faults. Under a 2 GiB limit all three are refused at
    # once, in a process that could not even allocate what they need.
    key, words = REFUSED[name]
    code, out, err, peak = _run_measured(["run", str(CASES / name), "--out", str(tmp_path / "out"), "--max-memory", "2G"], address_space_bytes=2 << 30, timeout_s=60)
    assert code == 2, err[-2000:]
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"error: {key}: "), lines[0]
    assert words in lines[0] and "(allowed: at most 2.0 GiB" in lines[0], lines[0]
    assert peak < 200 * MB
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_too_large_runs_raise_scenario_error_from_the_api(name: str) -> None:
    key, words = REFUSED[name]
    with pytest.raises(manetlab.ScenarioError) as e:
        manetlab.run(CASES / name, max_memory_bytes=2 << 30)
    msg = str(e.value)
    assert msg.startswith(f"{key}: ") and words in msg and "\n" not in msg, msg


def test_the_default_limit_comes_from_the_environment_else_half_the_machine(tmp_path: Path) -> None:
    half = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    # /proc/meminfo's MemTotal is a little below the physical pages' total.
    assert 0.9 * half <= manetlab._core.default_max_memory_bytes() <= half
    env = {**os.environ, "MANETLAB_MAX_MEMORY": str(1 << 30)}
    p = subprocess.run(
        [sys.executable, "-m", "manetlab", "run", str(CASES / "18_dense_10k_nodes_oom.json"), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert p.returncode == 2 and p.stderr.startswith("error: nodes.count: 10000 radio nodes need about"), p.stderr
    assert "(allowed: at most 1.0 GiB" in p.stderr
    # Suffixes as --max-memory takes them; a malformed value is one line, not ignored.
    env["MANETLAB_MAX_MEMORY"] = "1G"
    code = "import manetlab; print(manetlab._core.default_max_memory_bytes())"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout == f"{1 << 30}\n"
    env["MANETLAB_MAX_MEMORY"] = "plenty"
    p = subprocess.run(
        [sys.executable, "-m", "manetlab", "run", str(CASES / "06_mean_delay_above_max.toml"), "--out", str(tmp_path / "o")],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert p.returncode == 2 and p.stderr.startswith("error: MANETLAB_MAX_MEMORY: plenty is not a memory size (allowed: "), p.stderr
    with pytest.raises(manetlab.ScenarioError, match=r"^max_memory_bytes: -5 is not a memory size"):
        manetlab.run(CASES / "06_mean_delay_above_max.toml", max_memory_bytes=-5)


def test_a_bad_max_memory_is_one_line(tmp_path: Path) -> None:
    from manetlab.cli import parse_size

    assert parse_size("8G") == 8 << 30 and parse_size("512 MiB") == 512 << 20 and parse_size("1.5T") == 3 << 39
    assert parse_size("1000000") == 1_000_000 and parse_size("64kb") == 64 << 10
    for bad in ["", "-1G", "0", "12Q", "1e9", "nan", "G", "\x1b[31m"]:
        with pytest.raises(manetlab.ScenarioError, match=r"^--max-memory: .* is not a memory size \(allowed: "):
            parse_size(bad)
    p = subprocess.run(
        [sys.executable, "-m", "manetlab", "run", str(CASES / "06_mean_delay_above_max.toml"), "--out", str(tmp_path / "o"), "--max-memory", "lots"],
        capture_output=True, text=True, timeout=60,
    )
    assert p.returncode == 2 and p.stderr == "error: --max-memory: lots is not a memory size (allowed: a number of bytes >= 1, or with a K, M, G or T suffix, e.g. 8G)\n"


def test_the_estimate_bounds_the_real_peak_within_a_factor_two(tmp_path: Path) -> None:
    # 3000 co-located radio nodes with AODV: the run's memory is quadratic
    # (every node senses every other): ~300 MB, well above the interpreter's.
    d = json.loads((CASES / "18_dense_10k_nodes_oom.json").read_text())
    d["nodes"]["count"] = 3000
    d["flows"][0]["dst"] = 2999
    path = tmp_path / "dense3000.json"
    path.write_text(json.dumps(d))
    estimate = manetlab._core.estimate_memory_bytes(json.dumps(d))
    code, _, err, peak = _run_measured(["run", str(path), "--out", str(tmp_path / "o")], address_space_bytes=4 << 30)
    assert code == 0, err[-2000:]
    assert peak <= estimate <= 2 * peak, (peak / MB, estimate / MB)


# ---- 05b: faults drawn as the run goes; Ctrl-C stops even a huge failure rate ----


def test_05b_huge_failure_rate_starts_at_once_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    # Allowed past the estimate on purpose (--max-memory 100T): the schedule is
    # no longer built before the event loop, so the run starts and Ctrl-C stops it.
    import signal

    p = subprocess.Popen(
        [sys.executable, "-m", "manetlab", "run", str(CASES / "05b_random_link_failures_oom.json"), "--out", str(tmp_path / "o"), "--max-memory", "100T", "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)),
    )
    # The progress line shows the run is in its event loop.
    assert p.stderr is not None
    seen = ""
    while "%" not in seen and p.poll() is None:
        seen += p.stderr.read(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, seen + err
    assert err.strip().splitlines()[-1].startswith("interrupted (Ctrl-C): stopped"), err
    assert "Traceback" not in err and "memory allocation" not in err


# ---- a panic reaches users as one line (InternalError; the CLI exits 70) ----


def test_a_panic_is_an_internal_error_of_one_line() -> None:
    assert issubclass(manetlab.InternalError, RuntimeError)
    with pytest.raises(manetlab.InternalError) as e:
        manetlab._core._panic_for_tests("index 7 out of range\nfor slice of length 3")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"internal error in manetlab {manetlab.__version__}: index 7 out of range for slice of length 3 at "), msg
    assert msg.endswith("this is a bug, please report it with the scenario and seed"), msg
    # A long message is cut (a bounded line), marked with an ellipsis.
    with pytest.raises(manetlab.InternalError) as e:
        manetlab._core._panic_for_tests("x" * 10_000)
    assert len(str(e.value)) < 500 and "x…" in str(e.value)


def test_the_cli_maps_a_panic_in_a_run_to_exit_70(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A real panic through the real guard, raised where the core's run would be.
    from manetlab import cli, results

    def panicking_run(*args: object, **kwargs: object) -> str:
        manetlab._core._panic_for_tests("a broken invariant")
        raise AssertionError("unreachable")

    monkeypatch.setattr(results._core, "run", panicking_run)
    code = cli.main(["run", str(CASES / "06_mean_delay_above_max.toml"), "--out", str(tmp_path / "o")])
    captured = capsys.readouterr()
    assert code == 70
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: internal error in manetlab ") and "a broken invariant" in lines[0], captured.err
    assert "please report it" in lines[0] and "Traceback" not in captured.err
    assert not (tmp_path / "o").exists()


def test_every_fixture_of_this_file_exists() -> None:
    mine = {"05_memory_grows_per_packet.json", "06_mean_delay_above_max.toml", *REFUSED}
    assert mine <= {p.name for p in CASES.iterdir()}


def test_reproduce_takes_max_memory_too() -> None:
    p = subprocess.run([sys.executable, "-m", "manetlab", "reproduce", "--list", "--max-memory", "lots"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("error: --max-memory: lots is not a memory size"), p.stderr
    p = subprocess.run([sys.executable, "-m", "manetlab", "reproduce", "--list", "--max-memory", "4G"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "abra" in p.stdout, p.stderr


def test_compare_passes_max_memory_to_each_run(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "manetlab", "compare", str(ROOT / "examples" / "tcp_chain_80211.toml"), "--flow", "0",
         "--transports", "newreno", "vegas", "--out", str(tmp_path / "c"), "--max-memory", "1M"],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: nodes.count: ") and "(allowed: at most 1 MiB" in lines[0], p.stderr
    assert not (tmp_path / "c").exists()


def test_study_run_passes_max_memory_to_its_workers(tmp_path: Path) -> None:
    # The limit reaches the local worker processes (through MANETLAB_MAX_MEMORY): a
    # run estimated above it is recorded as failed with the one-line reason, not run.
    (tmp_path / "sc.json").write_text((CASES / "18_dense_10k_nodes_oom.json").read_text())
    (tmp_path / "study.toml").write_text('scenario = "sc.json"\nseeds = [1]\n')
    p = subprocess.run(
        [sys.executable, "-m", "manetlab", "study", "run", str(tmp_path / "study.toml"), "--dir", str(tmp_path / "st"),
         "--jobs", "1", "--no-progress", "--max-memory", "1G"],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0 and "(1 failed)" in p.stdout, p.stdout + p.stderr
    st = subprocess.run([sys.executable, "-m", "manetlab", "study", "status", str(tmp_path / "study.toml"), "--dir", str(tmp_path / "st")],
                        capture_output=True, text=True, timeout=60)
    assert "ScenarioError: nodes.count: 10000 radio nodes need about 3.1 GiB of memory (allowed: at most 1.0 GiB" in st.stdout, st.stdout
    p = subprocess.run([sys.executable, "-m", "manetlab", "study", "run", str(tmp_path / "study.toml"), "--dir", str(tmp_path / "st2"),
                        "--max-memory", "lots"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("error: --max-memory: lots is not a memory size"), p.stderr
