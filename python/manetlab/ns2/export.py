"""Write an ns-2.35 Tcl script that builds the same scenario as manetlab runs.

``export_ns2(scenario, out_dir, seed=...)`` writes into ``out_dir``:

* ``run.tcl``: the ns-2 script (``ns run.tcl`` from inside ``out_dir``);
* ``movement.tcl``: every node's start position and trajectory, written by
  manetlab's own movement writer (``[outputs] movement``) from a short manetlab
  run of the same scenario and seed, so both simulators see identical movement;
* ``flows.json``: what the trace parser needs (flow kinds, nodes, packet sizes,
  active times, the run's duration), so metrics can be computed from the
  directory alone.

When ns-2 runs, the script also writes ``ports.txt`` (each flow's agent ports,
read back from ns-2, so flows are matched in the trace without guessing how
ns-2 numbers ports) and ``trace.tr``.

Anything ns-2.35 cannot build the same way is refused with `Ns2Unsupported`, a
one-line message naming the key (docs/ns2.md lists the mapping and the
refusals).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from manetlab import safeio
from manetlab.ns2.tcl import tcl_comment, tcl_word
from manetlab.results import run
from manetlab.scenario import Overrides, Scenario, load_scenario
from manetlab.textsafe import excerpt, printable

__all__ = ["Ns2Unsupported", "Ns2Export", "export_ns2", "to_scenario", "TCP_AGENTS"]


class Ns2Unsupported(ValueError):
    """The scenario uses something ns-2.35 has no equivalent for (one line)."""


#: manetlab TCP variant -> ns-2 one-way sender agent.
TCP_AGENTS = {
    "tahoe": "Agent/TCP",
    "reno": "Agent/TCP/Reno",
    "newreno": "Agent/TCP/Newreno",
    "vegas": "Agent/TCP/Vegas",
    "sack": "Agent/TCP/Sack1",
    "fack": "Agent/TCP/Fack",
}
_SACK_VARIANTS = {"sack", "fack"}

#: `flows[].tcp` keys and the ns-2 sender variable each one sets.
_TCP_SENDER_KEYS = {
    "window_pkts": "window_",
    "mss_bytes": "packetSize_",
    "initial_window_pkts": "windowInit_",
    "dupack_threshold": "numdupacks_",
    "min_rto_s": "minrto_",
    "max_rto_s": "maxrto_",
    "initial_rto_s": "rtxcur_init_",
    "clock_tick_s": "tcpTick_",
    "vegas_alpha_pkts": "v_alpha_",
    "vegas_beta_pkts": "v_beta_",
    "vegas_gamma_pkts": "v_gamma_",
}
# Keys that change nothing in ns-2's behaviour or are handled separately.
_TCP_OTHER_KEYS = {"delayed_ack", "delayed_ack_timeout_s", "sack", "trace"}

_ROUTING = {"aodv": "AODV", "dsr": "DSR", "dsdv": "DSDV"}
#: `[mac]` keys written even when the scenario leaves them out.
_ALWAYS_WRITTEN = {"data_rate_mbps", "basic_rate_mbps"}


def _param_rows(section: str) -> list[dict[str, Any]]:
    """The core's declared parameters of one scenario section (`_core.param_table()`)."""
    from manetlab import _core

    return [r for r in json.loads(_core.param_table()) if r["section"] == section]

# Scenario switches whose value here is ns-2.35's compiled-in behaviour (the
# other value has no ns-2 equivalent and is refused).
_NS2_SWITCHES = {
    ("dsdv", "tcp_ip_header_twice"): True,
    ("dsdv", "release_through_recv"): True,
    ("dsdv", "stale_advert_bug"): True,
}


_PROPAGATION = {
    "two_ray_ground": "Propagation/TwoRayGround",
    "free_space": "Propagation/FreeSpace",
    "shadowing": "Propagation/Shadowing",
}
_SPEED_OF_LIGHT_MPS = 299_792_458.0
# ns-2 Phy/WirelessPhy and Antenna/OmniAntenna defaults (ns-default.tcl), for
# turning rx_range_m / cs_range_m into thresholds exactly as the core does.
_NS2_PT_W = 0.28183815
_NS2_FREQ_HZ = 914e6
_NS2_ANTENNA_Z_M = 1.5
_PLCP_HEADER_BITS = 48  # Mac/802_11 PLCPHeaderLength_; the preamble takes the rest of plcp_us

