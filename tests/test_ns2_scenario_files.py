"""ns-2.35's own movement and traffic files (Debian ns2-examples, committed unchanged
under crates/manetlab-core/tests/fixtures/ns2_scene/) through the Python front and
the CLI: they load as written, and a bad traffic file gets one line naming its line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import manetlab
from _util import ROOT, run_cli

SCENE = ROOT / "crates" / "manetlab-core" / "tests" / "fixtures" / "ns2_scene"
EXAMPLE = SCENE / "ns2_example.toml"
DEBIAN = Path("/usr/share/doc/ns2/examples/tcl/mobility/scene")


def test_fixtures_are_the_debian_files_unchanged() -> None:
    import gzip

    if not DEBIAN.is_dir():
        return  # the copies are committed; the package only lets us re-check them
    for name in ["scen-670x670-50-600-20-0", "cbr-50-10-4-512"]:
        assert gzip.decompress((DEBIAN / f"{name}.gz").read_bytes()) == (SCENE / name).read_bytes()
    for name in ["scen-3-test", "cbr-3-test"]:
        assert (DEBIAN / name).read_bytes() == (SCENE / name).read_bytes()


def test_example_pair_validates_and_runs_from_the_python_api() -> None:
    s = manetlab.load_scenario(EXAMPLE, overrides={"duration_s": 200})
    flows = s.normalized["flows"]
    assert [f["name"] for f in flows] == [f"cbr_({i})" for i in range(10)]
    assert s.normalized["traffic"] == {"ns2_file": "cbr-50-10-4-512", "flows_from_file": 10}
    assert (flows[4]["src"], flows[4]["dst"], flows[4]["start_s"]) == (8, 10, 37.95315322370881)
    r = manetlab.run(s)
    got = {f["name"]: f for f in r.summary["flows"]}
    # Every flow starts before 200 s and sends one 512-byte packet per 4 s on average.
    for f in flows:
        assert got[f["name"]]["tx_packets"] >= 0.8 * (200 - f["start_s"]) / 4 - 1, got[f["name"]]
    # The normalised scenario (what results record) runs again to the same numbers.
    again = manetlab.run(manetlab.Scenario(s.normalized))
    assert again.summary["flows"] == r.summary["flows"]


def test_cli_runs_the_example_pair(tmp_path: Path) -> None:
    p = run_cli("validate", EXAMPLE)
    assert p.returncode == 0, p.stderr
    assert "50 nodes" in p.stdout and "10 flows" in p.stdout, p.stdout


def test_bad_traffic_file_is_one_line_naming_the_line(tmp_path: Path) -> None:
    shutil.copy(SCENE / "scen-3-test", tmp_path / "scen-3-test")
    (tmp_path / "cbr").write_text((SCENE / "cbr-3-test").read_text() + '\n$ns_ at 160 "$ftp produce 3"\n')
    s = tmp_path / "s.toml"
    s.write_text(
        'duration_s = 200\n[area]\nwidth_m = 670\nheight_m = 670\n[nodes]\ncount = 3\n[radio]\n'
        '[mobility]\nmodel = "ns2_file"\npath = "scen-3-test"\n[traffic]\nns2_file = "cbr"\n'
    )
    p = run_cli("validate", s)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr == 'error: traffic.ns2_file ("cbr"): line 26: not a traffic event (expected `$ns_ at T "$app start"` or `"$app stop"`, or `"$node_(i) shutdown"` or `"$node_(i) startup"`): `$ns_ at 160 "$ftp produce 3"`\n'
    (tmp_path / "cbr").write_text((SCENE / "cbr-3-test").read_text())
    p = run_cli("validate", s)
    assert p.returncode == 0, p.stderr
    assert "2 flows" in p.stdout
    p = run_cli("validate", s, "--set", "traffic.ns2_file=missing")
    assert p.returncode == 2 and p.stderr.startswith("error: traffic.ns2_file: cannot read traffic file "), p.stderr


def test_run_piped_into_head_writes_its_results(tmp_path: Path) -> None:
    # `manetlab run ... | head -1`: head exits after the first line; the results are
    # written before anything is printed, and the closed pipe ends the run quietly.
    out = tmp_path / "out"
    cmd = f"{sys.executable} -W error -m manetlab run {ROOT / 'examples' / 'cbr_chain.toml'} --out {out} | head -1"
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert p.stdout.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.returncode in (0, 141), p.stderr  # 141 if a print came after head left
    assert (out / "summary.json").exists()


def test_referenced_files_are_capped_at_64_mb(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: no disk used
    s = tmp_path / "s.toml"
    s.write_text('duration_s = 1\n[nodes]\ncount = 2\n[radio]\n[mobility]\nmodel = "ns2_file"\npath = "big"\n')
    p = run_cli("validate", s)
    assert p.returncode == 2 and p.stderr.startswith("error: mobility.path: cannot read movement file \"big\": larger than 64 MB"), p.stderr
    s.write_text('duration_s = 1\n[nodes]\ncount = 2\n[traffic]\nns2_file = "big"\n')
    p = run_cli("validate", s)
    assert p.returncode == 2 and p.stderr.startswith("error: traffic.ns2_file: cannot read traffic file \"big\": larger than 64 MB"), p.stderr
