"""Paper 002: Khelage & Kolekar, "Improving TCP Throughput Using Modified Packet
Reordering Technique (MPRT) Over Manets".

Nine TCP variants (Tahoe "TCP", Reno, NewReno, Westwood, Westwood+ "WestwoodNR",
Vegas, SACK, FACK, MPR) in six network models: congestion, link failure, signal
loss, interference, chain, grid (§IV–V, Tables II–VII). Every model's figure is
lost from our copy; each model is an example scenario (examples/mpr_*.toml, the
layouts documented there), defined here in `MODELS` (a test checks the two agree).

Study: the six models are placed side by side in one simulated plane, 3 km apart
(the closest nodes of two models are 2.4 km apart, more than four times the 550 m
carrier-sense range, so no frame of one model
reaches a node of another and no route joins them), so one run simulates all six
with one variant on every flow: a study of 9 cells (one zipped axis, the variant)
× seeds. Seeds only change MAC backoff, ARP/AODV jitter and the like: the models
are deterministic layouts, as in the paper.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from manetlab.reproduce.base import (
    ASSUMED,
    HOLDS,
    INCONCLUSIVE,
    LOST,
    NOT_HOLDS,
    OURS,
    STATED,
    Claim,
    Context,
    Difference,
    Figure,
    Paper,
    Table,
    combine,
    finite,
    fmt,
    fmt_ci,
    paper_vs_ours_bars,
    positive_test,
    pyplot,
    seed_diffs,
)
from manetlab.stats import mean_ci

VARIANTS = ["tahoe", "reno", "newreno", "westwood", "westwood+", "vegas", "sack", "fack", "mpr"]
#: The paper's names (its tables' "Variant" column).
NAMES = {"tahoe": "TCP", "reno": "Reno", "newreno": "Newreno", "westwood": "Westwood", "westwood+": "WestwoodNR",
         "vegas": "Vegas", "sack": "Sack", "fack": "Fack", "mpr": "MPR"}
DURATION_S = 150.0
FLOW_START_S = 1.0
MODEL_SPACING_M = 3000.0  # between the models' origins in the combined plane
CS_RANGE_M = 550.0  # our radio default = the paper's interference radius

#: Paper tables II–VII: variant -> (throughput, delay, dropped packets). Units are not
#: stated; throughput reads as kbit/s and delay as ms (magnitudes at 1 Mb/s).
#: Table IV (signal loss) is garbled in our copy: its first row (TCP: 126.00, 242.009,
#: 42) is split around Table III's body; we read the 374.09 block as Table III
#: (link failure: the text says "table 3") and the rows from Reno 127.52 on as Table IV.
PAPER_VALUES: dict[str, dict[str, tuple[float, float, float]]] = {
    "congestion": {  # Table II
        "tahoe": (371.54, 491.632, 600), "reno": (371.25, 482.392, 572), "newreno": (370.96, 489.4, 631),
        "westwood": (371.70, 506.764, 594), "westwood+": (371.70, 456.783, 562), "vegas": (192.35, 122.535, 562),
        "sack": (367.49, 451.994, 588), "fack": (362.81, 445.309, 555), "mpr": (374.69, 414.11, 405),
    },
    "link_failure": {  # Table III
        "tahoe": (374.09, 226.1, 17), "reno": (374.09, 226.1, 17), "newreno": (374.09, 226.1, 17),
        "westwood": (374.09, 226.1, 17), "westwood+": (374.09, 226.1, 17), "vegas": (193.36, 39.093, 1),
        "sack": (374.09, 226.1, 17), "fack": (374.09, 226.1, 17), "mpr": (374.68, 62.824, 2),
    },
    "signal_loss": {  # Table IV
        "tahoe": (126.00, 242.009, 42), "reno": (127.52, 229.244, 42), "newreno": (48.99, 242.241, 27),
        "westwood": (124.90, 243.186, 45), "westwood+": (125.61, 232.455, 41), "vegas": (93.94, 55.8684, 20),
        "sack": (126.20, 229.576, 43), "fack": (146.16, 217.699, 40), "mpr": (365.71, 65.162, 5),
    },
    "interference": {  # Table V
        "tahoe": (736.51, 236.228, 1861), "reno": (736.51, 236.228, 1861), "newreno": (736.51, 236.228, 1861),
        "westwood": (736.51, 236.228, 1861), "westwood+": (736.51, 236.228, 1861), "vegas": (380.24, 38.713, 1905),
        "sack": (736.51, 236.228, 1861), "fack": (736.51, 236.228, 1861), "mpr": (737.78, 136.494, 1778),
    },
    "chain": {  # Table VI
        "tahoe": (253.03, 333.966, 173), "reno": (253.03, 333.966, 243), "newreno": (253.03, 333.966, 243),
        "westwood": (253.03, 333.966, 243), "westwood+": (253.03, 333.966, 243), "vegas": (130.86, 57.637, 149),
        "sack": (253.03, 333.966, 243), "fack": (253.03, 333.966, 243), "mpr": (253.60, 135.096, 173),
    },
    "grid": {  # Table VII
        "tahoe": (488.35, 1345.12, 5), "reno": (488.35, 1345.12, 5), "newreno": (488.35, 1345.12, 5),
        "westwood": (495.59, 1339.02, 12), "westwood+": (478.16, 1285.47, 4), "vegas": (222.78, 171.355, 0),
        "sack": (497.10, 1113.29, 63), "fack": (504.30, 1350.66, 14), "mpr": (617.56, 588.534, 2),
    },
}
TABLE_NO = {"congestion": "II", "link_failure": "III", "signal_loss": "IV", "interference": "V", "chain": "VI", "grid": "VII"}
FIG_NO = {"congestion": 10, "link_failure": 11, "signal_loss": 12, "interference": 13, "chain": 14, "grid": 15}
SECTION = {"congestion": "§IV.1", "link_failure": "§IV.2", "signal_loss": "§IV.3", "interference": "§IV.4", "chain": "§V.1", "grid": "§V.2"}
TITLE = {"congestion": "Congestion", "link_failure": "Link failure", "signal_loss": "Signal loss", "interference": "Interference",
         "chain": "Chain multi-hop", "grid": "Grid multi-hop"}


def _ftp(src: int, dst: int, name: str) -> dict[str, Any]:
    return {"name": name, "kind": "ftp", "src": src, "dst": dst, "start_s": FLOW_START_S, "transport": "newreno"}


#: The six models, each exactly the scenario of its examples/mpr_<model>.toml (without
#: the keys common to all, `COMMON`). Layouts are ours (the figures are lost); the
#: example files say why each is laid out so.
MODELS: dict[str, dict[str, Any]] = {
    "congestion": {
        "area": {"width_m": 700, "height_m": 500},
        "positions_m": [[150, 250], [350, 50], [350, 250], [350, 450], [550, 250]],
        "flows": [_ftp(0, 4, "tcp0-4"), _ftp(1, 3, "tcp1-3"), _ftp(3, 0, "tcp3-0")],
    },
    "link_failure": {
        "area": {"width_m": 700, "height_m": 500},
        "positions_m": [[100, 250], [300, 250], [500, 250], [200, 430], [400, 430]],
        "faults": {"node_switches": [{"node": 1, "off_s": 50.0, "on_s": 100.0}]},
        "flows": [_ftp(0, 2, "tcp0-2")],
    },
    "signal_loss": {
        "area": {"width_m": 700, "height_m": 500},
        "positions_m": [[150, 250], [350, 250], [550, 250]],
        "moves": [{"node": 1, "moves": [{"time_s": 50, "dest_m": [350, 500], "speed_mps": 25},
                                        {"time_s": 70, "dest_m": [350, 250], "speed_mps": 25}]}],
        "flows": [_ftp(0, 2, "tcp0-2")],
    },
    "interference": {
        "area": {"width_m": 700, "height_m": 500},
        "positions_m": [[100, 50], [300, 50], [500, 50], [100, 450], [300, 450], [500, 450]],
        "flows": [_ftp(0, 2, "main0-2"), _ftp(3, 5, "second3-5")],
    },
    "chain": {
        "area": {"width_m": 700, "height_m": 500},
        "positions_m": [[50, 250], [250, 250], [450, 250], [650, 250]],
        "flows": [_ftp(0, 3, "tcp0-3")],
    },
    "grid": {
        "area": {"width_m": 700, "height_m": 700},
        "positions_m": [[50 + 200 * c, 50 + 200 * r] for r in range(4) for c in range(4)],
        "flows": [_ftp(4, 7, "row4-7"), _ftp(2, 14, "col2-14")],
    },
}
COMMON: dict[str, Any] = {
    "duration_s": DURATION_S,
    "radio": {},
    "queue": {"kind": "priqueue", "limit_pkts": 50},
    "routing": {"protocol": "aodv"},
}


def model_scenario(model: str, transport: str = "newreno") -> dict[str, Any]:
    """One model alone, as examples/mpr_<model>.toml (name and seed included)."""
    m = MODELS[model]
    sc: dict[str, Any] = {"name": f"mpr-{model.replace('_', '-')}", "seed": 1, **copy.deepcopy(COMMON),
                          "area": dict(m["area"]), "nodes": {"count": len(m["positions_m"]),
                                                             "placement": {"kind": "explicit", "positions_m": [list(p) for p in m["positions_m"]]}},
                          "flows": [{**f, "transport": transport} for f in m["flows"]]}
    if "moves" in m:
        sc["mobility"] = {"model": "scripted", "nodes": copy.deepcopy(m["moves"])}
    if "faults" in m:
        sc["faults"] = copy.deepcopy(m["faults"])
    return sc


def combined_layout() -> tuple[dict[str, Any], dict[str, list[int]]]:
    """The six models side by side (model k shifted by k·3 km in x, its node ids by
    the nodes before it) as one scenario, and each model's flow indices in it."""
    positions: list[list[float]] = []
    flows: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    switches: list[dict[str, Any]] = []
    flow_idx: dict[str, list[int]] = {}
    height = 0.0
    for k, (name, m) in enumerate(MODELS.items()):
        off_n, off_x = len(positions), k * MODEL_SPACING_M
        positions += [[x + off_x, y] for x, y in m["positions_m"]]
        height = max(height, m["area"]["height_m"])
        flow_idx[name] = list(range(len(flows), len(flows) + len(m["flows"])))
        flows += [{**f, "name": f"{name}:{f['name']}", "src": f["src"] + off_n, "dst": f["dst"] + off_n} for f in m["flows"]]
        for mv in m.get("moves", []):
            moves.append({"node": mv["node"] + off_n, "moves": [{**c, "dest_m": [c["dest_m"][0] + off_x, c["dest_m"][1]]} for c in mv["moves"]]})
        for sw in m.get("faults", {}).get("node_switches", []):
            switches.append({**sw, "node": sw["node"] + off_n})
    sc = {"name": "mpr-six-models", **copy.deepcopy(COMMON),
          "area": {"width_m": (len(MODELS) - 1) * MODEL_SPACING_M + 700, "height_m": height},
          "nodes": {"count": len(positions), "placement": {"kind": "explicit", "positions_m": positions}},
          "mobility": {"model": "scripted", "nodes": moves},
          "faults": {"node_switches": switches},
          "flows": flows}
    return sc, flow_idx