#: Files the script reads and writes, relative to its directory (ns runs there).
SCRIPT_FILE = "run.tcl"
MOVEMENT_FILE = "movement.tcl"
FLOWS_FILE = "flows.json"
TRACE_FILE = "trace.tr"
PORTS_FILE = "ports.txt"


@dataclass(frozen=True)
class Ns2Export:
    """What `export_ns2` wrote."""

    out_dir: Path
    script: Path
    movement: Path
    flows_json: Path
    seed: int
    ns2_seed: int


def to_scenario(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any],
    seed: int | None = None,
    overrides: Overrides | None = None,
) -> Scenario:
    """A validated Scenario from a path, dict or Scenario, with overrides and seed applied."""
    ov = dict(overrides or {})
    if seed is not None:
        ov["seed"] = seed
    if isinstance(scenario, Scenario):
        return scenario.with_overrides(ov) if ov else scenario
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(scenario, ov)
    return Scenario(scenario).with_overrides(ov)


def ns2_seed(seed: int) -> int:
    """ns-2's `$defaultRNG seed` for a manetlab seed: ns-2 takes seed 0 as "pick from the
    clock" (non-reproducible) and MRG32k3a seeds must stay below 2^31 - 1."""
    s = seed % 2_147_483_646
    return s if s > 0 else 1


def export_ns2(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any],
    out_dir: str | os.PathLike[str],
    seed: int | None = None,
    overrides: Overrides | None = None,
    trace_format: str | None = None,
    movement_file: str | os.PathLike[str] | None = None,
    mac_trace: bool | None = None,
) -> Ns2Export:
    """Write run.tcl, movement.tcl and flows.json for `scenario` into `out_dir`.

    `trace_format` is "old" (CMU format, default) or "new" (tagged); default: the
    scenario's ``outputs.trace`` if it has one, else "old". `movement_file`
    reuses a movement file manetlab already wrote for this scenario and seed
    (crosscheck passes the one from its own run); otherwise a manetlab run of the
    scenario without flows writes it. `mac_trace` switches ns-2's MAC trace on
    (default: on when the scenario's ``outputs.trace_levels`` has "mac").
    """
    s = to_scenario(scenario, seed, overrides)
    n = s.normalized
    out = Path(out_dir)
    fmt = trace_format or (n.get("outputs") or {}).get("trace") or "old"
    if fmt not in ("old", "new"):
        raise Ns2Unsupported(f"--trace: {_q(fmt)} is not an ns-2 wireless trace format (allowed: old, new)")
    plan = _plan(s)  # refuses before anything is written
    if mac_trace is not None:
        plan.mac_trace = mac_trace
    # The movement file is sourced by run.tcl: only lines manetlab's writer makes
    # (numbers and fixed words) may reach it, also from a file the caller names.
    text = _movement_text(Path(movement_file)) if movement_file is not None else _movement_of(s)
    out.mkdir(parents=True, exist_ok=True)
    # A symlink planted under one of the names export writes or ns-2 writes (trace.tr,
    # ports.txt) is removed, not followed (the link, never its target).
    for name in (MOVEMENT_FILE, SCRIPT_FILE, FLOWS_FILE, TRACE_FILE, PORTS_FILE):
        if (out / name).is_symlink():
            (out / name).unlink()
    movement = out / MOVEMENT_FILE
    _write(movement, text)
    nseed = ns2_seed(s.seed)
    script = out / SCRIPT_FILE
    _write(script, _tcl(s, plan, fmt, nseed))
    flows_json = out / FLOWS_FILE
    _write(flows_json, json.dumps(_flows_meta(s, plan, fmt), indent=1, sort_keys=True) + "\n")
    return Ns2Export(out, script, movement, flows_json, s.seed, nseed)


def _write(path: Path, text: str) -> None:
    """`text` (ASCII: run.tcl, movement.tcl and flows.json are) into `path`, whole
    and never through a symlink (`safeio.write_bytes`); permissions from the umask."""
    safeio.write_bytes(path, text.encode("ascii"))


_NUM = r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
#: The lines manetlab's movement writer (crates/manetlab-core/src/mobility/ns2.rs) writes.
_MOVEMENT_LINE = re.compile(
    rf"""(?:#(?: [ -\[\]-z|~]*)?"""  # a comment: printable ASCII without backslash or braces
    rf"""|\$node_\([0-9]+\) set [XYZ]_ {_NUM}"""
    rf"""|\$ns_ at {_NUM} "\$node_\([0-9]+\) setdest {_NUM} {_NUM} {_NUM}"|)"""
)
#: Largest movement file accepted from a caller (manetlab's for 50 nodes over 900 s: ~1 MB).
MAX_MOVEMENT_BYTES = 256 * 1024 * 1024


def _movement_text(path: Path) -> str:
    """The text of a movement file manetlab wrote; Ns2Unsupported for anything else
    (a line its writer never writes, a non-regular or too large file)."""
    try:
        # A regular file only (a FIFO is refused without blocking, a link not followed), size-capped.
        raw = safeio.read_bytes(path, limit=MAX_MOVEMENT_BYTES)
    except safeio.OutputError as e:
        raise Ns2Unsupported(f"movement_file: {e}") from None
    except OSError as e:
        raise Ns2Unsupported(f"movement_file: cannot read {excerpt(path, 100)}: {e.strerror or e}") from None
    text = raw.decode("ascii", errors="replace")
    for k, line in enumerate(text.split("\n"), 1):
        if not _MOVEMENT_LINE.fullmatch(line):
            raise Ns2Unsupported(
                f"movement_file: {excerpt(path, 100)}: line {k} is not a line manetlab's movement writer writes: "
                f"{excerpt(line, 60)}"
            )
    return text


def _movement_of(s: Scenario) -> str:
    """manetlab's own movement writer: run the scenario with no traffic and
    ``[outputs] movement = true`` (trajectories depend only on the seed and the
    mobility/placement keys, not on traffic), then read ``movement.tcl``."""
    import tempfile

    data = dict(s.data)
    data["flows"] = []
    outputs = dict(data.get("outputs") or {})
    outputs.pop("trace", None)
    outputs.pop("trace_levels", None)
    outputs.pop("pcap", None)
    outputs.pop("pcap_nodes", None)
    outputs.pop("series", None)
    outputs.pop("series_interval_s", None)
    outputs["movement"] = True
    data["outputs"] = outputs
    with tempfile.TemporaryDirectory(prefix="manetlab-ns2-") as tmp:
        run(Scenario(data, s.source), out=tmp)
        return _movement_text(Path(tmp) / MOVEMENT_FILE)


# --------------------------------------------------------------------------- plan


@dataclass
class _Plan:
    routing: str
    ifq: str
    ifq_len: int
    area_m: tuple[float, float]
    propagation: str
    settings: list[tuple[str, str, str]]  # (class, var, value) set before nodes are made
    dsdv: list[tuple[str, str]]
    flows: list[dict[str, Any]]
    mac_trace: bool


def _refuse(key: str, what: str) -> Ns2Unsupported:
    """A one-line refusal; a key or value from the scenario shows as a bounded, escaped excerpt."""
    return Ns2Unsupported(printable(f"{excerpt(key, 100)}: {what}"))


def _q(v: Any) -> str:
    """A scenario value quoted in a message: bounded and escaped."""
    return f'"{excerpt(v, 60)}"'