BASE, FLOWS_OF = combined_layout()
N_FLOWS = len(BASE["flows"])
TP = "flows[0].transport"


def per_model(ctx: Context) -> Any:
    """One row per (run, model): the paper's three quantities over the model's flows
    (throughput summed; delay averaged over received packets; drops summed) and
    the TCP counters that explain them."""
    return ctx.memo("mpr per model", lambda: _per_model(ctx.results))


def _per_model(df: Any) -> Any:
    import pandas as pd

    rows = []
    for _, r in df.iterrows():
        for model, idx in FLOWS_OF.items():
            rx = [float(r[f"flow{i}.rx_packets"]) for i in idx]
            delays = [float(r[f"flow{i}.delay_mean_s"]) for i in idx]
            num = sum(d * n for d, n in zip(delays, rx) if n > 0 and not math.isnan(d))
            rows.append({
                "seed": int(r["seed"]), "variant": r[TP], "model": model,
                "throughput_kbps": sum(float(r[f"flow{i}.throughput_kbps"]) for i in idx),
                "delay_ms": 1000 * num / sum(rx) if sum(rx) > 0 else math.nan,
                "dropped": sum(float(r[f"flow{i}.dropped_packets"]) for i in idx),
                "dropped_all": sum(float(r[f"flow{i}.dropped_packets"]) + float(r[f"flow{i}.ctrl_dropped_packets"]) for i in idx),
                "retransmissions": sum(float(r[f"flow{i}.retransmissions"]) for i in idx),
                "timeouts": sum(float(r[f"flow{i}.timeouts"]) for i in idx),
                "fast_retransmits": sum(float(r[f"flow{i}.fast_retransmits"]) for i in idx),
                "drops_detected": sum(float(r[f"flow{i}.drops_detected"]) for i in idx),
                "delivered": sum(rx),
            })
    return pd.DataFrame(rows)