def _num(v: float) -> str:
    """A float exactly as Tcl will read it back (repr round-trips)."""
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def _plan(s: Scenario) -> _Plan:
    n = s.normalized
    d = s.data
    if n.get("links"):
        raise _refuse("links", "point-to-point [[links]] are not exported (ns-2 wired links cannot join this wireless scenario: export a wireless-only scenario)")
    if n.get("faults"):
        raise _refuse("faults", "ns-2.35 has no node switch-off / link outage model")
    if n.get("fidelity", "ns2-2.35") != "ns2-2.35":
        raise _refuse("fidelity", f'{_q(n["fidelity"])}: ns-2.35 runs its own behaviour only (allowed: "ns2-2.35", the default)')
    if "radio" not in n:
        raise _refuse("radio", "the scenario has no [radio]; export-ns2 builds ns-2 mobile nodes, which need the wireless model")
    # Routing.
    r = n.get("routing") or {"protocol": "static"}
    proto = r["protocol"]
    if proto == "static":
        raise _refuse(
            "routing.protocol",
            '"static" has no ns-2.35 wireless equivalent (Agent/ManualRtgAgent is not built into ns-2.35); '
            "compare with a routing protocol both run, e.g. --set routing.protocol=aodv",
        )
    dsdv: list[tuple[str, str]] = []
    if proto == "aodv":
        a = dict(r.get("aodv") or {})
        if a.get("preset", "ns2") != "ns2":
            raise _refuse("routing.aodv.preset", f'{_q(a["preset"])}: ns-2.35 AODV is the "ns2" preset only')
        a.pop("preset", None)
        extra = sorted(k for k, v in a.items() if v is not None)
        if extra:
            raise _refuse(f"routing.aodv.{extra[0]}", "ns-2.35 compiles AODV's timers and constants in (aodv.h); only its defaults can be exported")
    elif proto == "dsr":
        # Keys set to ns-2.35's own value (the core's declared `ns2-2.35` default)
        # export as nothing to set; ns-2.35 has no Tcl variable for the others.
        ns2 = {row["key"]: row["defaults"]["ns2-2.35"] for row in _param_rows("routing.dsr")}
        extra = sorted(k for k, v in (r.get("dsr") or {}).items() if v is not None and ns2.get(k) != v)
        if extra:
            raise _refuse(f"routing.dsr.{extra[0]}", "ns-2.35 compiles DSR's parameters in (dsr/*.cc); only its defaults can be exported")
    elif proto == "dsdv":
        # Agent/DSDV's Tcl variables come from the core's declarations (`ns2_tcl`).
        tcl = {row["key"]: row for row in _param_rows("routing.dsdv") if row["ns2_tcl"]}
        for k, v in sorted((r.get("dsdv") or {}).items()):
            if v is None or _NS2_SWITCHES.get(("dsdv", k)) == v:
                continue
            if k in tcl:
                var = tcl[k]["ns2_tcl"].split(" ")[1]
                dsdv.append((var, ("1" if v else "0") if isinstance(v, bool) else _num(float(v) * tcl[k]["scale"])))
            else:
                raise _refuse(f"routing.dsdv.{k}", "not settable in ns-2.35's Agent/DSDV (a #define in dsdv.cc); only its default can be exported")
    routing = _ROUTING[proto]
    # Interface queue.
    q = n.get("queue") or {}
    kind = q.get("kind", "cmupriqueue" if routing == "DSR" else "priqueue")
    if kind in ("red", "lred"):
        raise _refuse("queue.kind", f'{_q(kind)} on a wireless interface has no ns-2.35 equivalent (its RED is a wired queue without MAC feedback)')
    if routing == "DSR":
        if kind != "cmupriqueue":
            raise _refuse("queue.kind", f'{_q(kind)} with DSR: ns-2.35 DSR needs its CMUPriQueue (use kind = "cmupriqueue", the default)')
        if int(q.get("limit_pkts") or 50) != 50:
            raise _refuse("queue.limit_pkts", "ns-2.35's CMUPriQueue holds a fixed 50 packets per band (IFQ_MAXLEN) and ignores the queue length")
        ifq = "CMUPriQueue"
    elif kind == "cmupriqueue":
        raise _refuse("queue.kind", f'"cmupriqueue" with {routing}: ns-2.35\'s {routing} needs the PriQueue interface (use "priqueue")')
    else:
        ifq = "Queue/DropTail/PriQueue" if kind == "priqueue" else "Queue/DropTail"
    ifq_len = int(q.get("limit_pkts") or 50)
    # Radio.
    settings: list[tuple[str, str, str]] = []
    radio = d.get("radio") or {}
    if radio.get("reception", "capture") != "capture":
        raise _refuse("radio.reception", '"sinr": ns-2.35 Phy/WirelessPhy has no cumulative-interference (SINR) reception; only "capture"')
    prop_kind = radio.get("propagation", "two_ray_ground")
    propagation = _PROPAGATION[prop_kind]
    simple = {
        "tx_power_w": ("Phy/WirelessPhy", "Pt_"),
        "system_loss": ("Phy/WirelessPhy", "L_"),
        "rx_threshold_w": ("Phy/WirelessPhy", "RXThresh_"),
        "cs_threshold_w": ("Phy/WirelessPhy", "CSThresh_"),
        "capture_threshold": ("Phy/WirelessPhy", "CPThresh_"),
        "antenna_height_m": ("Antenna/OmniAntenna", "Z_"),
        "tx_antenna_gain": ("Antenna/OmniAntenna", "Gt_"),
        "rx_antenna_gain": ("Antenna/OmniAntenna", "Gr_"),
        "path_loss_exponent": ("Propagation/Shadowing", "pathlossExp_"),
        "shadowing_sigma_db": ("Propagation/Shadowing", "std_db_"),
        "reference_distance_m": ("Propagation/Shadowing", "dist0_"),
    }
    for key, (cls, var) in simple.items():
        if radio.get(key) is not None:
            settings.append((cls, var, _num(radio[key])))
    if radio.get("frequency_mhz") is not None:
        settings.append(("Phy/WirelessPhy", "freq_", _num(radio["frequency_mhz"] * 1e6)))
    for key, var in (("rx_range_m", "RXThresh_"), ("cs_range_m", "CSThresh_")):
        if radio.get(key) is not None:
            settings.append(("Phy/WirelessPhy", var, repr(_mean_rx_w(radio, float(radio[key])))))
    # MAC.
    mac = d.get("mac") or {}
    # Keys with an ns-2 Tcl variable come from the core's declarations
    # (`_core.param_table()`: `ns2_tcl`, and `scale` = SI units per scenario unit).
    for row in _param_rows("mac"):
        key = row["key"]
        if key == "plcp_us" and mac.get(key) is not None:
            # PLCP time = (PreambleLength_ + PLCPHeaderLength_) / PLCPDataRate_ at 1 Mb/s.
            bits = float(mac["plcp_us"])
            if bits < _PLCP_HEADER_BITS or not bits.is_integer():
                raise _refuse("mac.plcp_us", f"{excerpt(mac['plcp_us'], 60)}: ns-2 builds the PLCP time from whole bits at 1 Mb/s with a 48-bit header (allowed: an integer >= 48)")
            settings.append(("Mac/802_11", "PreambleLength_", str(int(bits) - _PLCP_HEADER_BITS)))
        if row["ns2_tcl"] is None:
            continue
        # The rates are written even when left out: ns-2 versions differ in their defaults.
        value = mac.get(key, row["defaults"]["ns2-2.35"] if key in _ALWAYS_WRITTEN else None)
        if value is not None:
            cls, var = row["ns2_tcl"].split(" ")
            settings.append((cls, var, _num(float(value) * row["scale"])))
    # Area: ns-2's flat grid; positions from a chain/grid/explicit placement must lie inside it.
    area = n.get("area")
    if area:
        area_m = (float(area["width_m"]), float(area["height_m"]))
    else:
        xs, ys = _static_extent(n)
        area_m = (max(xs, 0.0) + 1.0, max(ys, 0.0) + 1.0)
    outputs = n.get("outputs") or {}
    mac_trace = "mac" in (outputs.get("trace_levels") or [])
    flows = [_flow_plan(i, f, n) for i, f in enumerate(n["flows"])]
    return _Plan(routing, ifq, ifq_len, area_m, propagation, settings, dsdv, flows, mac_trace)


def _mean_rx_w(radio: Mapping[str, Any], d_m: float) -> float:
    """Mean received power at `d_m` under the scenario's propagation model (the
    core's `rx_range_m` -> threshold rule, ns-2 `threshold.cc`)."""
    pt = float(radio.get("tx_power_w", _NS2_PT_W))
    f_hz = float(radio.get("frequency_mhz", _NS2_FREQ_HZ / 1e6)) * 1e6
    lam = _SPEED_OF_LIGHT_MPS / f_hz
    h = float(radio.get("antenna_height_m", _NS2_ANTENNA_Z_M))
    gt = float(radio.get("tx_antenna_gain", 1.0))
    gr = float(radio.get("rx_antenna_gain", 1.0))
    loss = float(radio.get("system_loss", 1.0))

    def friis(d: float) -> float:
        return pt * gt * gr * lam * lam / ((4 * math.pi) ** 2 * d * d * loss)

    kind = radio.get("propagation", "two_ray_ground")
    if kind == "free_space":
        return friis(d_m)
    if kind == "two_ray_ground":
        crossover = 4 * math.pi * h * h / lam
        return friis(d_m) if d_m < crossover else pt * gt * gr * h**4 / (d_m**4 * loss)
    d0 = float(radio.get("reference_distance_m", 1.0))
    beta = float(radio.get("path_loss_exponent", 2.0))
    ratio: float = (d0 / d_m) ** beta  # float ** float is typed Any (it may be complex)
    return friis(d0) * ratio