def _vals(pm: Any, model: str, variant: str, col: str) -> list[float]:
    return finite(pm[(pm["model"] == model) & (pm["variant"] == variant)][col].tolist())


class Mpr(Paper):
    name = "mpr"
    title = "MPR and eight TCP variants in six network models (paper 002)"
    citation = ("P. B. Khelage, U. D. Kolekar, \"Improving TCP Throughput Using Modified Packet Reordering Technique (MPRT) Over Manets\" "
                "(UMIT, SNDT Women's University; Smt. Indira Gandhi College of Engineering, Mumbai)")
    paper_file = "002_36e0bf641f279122.txt"
    # The models are fixed layouts: seeds change only MAC backoff and protocol jitter,
    # so spreads are small and 10 seeds give tight intervals (report, "seeds").
    full_seeds = "1-10"
    quick_seeds = "1"

    description = "paper 002: nine TCP variants in six network models (placed 3 km apart in one plane), 150 s, AODV"
    metrics = ("total.throughput_kbps", "total.tx_packets", "total.rx_packets")

    def scenario(self) -> dict[str, Any]:
        return copy.deepcopy(BASE)

    def axes(self, quick: bool) -> dict[str, Any]:
        # One variant on every flow of every model: one zipped axis.
        return {"zip": [{f"flows[{i}].transport": VARIANTS for i in range(N_FLOWS)}]}

    def setup(self) -> list[str]:
        return [
            "Paper 002 Table I: ns-2 CMU 802.11 at 1 Mb/s (ns-2.35's default data and basic rate), two-ray ground, 250 m transmission and 550 m interference "
            "(carrier-sense) radius — our radio defaults —, DropTail/PriQueue of 50, AODV with ns-2's parameters, 1000-byte segments (ns-2 TCP default), 150 s.",
            "Nine variants: Tahoe (the paper's \"TCP\"), Reno, NewReno, Westwood, Westwood+ (\"WestwoodNR\"), Vegas, SACK, FACK and MPR, with ns-2 Agent/TCP defaults "
            "(window 20, min RTO 0.2 s); MPR as docs/tcp.md describes it (α 0.99, β 3; drops detected by timers only). Every flow of every model uses the same variant.",
            "Six models, layouts ours (figures lost), each an example file: congestion (examples/mpr_congestion.toml: 5 nodes, centre node 2, flows 0→4, 1→3, 3→0 through it), "
            "link failure (mpr_link_failure.toml: 0→2 via relay 1, 2 hops; relay off 50–100 s, detour 0–3–4–2, 3 hops), "
            "signal loss (mpr_signal_loss.toml: 3-node line, the relay moves out of range 56–74 s and back), "
            "interference (mpr_interference.toml: 2-hop main connection 0→2 and 2-hop second connection 3→5 in a row 400 m away; forwarder 1 is 447 m from sender 3), "
            "chain (mpr_chain.toml: 4 nodes 200 m apart, FTP 0→3), grid (mpr_grid.toml: 4 × 4, 200 m, FTP 4→7 along a row and 2→14 along a column, crossing at node 6).",
            "All FTP flows run from 1 s to the end. The six models are simulated in one run, 3 km apart (no frame or route crosses between them); "
            "seeds 1–10 give the mean and 95 % CI beside the paper's single run. Why 10: the layouts are fixed, so a seed changes only MAC backoff and "
            "protocol jitter and runs of one cell differ little; 10 seeds make the paired tests decisive for differences of a few per cent, and the 90 runs "
            "(each simulating all six models) take minutes on 2 shared cores.",
            "Per model and run: throughput = Σ over its flows of payload delivered in order × 8 / active time (kbit/s); delay = mean end-to-end delay of the data "
            "segments received over its flows (ms); dropped = data segments of its flows whose fate was a drop (and, beside it, with the TCP ACKs' drops).",
        ]

    def differences(self) -> list[Difference]:
        return [
            Difference("model layouts (Figs. 3–8)", "figures lost from our copy; text describes each model", "our layouts from the text and its cited sources (setup; examples/mpr_*.toml)",
                       LOST, "the figures are images; each example file documents the choice"),
            Difference("flows, start/stop, which nodes", "not stated except the congestion model's three flows and the chain's first→last node",
                       "see setup; all flows 1 s → 150 s; grid: two crossing flows (the text names none)", ASSUMED, "not stated"),
            Difference("chain length and \"sequential TCP connections\"", "\"variable length chain\", \"one FTP connection active at a time\"",
                       "one 3-hop chain (the longest 200 m chain in 700 m), one connection for the whole run", ASSUMED,
                       "the text's \"node 4 interferes with node 1's transmission to node 2\" fits a 4-node chain in 1-based numbering"),
            Difference("grid area", "700 m × 500 m for every model", "700 m × 700 m for the grid (a 4 × 4 grid at 200 m spans 600 m × 600 m)", STATED,
                       "the paper's area cannot hold its grid"),
            Difference("link failure timing", "\"shutting down one intermediate node\"; when not stated", "relay off at 50 s, on again at 100 s (faults.node_switches)", ASSUMED, "not stated"),
            Difference("signal loss timing", "the relay \"moves away for few second\" and returns", "leaves at 50 s, out of range 56–74 s, home at 80 s (25 m/s)", ASSUMED, "not stated"),
            Difference("six models in one run", "six separate simulations", "one simulation per variant and seed holding the six models 3 km apart", OURS,
                       "a study varies keys of one scenario; the closest nodes of two models are 2.4 km apart, > 4× the 550 m carrier-sense range (two-ray: a signal there is 0.3 % of the carrier-sense threshold), so the models cannot hear each other "
                       "(a test checks the spacing); node ids differ from a standalone run, so a given seed's backoff draws differ from the example file's"),
            Difference("randomness", "one run per variant (a deterministic ns-2 run)", "10 seeds per variant (MAC backoff, ARP/AODV jitter), mean [95 % CI]", ASSUMED,
                       "one run is one sample of the MAC's random backoff"),
            Difference("MPR", "pseudo-code garbled; \"drops are always detected through timers\"", "our reconstruction (docs/tcp.md `mpr`): TCP-PR's to-be-ack/to-be-sent lists, "
                       "mxrtt = β·ewrtt, halving once per window, no duplicate-ACK retransmission", OURS, "the paper's listing is incomplete; we follow its text and TCP-PR"),
            Difference("Westwood, Westwood+", "ns-2 modules (version not stated)", "our implementations (docs/tcp.md), not in ns-2.35 mainline", OURS, "no ns-2.35 reference"),
            Difference("units and definitions", "\"Throughput\", \"Delay\", \"Drop Packet\" from AWK over trace files; units not stated",
                       "kbit/s, ms, and packets (data segments; with ACKs beside); throughput summed over a model's flows", ASSUMED,
                       "the magnitudes fit kbit/s and ms at 1 Mb/s; a trace count of D lines may include ACK and routing drops"),
            Difference("Table III/IV text", "garbled in our copy: Table IV's first row is split around Table III", "the 374.09 block read as Table III (link failure), rows from Reno 127.52 plus "
                       "TCP 126.00 as Table IV (signal loss)", LOST, "the text says \"table 3\" for link failure; the 374.09 values show one route change, not an outage"),
            Difference("DSDV", "Table I lists AODV and DSDV", "AODV only", STATED, "the tables report one routing protocol per model; the text does not say which table used DSDV"),
            Difference("simulator", "ns-2 (version not stated)", "manetlab reproducing ns-2.35's CMU wireless model and TCP agents", OURS, "our reference is ns-2.35"),
        ]

    def tables(self, ctx: Context) -> list[Table]:
        pm = per_model(ctx)
        out = []
        for model in MODELS:
            rows = []
            for v in VARIANTS:
                pt, pdl, pdr = PAPER_VALUES[model][v]
                rows.append([NAMES[v], fmt(pt), fmt_ci(_vals(pm, model, v, "throughput_kbps"), 1), fmt(pdl, 3), fmt_ci(_vals(pm, model, v, "delay_ms"), 1),
                             f"{pdr:.0f}", fmt_ci(_vals(pm, model, v, "dropped"), 1), fmt_ci(_vals(pm, model, v, "dropped_all"), 1)])
            out.append(Table(f"Table {TABLE_NO[model]}: {TITLE[model]} network model ({SECTION[model]})",
                             ["variant", "paper throughput", "ours throughput (kbit/s)", "paper delay", "ours delay (ms)", "paper drop packet",
                              "ours dropped data segments", "ours dropped incl. ACKs"], rows,
                             ["paper throughput", "paper delay", "paper drop packet"], ["ours throughput (kbit/s)", "ours delay (ms)", "ours dropped data segments"],
                             "Ours: mean [95 % CI] over seeds; the paper's: one run, units not stated. Throughput summed over the model's flows."))
        return out

    def extra_tables(self, ctx: Context) -> list[Table]:
        pm = per_model(ctx)
        pm = pm.assign(spurious=pm["retransmissions"] - pm["dropped"])
        rows = []
        for model in MODELS:
            for v in ("newreno", "sack", "mpr"):
                rows.append([TITLE[model], NAMES[v], fmt_ci(_vals(pm, model, v, "delivered"), 0), fmt_ci(_vals(pm, model, v, "retransmissions"), 1),
                             fmt_ci(_vals(pm, model, v, "spurious"), 1), fmt_ci(_vals(pm, model, v, "fast_retransmits"), 1),
                             fmt_ci(_vals(pm, model, v, "drops_detected"), 1), fmt_ci(_vals(pm, model, v, "timeouts"), 1)])
        return [Table("Why MPR does what it does: loss recovery per model (NewReno, SACK, MPR)",
                      ["model", "variant", "segments delivered in order", "retransmissions", "retransmissions − dropped data segments (at least this many resent needlessly)",
                       "fast retransmits", "MPR: segments declared dropped (mxrtt expired)", "RTO expiries (MPR: repeated drop declarations)"], rows, [], [],
                      "MPR detects a drop only when a segment stays unacknowledged for mxrtt = 3·ewrtt (timers only, no duplicate-ACK trigger), and without SACK it also "
                      "resends the segments above a hole once they expire; NewReno and SACK recover a single loss after three duplicate ACKs. A retransmission of a segment "
                      "that was not dropped is needless: retransmissions minus dropped data segments is a lower bound of them. Mean [95 % CI] over seeds.")]

    def claims(self, ctx: Context) -> list[Claim]:
        pm = per_model(ctx)
        out = []
        others = [v for v in VARIANTS if v != "mpr"]
        tests = (("throughput_kbps", False, "throughput", " kbit/s"), ("delay_ms", True, "delay", " ms"), ("dropped", True, "dropped data segments", ""))

        def diffs(model: str, col: str, low_better: bool, other: str) -> list[float]:
            g = pm[pm["model"] == model]
            a = g[g["variant"] == "mpr"].set_index("seed")[col]
            b = g[g["variant"] == other].set_index("seed")[col]
            return seed_diffs(b, a) if low_better else seed_diffs(a, b)

        summary: list[str] = []
        tag = {HOLDS: "✓", NOT_HOLDS: "✗", INCONCLUSIVE: "?"}
        for model in MODELS:
            parts, lines = [], []
            for col, low, label, unit in tests:
                cells = []
                for o in others:
                    d = diffs(model, col, low, o)
                    p = positive_test(d, f"{'other − MPR' if low else 'MPR − other'} {label}", unit)
                    parts.append(p)
                    m = mean_ci(d)
                    cells.append(f"{NAMES[o]} {tag[p[0]]} {m.mean:+.1f}" + (f" [{m.ci_low:+.1f}, {m.ci_high:+.1f}]" if m.n > 1 else "") if m.n else f"{NAMES[o]} ? (no pairs)")
                lines.append(f"{label} ({'other − MPR' if low else 'MPR − other'}{',' + unit if unit else ''}): " + ", ".join(cells))
            verdicts = [p[0] for p in parts]
            verdict = combine(verdicts)
            ev = (f"{verdicts.count(HOLDS)} of {len(parts)} comparisons hold, {verdicts.count(NOT_HOLDS)} do not, {verdicts.count(INCONCLUSIVE)} inconclusive; "
                  f"n = {mean_ci(diffs(model, 'throughput_kbps', False, 'newreno')).n} seeds. " + "; ".join(lines))
            summary.append(f"{TITLE[model]}: {verdict}")
            pt = PAPER_VALUES[model]
            out.append(Claim(f"{TITLE[model]} model: MPR has the highest throughput, the lowest delay and the fewest dropped packets of the nine variants",
                             f"{SECTION[model]}, Table {TABLE_NO[model]} (paper: MPR {pt['mpr'][0]}, {pt['mpr'][1]}, {pt['mpr'][2]:.0f})",
                             verdict, "for each other variant and quantity, a paired t-test: 95 % CI of the mean per-seed difference (positive = MPR better; "
                             "✓ above 0, ✗ at or below 0, ? contains 0); holds if all 24 comparisons hold, does not hold if any is ✗", ev))
        out.insert(0, Claim("TCP-MPR gives the highest throughput, minimum delay and packet drop compared to all variants, in all six network models",
                            "§VI conclusion, abstract", combine([c.verdict for c in out]), "all six per-model claims below hold", "; ".join(summary)))
        return out

    def figures(self, ctx: Context) -> list[Figure]:
        plt = pyplot()
        pm = per_model(ctx)
        figs = []
        for model in MODELS:
            fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), layout="constrained")
            for ax, (col, k, label) in zip(axes, (("throughput_kbps", 0, "throughput (kbit/s)"), ("delay_ms", 1, "delay (ms)"), ("dropped", 2, "dropped packets"))):
                paper_vs_ours_bars(ax, [NAMES[v] for v in VARIANTS], [PAPER_VALUES[model][v][k] for v in VARIANTS],
                                   [mean_ci(_vals(pm, model, v, col)) for v in VARIANTS], capsize=2, rotation=60, fontsize=7)
                ax.set_title(label, fontsize=9)
            axes[0].legend(fontsize=7)
            fig.suptitle(f"Fig. {FIG_NO[model]}: {TITLE[model]} network model", fontsize=10)
            figs.append(Figure(f"fig{FIG_NO[model]}_{model}", f"Fig. {FIG_NO[model]}: {TITLE[model]} network model (Table {TABLE_NO[model]})",
                               f"The paper's histogram of Table {TABLE_NO[model]} (hatched; units not stated) beside ours (solid: mean over seeds, 95 % CI; kbit/s, ms, dropped data segments). "
                               f"Layout: examples/mpr_{model}.toml.", fig))
        return figs

    def notes(self, ctx: Context) -> list[str]:
        pm = per_model(ctx)

        def mean(model: str, v: str, col: str) -> float:
            xs = _vals(pm, model, v, col)
            return sum(xs) / len(xs) if xs else math.nan

        parts = []
        for model in MODELS:
            tp_mpr, tp_nr = mean(model, "mpr", "throughput_kbps"), mean(model, "newreno", "throughput_kbps")
            rt, dr = mean(model, "mpr", "retransmissions"), mean(model, "mpr", "dropped")
            parts.append(f"{TITLE[model]}: MPR {100 * (tp_mpr - tp_nr) / tp_nr:+.1f} % throughput and {mean(model, 'mpr', 'delay_ms') - mean(model, 'newreno', 'delay_ms'):+.0f} ms delay "
                         f"vs NewReno; {mean(model, 'mpr', 'drops_detected'):.0f} segments declared dropped, {rt:.0f} retransmissions for {dr:.0f} data segments dropped")
        return [
            "Why our MPR does not support the paper's claim (mechanism, from the extra table): (1) it detects drops by timer only — a segment unacknowledged "
            "for mxrtt = 3·ewrtt is declared dropped; where queueing delay swings within a window (the congestion and grid models: several flows share "
            "queues of 50) segments still queued outlive mxrtt, are declared dropped and resent although they were not lost, and each first drop of a window "
            "halves cwnd; (2) without SACK it also resends the segments above a real hole when they expire; (3) during an outage (signal loss) its repeated "
            "declarations, backing off 2^k·mxrtt from a short mxrtt, resend far more often than NewReno's exponentially backed-off RTO, and those copies are "
            f"dropped for want of a route (MPR's dropped data segments there: {mean('signal_loss', 'mpr', 'dropped'):.1f}, NewReno's {mean('signal_loss', 'newreno', 'dropped'):.1f}; "
            f"repeated declarations {mean('signal_loss', 'mpr', 'timeouts'):.1f}, NewReno's RTO expiries {mean('signal_loss', 'newreno', 'timeouts'):.1f}); "
            "(4) where no loss separates the variants (link failure, "
            "interference, chain in our layouts) all loss-based variants send alike, as the paper's own identical rows show, and MPR cannot do better. The paper's MPR delays (2–4× lower at the same throughput) would need fewer segments in flight, which here (and in the paper) "
            "only Vegas achieves. We did not tune MPR (α 0.99 and β 3 as the paper's pseudo-code).",
            "Per model: " + "; ".join(parts) + ".",
            "Dropped TCP ACKs (the \"incl. ACKs\" column) are mostly `rtr.CBK` in the chain and grid: the receiver's ACK frames fail at the MAC retry limit "
            "(it is hidden from the sender's side), AODV takes the link for broken and purges the ACKs queued for that next hop (ns-2 `rerr_purges_queue`); "
            "cumulative ACKs make most of them harmless.",
            "Six models in one simulated plane: model k's nodes are shifted by k·3 km, at least 2.4 km (over four carrier-sense ranges) from every other model's; "
            "their flows are flows " + ", ".join(f"{m} {FLOWS_OF[m]}" for m in MODELS) + " of each run.",
        ]


PAPER = Mpr()