def _static_extent(n: Mapping[str, Any]) -> tuple[float, float]:
    count = int(n["nodes"]["count"])
    p = n["nodes"].get("placement") or {"kind": "none"}
    if p["kind"] == "chain":
        return (count - 1) * float(p["spacing_m"]), 0.0
    if p["kind"] == "grid":
        cols = int(p["columns"])
        sp = float(p["spacing_m"])
        return (min(count, cols) - 1) * sp, ((count - 1) // cols) * sp
    if p["kind"] == "explicit":
        pos = p["positions_m"]
        return max(x for x, _ in pos), max(y for _, y in pos)
    return 0.0, 0.0


def _flow_plan(i: int, f: Mapping[str, Any], n: Mapping[str, Any]) -> dict[str, Any]:
    key = f"flows[{i}]"
    dur = float(n["duration_s"])
    stop = min(float(f["stop_s"]), dur) if f.get("stop_s") is not None else dur
    plan: dict[str, Any] = {
        "flow": i,
        "name": f.get("name") or f"flow{i}",
        "kind": f["kind"],
        "src": int(f["src"]),
        "dst": int(f["dst"]),
        "start_s": float(f["start_s"]),
        "stop_s": stop,
    }
    if f["kind"] == "cbr":
        size = int(f.get("packet_size_bytes") or 512)
        if f.get("interval_s") is not None:
            interval = float(f["interval_s"])
        else:
            interval = size * 8 / (float(f["rate_kbps"]) * 1000)
        jitter = float(f.get("jitter_s") or 0.0)
        if jitter != 0.0 and not math.isclose(jitter, interval / 2, rel_tol=1e-12):
            raise _refuse(
                f"{key}.jitter_s",
                f"{jitter}: ns-2's CBR jitters only by U(-interval/2, +interval/2) (random_ 1); allowed: 0 or {interval / 2!r}",
            )
        if f.get("udp_header"):
            raise _refuse(f"{key}.udp_header", "true: ns-2's Agent/UDP sends no UDP header (allowed: false, the default)")
        plan.update(
            transport="udp",
            packet_size_bytes=size,
            interval_s=interval,
            random=1 if jitter else 0,
            max_packets=f.get("max_packets"),
        )
        return plan
    t = f.get("transport") or "newreno"
    if t not in TCP_AGENTS:
        raise _refuse(f"{key}.transport", f'{_q(t)} has no ns-2.35 agent (exportable: {", ".join(TCP_AGENTS)})')
    tcp = dict(f.get("tcp") or {})
    sender: list[tuple[str, str]] = []
    for k, v in sorted(tcp.items()):
        if v is None:
            continue
        if k == "fack_rules":
            if v != "ns2":
                raise _refuse(f"{key}.tcp.{k}", f'{_q(v)}: ns-2.35\'s Agent/TCP/Fack has its own rules only (allowed: "ns2", the default)')
            continue
        if k == "vegas_counts_headers":
            if v:
                raise _refuse(f"{key}.tcp.{k}", "true: ns-2.35's Agent/TCP/Vegas always sends packetSize_ bytes without its TCP/IP header")
            continue
        if k == "vegas_zero_window_after_timeout":
            if not v:
                raise _refuse(f"{key}.tcp.{k}", "false: ns-2.35's Agent/TCP/Vegas always sets v_newcwnd_ = 0 on a timeout")
            continue
        if k in _TCP_SENDER_KEYS:
            if k.startswith("vegas_") and t != "vegas":
                continue
            sender.append((_TCP_SENDER_KEYS[k], _num(v)))
        elif k not in _TCP_OTHER_KEYS:
            raise _refuse(f"{key}.tcp.{k}", "has no ns-2.35 one-way TCP equivalent")
    sack = tcp.get("sack")
    if sack is not None and bool(sack) != (t in _SACK_VARIANTS):
        raise _refuse(
            f"{key}.tcp.sack",
            f"{str(sack).lower()} with {t}: in ns-2 SACK comes with the agent (Agent/TCP/Sack1, Agent/TCP/Fack) and cannot be switched",
        )
    delack = bool(tcp.get("delayed_ack", False))
    sink = "Agent/TCPSink/Sack1" if t in _SACK_VARIANTS else "Agent/TCPSink"
    if delack:
        sink += "/DelAck"
    sink_vars: list[tuple[str, str]] = []
    if delack and tcp.get("delayed_ack_timeout_s") is not None:
        sink_vars.append(("interval_", _num(tcp["delayed_ack_timeout_s"])))
    mss = int(tcp.get("mss_bytes") or 1000)
    plan.update(
        transport=t,
        agent=TCP_AGENTS[t],
        sink=sink,
        sender_vars=sender,
        sink_vars=sink_vars,
        mss_bytes=mss,
        file_bytes=f.get("file_bytes"),
    )
    return plan


# --------------------------------------------------------------------------- Tcl


def _tcl(s: Scenario, p: _Plan, fmt: str, nseed: int) -> str:
    n = s.normalized
    count = int(n["nodes"]["count"])
    dur = float(n["duration_s"])
    w, h = p.area_m
    src = str(s.source) if s.source is not None else "(dict)"
    # Text from the scenario (its name, its file's path, flow names) enters the
    # script only through tcl_comment / tcl_word (manetlab.ns2.tcl); everything
    # else written below is a constant of this module or a number made by int()
    # or _num().
    L: list[str] = []
    a = L.append
    a("# ns-2.35 script written by `manetlab export-ns2` (docs/ns2.md).")
    a(tcl_comment(f"scenario: {s.label} ({src}), manetlab seed {int(s.seed)}"))
    a(f"# Run from this directory: ns run.tcl  -> {TRACE_FILE}, {PORTS_FILE}")
    a("")
    a(f"set val(seed)     {nseed}")
    a(f"set val(nn)       {count}")
    a(f"set val(x)        {_num(w)}")
    a(f"set val(y)        {_num(h)}")
    a(f"set val(stop)     {_num(dur)}")
    a(f"set val(rp)       {p.routing}")
    a(f"set val(ifq)      {p.ifq}")
    a(f"set val(ifqlen)   {p.ifq_len}")
    a(f"set val(prop)     {p.propagation}")
    a("")
    a("# Random draws (MAC backoff, routing jitter): ns-2's default MRG32k3a stream.")
    a("$defaultRNG seed $val(seed)")
    a("")
    a("# Radio, MAC and link-layer parameters that differ from, or pin, ns-2's defaults.")
    for cls, var, val in p.settings:
        a(f"{cls} set {var} {val}")
    for var, val in p.dsdv:
        a(f"Agent/DSDV set {var} {val}")
    a("")
    a("set ns_ [new Simulator]")
    if fmt == "new":
        a("$ns_ use-newtrace")
    a(f"set tracefd [open {tcl_word(TRACE_FILE)} w]")
    a("$ns_ trace-all $tracefd")
    a("set topo [new Topography]")
    a("$topo load_flatgrid $val(x) $val(y)")
    a("set god_ [create-god $val(nn)]")
    a("set chan_ [new Channel/WirelessChannel]")
    a("$ns_ node-config -adhocRouting $val(rp) \\")
    a("    -llType LL -macType Mac/802_11 \\")
    a("    -ifqType $val(ifq) -ifqLen $val(ifqlen) \\")
    a("    -antType Antenna/OmniAntenna -propType $val(prop) \\")
    a("    -phyType Phy/WirelessPhy -channel $chan_ -topoInstance $topo \\")
    a(f"    -agentTrace ON -routerTrace ON -macTrace {'ON' if p.mac_trace else 'OFF'} -movementTrace OFF")
    a("for {set i 0} {$i < $val(nn)} {incr i} {")
    a("    set node_($i) [$ns_ node]")
    a("    $node_($i) random-motion 0")
    a("}")
    a("")
    a("# Start positions and movement, written by manetlab (identical trajectories).")
    a(f"source {tcl_word(MOVEMENT_FILE)}")
    a("")
    a(f"set portsfd [open {tcl_word(PORTS_FILE)} w]")
    for f in p.flows:
        i = int(f["flow"])
        a(tcl_comment(f"flow {i} ({f['name']}): {f['kind']} {f['src']} -> {f['dst']}, {f['transport']}"))
        if f["kind"] == "cbr":
            a(f"set src_({i}) [new Agent/UDP]")
            a(f"$src_({i}) set packetSize_ {max(f['packet_size_bytes'], 1000)}")
            a(f"set sink_({i}) [new Agent/Null]")
            a(f"$ns_ attach-agent $node_({f['src']}) $src_({i})")
            a(f"$ns_ attach-agent $node_({f['dst']}) $sink_({i})")
            a(f"$ns_ connect $src_({i}) $sink_({i})")
            a(f"set app_({i}) [new Application/Traffic/CBR]")
            a(f"$app_({i}) set packetSize_ {f['packet_size_bytes']}")
            a(f"$app_({i}) set interval_ {_num(f['interval_s'])}")
            a(f"$app_({i}) set random_ {f['random']}")
            if f.get("max_packets"):
                a(f"$app_({i}) set maxpkts_ {int(f['max_packets'])}")
            a(f"$app_({i}) attach-agent $src_({i})")
            a(f'$ns_ at {_num(f["start_s"])} "$app_({i}) start"')
            if f["stop_s"] < dur:
                a(f'$ns_ at {_num(f["stop_s"])} "$app_({i}) stop"')
        else:
            a(f"set src_({i}) [new {f['agent']}]")
            for var, val in f["sender_vars"]:
                a(f"$src_({i}) set {var} {val}")
            a(f"set sink_({i}) [new {f['sink']}]")
            for var, val in f["sink_vars"]:
                a(f"$sink_({i}) set {var} {val}")
            a(f"$ns_ attach-agent $node_({f['src']}) $src_({i})")
            a(f"$ns_ attach-agent $node_({f['dst']}) $sink_({i})")
            a(f"$ns_ connect $src_({i}) $sink_({i})")
            a(f"set app_({i}) [new Application/FTP]")
            a(f"$app_({i}) attach-agent $src_({i})")
            if f.get("file_bytes"):
                a(f'$ns_ at {_num(f["start_s"])} "$app_({i}) send {int(f["file_bytes"])}"')
            else:
                a(f'$ns_ at {_num(f["start_s"])} "$app_({i}) start"')
            if f["stop_s"] < dur:
                a(f'$ns_ at {_num(f["stop_s"])} "$app_({i}) stop"')
        a(f'puts $portsfd "{i} [$src_({i}) set agent_port_] [$sink_({i}) set agent_port_]"')
    a("close $portsfd")
    a("")
    a("proc finish {} {")
    a("    global ns_ tracefd")
    a("    $ns_ flush-trace")
    a("    close $tracefd")
    a("    $ns_ halt")
    a("}")
    a("for {set i 0} {$i < $val(nn)} {incr i} {")
    a('    $ns_ at $val(stop) "$node_($i) reset"')
    a("}")
    a('$ns_ at $val(stop) "finish"')
    a("$ns_ run")
    return "\n".join(L) + "\n"


def _flows_meta(s: Scenario, p: _Plan, fmt: str) -> dict[str, Any]:
    flows = []
    for f in p.flows:
        m = {k: v for k, v in f.items() if k not in ("sender_vars", "sink_vars")}
        flows.append(m)
    return {
        "scenario": s.label,
        "seed": s.seed,
        "ns2_seed": ns2_seed(s.seed),
        "duration_s": s.duration_s,
        "nodes": int(s.normalized["nodes"]["count"]),
        "routing": p.routing,
        "trace_format": fmt,
        "flows": flows,
    }
