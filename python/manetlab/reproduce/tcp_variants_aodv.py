"""Paper 004: Morshed, Rahman, Islam, "An Empirical Study on variants of TCP over
AODV routing protocol in MANET".

Study: TCP {Tahoe, Reno, NewReno, Vegas} on the three flows 6→0, 15→1, 5→11 at
once, 16 nodes in 1000 m × 1000 m, AODV, 802.11, DropTail queue of 50, 40 s.
The paper ran one node layout (its figure 1, lost from our copy); we run random
waypoint over many movement scenarios instead.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, cast

from manetlab.reproduce.base import (
    ASSUMED,
    LOST,
    OURS,
    STATED,
    Claim,
    Context,
    Difference,
    Figure,
    Paper,
    Table,
    flow_sum,
    fmt,
    fmt_ci,
    positive_test,
    pyplot,
    seed_diffs,
)

VARIANTS = ["tahoe", "reno", "newreno", "vegas"]
NAMES = {"tahoe": "Tahoe", "reno": "Reno", "newreno": "NewReno", "vegas": "Vegas"}
FLOWS = [(6, 0), (15, 1), (5, 11)]
N_NODES = 16
DURATION_S = 40.0
TP = "flows[0].transport"  # the zipped axis: the three flows' transports together

#: Table II (packets: total sent, received, dropped), Table III (sending and
#: receiving throughput, unit not stated), and the conclusion's rates (%).
PAPER_T2 = {"tahoe": (626, 580, 11), "reno": (593, 530, 25), "newreno": (615, 550, 29), "vegas": (503, 489, 8)}
PAPER_T3 = {"tahoe": (501248, 438368), "reno": (501248, 453796), "newreno": (501248, 445816), "vegas": (501248, 462840)}
PAPER_DROP_PCT = {"tahoe": 1.75, "reno": 4.21, "newreno": 4.71, "vegas": 1.59}
PAPER_PDR_PCT = {"tahoe": 92.65, "reno": 89.38, "newreno": 89.43, "vegas": 97.22}


def _base_scenario() -> dict[str, Any]:
    return {
        "name": "tcp-variants-aodv",
        "duration_s": DURATION_S,
        "area": {"width_m": 1000, "height_m": 1000},
        "nodes": {"count": N_NODES},
        "radio": {"propagation": "two_ray_ground"},
        "queue": {"kind": "droptail", "limit_pkts": 50},
        "routing": {"protocol": "aodv"},
        "mobility": {"model": "random_waypoint", "max_speed_mps": 10, "pause_s": 0},
        "flows": [{"name": f"tcp{s}-{d}", "kind": "ftp", "src": s, "dst": d, "transport": "newreno"} for s, d in FLOWS],
    }


def per_run(ctx: Context) -> Any:
    """One row per run: the paper's quantities summed over its three flows."""
    df = ctx.results.copy()
    df["variant"] = df[TP]
    df["sent"] = flow_sum(df, "tx_packets", len(FLOWS))
    df["received"] = flow_sum(df, "delivered_packets", len(FLOWS))
    df["received_in_order"] = flow_sum(df, "rx_packets", len(FLOWS))
    df["dropped"] = flow_sum(df, "dropped_packets", len(FLOWS))
    df["sent_minus_received"] = df["sent"] - df["received"]
    df["drop_rate_pct"] = 100 * df["dropped"] / df["sent"]
    df["paper_drop_rate_pct"] = 100 * df["sent_minus_received"] / df["sent"]
    df["pdr_pct"] = 100 * df["received"] / df["sent"]
    df["send_bps"] = flow_sum(df, "tx_bytes", len(FLOWS)) * 8 / DURATION_S
    df["recv_bps"] = flow_sum(df, "rx_bytes", len(FLOWS)) * 8 / DURATION_S
    df["delay_ms"] = 1000 * flow_sum(df, "delay_mean_s", len(FLOWS)) / len(FLOWS)
    df["abs_jitter_ms"] = 1000 * flow_sum(df, "jitter_mean_s", len(FLOWS)) / len(FLOWS)
    return df


class TcpVariantsAodv(Paper):
    name = "tcp-variants-aodv"
    title = "TCP Tahoe, Reno, NewReno and Vegas over AODV (paper 004)"
    citation = ("Md. M. Morshed, M. U. Rahman, Md. R. Islam, \"An Empirical Study on variants of TCP over AODV routing protocol in MANET\" "
                "(American International University-Bangladesh)")
    paper_file = "004_1fb322b9a41a6e5e.txt"
    full_seeds = "1-50"
    quick_seeds = "1-3"

    description = "paper 004: Tahoe, Reno, NewReno, Vegas on flows 6->0, 15->1, 5->11; 16 nodes, AODV, DropTail 50, 40 s; random waypoint per seed"
    metrics = ("total.tx_packets", "total.rx_packets", "flow0.delay_mean_s", "flow0.jitter_mean_s")

    def scenario(self) -> dict[str, Any]:
        return _base_scenario()

    def axes(self, quick: bool) -> dict[str, Any]:
        # The three flows use one variant at a time, as in the paper: one zipped axis.
        return {"zip": [{f"flows[{i}].transport": VARIANTS for i in range(len(FLOWS))}]}

    def setup(self) -> list[str]:
        return [
            "16 nodes in 1000 m × 1000 m, moving by random waypoint (max 10 m/s, pause 0 s; assumed, see below) over 50 movement scenarios (seeds 1–50); 40 s simulated.",
            "IEEE 802.11 DCF (1 Mb/s, ns-2.35 defaults), two-ray ground propagation, omni antenna, LL, DropTail interface queue of 50 packets, AODV with ns-2's parameters.",
            "Three FTP/TCP flows at once, 6→0, 15→1 and 5→11, all with the same variant: Tahoe, Reno, NewReno or Vegas (ns-2 Agent/TCP defaults: 1000-byte segments, window 20; Vegas α=1, β=3, γ=1); started at 0 s.",
            "Per run, summed over the three flows: packets sent (data segments, retransmissions included), received (segments whose first copy reached the destination), dropped; "
            "drop rate = dropped/sent and delivery ratio = received/sent, as the paper's conclusion computes them from Table II; "
            "the paper defines drop as sent − received, which we give beside our fate-counted drops (a packet still queued at the end is neither).",
            "Delay = receive time − send time per packet; jitter(i) = delay(i+1) − delay(i) (the paper's definitions), from the agent-level packet trace of one movement scenario per variant; across scenarios we report the mean delay and the mean |jitter|.",
        ]

    def differences(self) -> list[Difference]:
        return [
            Difference("node layout and movement", "one layout (Figure 1, an image lost from our copy); nodes \"placed uniformly\", \"moving about\"; speed and pause not stated",
                       "random waypoint, max 10 m/s, pause 0 s, uniform start positions, 50 movement scenarios", LOST,
                       "the layout is lost and one layout is one sample; we average over many (the paper's values are a single run, ours mean and 95 % CI over scenarios)"),
            Difference("simulator", "ns-2 (version not stated)", "manetlab reproducing ns-2.35's CMU wireless model and TCP agents", OURS, "our reference is ns-2.35"),
            Difference("flow start and stop", "not stated", "all three flows from 0 s to the end (40 s)", ASSUMED, "not stated"),
            Difference("TCP parameters", "not stated", "ns-2 Agent/TCP defaults (window 20, 1000-byte segments, min RTO 0.2 s, delayed ACKs off; Vegas α 1, β 3, γ 1)", ASSUMED, "ns-2 defaults"),
            Difference("\"dropped\" in Table II", "defined as sent − received, but Table II's dropped column is not sent − received (Tahoe: 626 − 580 = 46, table 11)",
                       "both: fate-counted drops (a drop event with its reason) and sent − received", STATED,
                       "the paper's text and table disagree; its conclusion's drop rates are table dropped / sent (11/626 = 1.75 %)"),
            Difference("\"received\"", "not defined beyond \"received\"", "segments whose first copy reached the destination node (flow delivered_packets); in-order application delivery is in the extra table", ASSUMED,
                       "a packet-level count, as an ns-2 trace count of received TCP packets would be"),
            Difference("Table III throughput", "\"Σ node throughputs / number of nodes\", unit not stated; sending throughput identical (501248) for all four variants",
                       "bit/s over the 40 s, summed over the three flows (payload bytes), and that sum / 16 nodes", LOST,
                       "the unit is missing and the equal sending values suggest a configured, not measured, quantity; compare the ordering only"),
            Difference("Figures 2–9 (delay and jitter over time)", "one run per variant; values lost (images)", "the same quantities on one movement scenario (the figure caption says which), the same for every variant, from our ns-2-format agent trace; mean delay and mean |jitter| over all scenarios in a table",
                       LOST, "the figures are images; one scenario per variant as in the paper"),
        ]

    def _by_variant(self, df: Any, col: str) -> dict[str, list[float]]:
        return {v: df[df["variant"] == v][col].tolist() for v in VARIANTS}

    def tables(self, ctx: Context) -> list[Table]:
        df = per_run(ctx)
        rows2, rows3, rows_c = [], [], []
        for v in VARIANTS:
            g = df[df["variant"] == v]
            ps, pr, pd_ = PAPER_T2[v]
            rows2.append([NAMES[v], str(ps), fmt_ci(g["sent"].tolist(), 1), str(pr), fmt_ci(g["received"].tolist(), 1), str(pd_),
                          fmt_ci(g["dropped"].tolist(), 1), fmt_ci(g["sent_minus_received"].tolist(), 1)])
            ts, tr = PAPER_T3[v]
            rows3.append([NAMES[v], str(ts), fmt_ci(g["send_bps"].tolist(), 0), fmt_ci((g["send_bps"] / N_NODES).tolist(), 0),
                          str(tr), fmt_ci(g["recv_bps"].tolist(), 0), fmt_ci((g["recv_bps"] / N_NODES).tolist(), 0)])
            rows_c.append([NAMES[v], fmt(PAPER_DROP_PCT[v]), fmt_ci(g["drop_rate_pct"].tolist()), fmt_ci(g["paper_drop_rate_pct"].tolist()),
                           fmt(PAPER_PDR_PCT[v]), fmt_ci(g["pdr_pct"].tolist())])
        t2 = Table("Table II: packets sent, received and dropped (three flows together)",
                   ["variant", "paper sent", "ours sent", "paper received", "ours received", "paper dropped", "ours dropped (fate-counted)", "ours sent − received (paper's definition)"],
                   rows2, ["paper sent", "paper received", "paper dropped"], ["ours sent", "ours received", "ours dropped (fate-counted)", "ours sent − received (paper's definition)"],
                   "Ours: mean [95 % CI] over the movement scenarios; the paper's: one run. Sent counts retransmissions.")
        t3 = Table("Table III: sending and receiving throughput",
                   ["variant", "paper sending", "ours sending (bit/s)", "ours sending / 16 nodes (bit/s)", "paper receiving", "ours receiving (bit/s)", "ours receiving / 16 nodes (bit/s)"],
                   rows3, ["paper sending", "paper receiving"], ["ours sending (bit/s)", "ours receiving (bit/s)"],
                   "The paper's unit is not stated. Ours: payload bits sent (retransmissions included) and delivered in order, over 40 s, summed over the three flows; "
                   "and divided by the 16 nodes as the paper's formula says.")
        tc = Table("Conclusion (§XI): drop rate and packet delivery ratio (%)",
                   ["variant", "paper drop rate", "ours drop rate (fate-counted)", "ours drop rate (sent − received)", "paper delivery ratio", "ours delivery ratio"],
                   rows_c, ["paper drop rate", "paper delivery ratio"], ["ours drop rate (fate-counted)", "ours drop rate (sent − received)", "ours delivery ratio"],
                   "Per run: dropped/sent and received/sent over the three flows, then mean [95 % CI] over scenarios. The paper's rates are Table II's dropped/sent and received/sent.")
        return [t2, t3, tc]

    def extra_tables(self, ctx: Context) -> list[Table]:
        df = per_run(ctx)
        rows = []
        for v in VARIANTS:
            g = df[df["variant"] == v]
            rows.append([NAMES[v], fmt_ci(g["delay_ms"].tolist(), 1), fmt_ci(g["abs_jitter_ms"].tolist(), 1), fmt_ci(g["received_in_order"].tolist(), 1),
                         fmt_ci(flow_sum(g, "retransmissions", len(FLOWS)).tolist(), 1),
                         fmt_ci(flow_sum(g, "timeouts", len(FLOWS)).tolist(), 1)])
        return [Table("Delay and jitter (Figures 2–9 summarised), in-order delivery, retransmissions, timeouts",
                      ["variant", "mean delay (ms)", "mean |jitter| (ms)", "segments delivered in order", "retransmissions", "RTO expiries"], rows, [], [],
                      "Mean over the three flows of each run, then mean [95 % CI] over scenarios. The paper shows delay and jitter only as time plots of one run.")]

    def claims(self, ctx: Context) -> list[Claim]:
        df = per_run(ctx)
        out = []

        def diffs(col: str, better_low: bool, other: str) -> list[float]:
            a = df[df["variant"] == "vegas"].set_index("seed")[col]
            b = df[df["variant"] == other].set_index("seed")[col]
            return seed_diffs(b, a) if better_low else seed_diffs(a, b)

        others = [v for v in VARIANTS if v != "vegas"]
        for col, low, label in (("paper_drop_rate_pct", True, "drop rate, sent − received over sent"), ("drop_rate_pct", True, "drop rate, fate-counted drops over sent"),
                                ("pdr_pct", False, "delivery ratio")):
            parts = [positive_test(diffs(col, low, o), f"{'other − Vegas' if low else 'Vegas − other'} {label}, percentage points", " pp") for o in others]
            what = "the lowest drop rate" if low else "the highest delivery ratio"
            out.append(Claim.of_parts(f"Vegas has {what} of the four variants ({label})", "§XI conclusion (1.59 % vs 1.75–4.71 %; 97.22 % vs 89.38–92.65 %)",
                                      parts, [f"vs {NAMES[o]}" for o in others]))
        parts = [positive_test(diffs("recv_bps", False, o), "Vegas − other receiving throughput, bit/s", " bit/s") for o in others]
        out.append(Claim.of_parts("In terms of throughput, Vegas is clearly best among the four variants (highest receiving throughput)", "§XI conclusion, Table III",
                                  parts, [f"vs {NAMES[o]}" for o in others]))
        return out

    # ------------------------------------------------------------------ figures

    def figures(self, ctx: Context) -> list[Figure]:
        plt = pyplot()
        seed = self._figure_seed(ctx)
        series = {v: self._packet_delays(ctx, v, seed) for v in VARIANTS}
        figs = []
        for kind, nums in (("delay", "2–5"), ("jitter", "6–9")):
            fig, axes = plt.subplots(2, 2, figsize=(8.6, 5.8), layout="constrained", sharex=True)
            for ax, v in zip(axes.flat, VARIANTS):
                for (s, d), pts in series[v].items():
                    ts = [p[0] for p in pts]
                    ds = [p[1] for p in pts]
                    if kind == "delay":
                        ax.plot(ts, [1000 * x for x in ds], ".", markersize=2.5, label=f"{s}→{d} ({len(pts)} pkts)", rasterized=True)
                    else:
                        ax.plot(ts[:-1], [1000 * (ds[i + 1] - ds[i]) for i in range(len(ds) - 1)], ".", markersize=2.5, label=f"{s}→{d}", rasterized=True)
                # A packet held through a route repair waits seconds: log scales keep the milliseconds readable.
                if kind == "delay":
                    ax.set_yscale("log")
                else:
                    ax.set_yscale("symlog", linthresh=10)
                ax.set_title(f"TCP {NAMES[v]}", fontsize=9)
                ax.set_ylabel("delay (ms)" if kind == "delay" else "jitter (ms)")
                ax.legend(fontsize=7, markerscale=3)
            for ax in axes[-1]:
                ax.set_xlabel("receive time (s)")
            fig.suptitle(f"Figures {nums}: per-packet {kind} over time, movement scenario {seed}", fontsize=10)
            cap = (f"Movement scenario (seed) {seed}, the same for the four variants: the first seed in which every flow of every variant delivered packets "
                   "(in many scenarios a flow's endpoints are out of each other's reach for the whole run). Each TCP data packet received at its destination's agent: "
                   + ("delay = receive time − send time (a retransmission is a new packet, as in an ns-2 trace)." if kind == "delay"
                      else "jitter(i) = delay(i+1) − delay(i) in arrival order per flow (the paper's definition).")
                   + (" Log scale." if kind == "delay" else " Symmetric log scale (linear within ±10 ms).")
                   + " From our ns-2-format agent trace; the paper's figures (one run per variant) are images lost from our copy.")
            figs.append(Figure(f"fig{nums.replace('–', '_')}_{kind}", f"Figures {nums}: {kind} over time per variant", cap, fig))
        return figs

    def _figure_seed(self, ctx: Context) -> int:
        df = ctx.results
        cols = [f"flow{i}.delivered_packets" for i in range(len(FLOWS))]
        # groupby keys are typed as any scalar; these are the integer seeds.
        good = sorted(int(cast(int, s)) for s, g in df.groupby("seed") if len(g) == len(VARIANTS) and bool((g[cols] > 0).all().all()))
        return good[0] if good else int(df["seed"].min())

    def _packet_delays(self, ctx: Context, variant: str, seed: int) -> dict[tuple[int, int], list[tuple[float, float]]]:
        """(receive time, delay) of every TCP data packet of each flow in run (variant,
        seed), from the agent-level ns-2 trace of a rerun (recording changes nothing
        else: checked against the stored run's packet counts)."""
        with tempfile.TemporaryDirectory(prefix="manetlab-reproduce-") as tmp:
            ctx.rerun(ctx.cell(**{TP: variant}), seed, {"outputs.trace": "old", "outputs.trace_levels": ["agt"]},
                      {f"flow{i}.tx_packets": (i, "tx_packets") for i in range(len(FLOWS))}, out=Path(tmp) / "run")
            return parse_agent_delays((Path(tmp) / "run" / "trace.tr").read_text(encoding="utf-8"), FLOWS)


def parse_agent_delays(trace: str, flows: list[tuple[int, int]]) -> dict[tuple[int, int], list[tuple[float, float]]]:
    """From an ns-2 old-format wireless trace: per (src, dst) flow, each TCP data
    packet's (receive time, receive − send time) at the agents, in arrival order.
    Data packets are told from ACKs by direction (sent by the flow's source)."""
    sent: dict[int, float] = {}
    out: dict[tuple[int, int], list[tuple[float, float]]] = {f: [] for f in flows}
    wanted = set(flows)
    for line in trace.splitlines():
        p = line.split()
        if len(p) < 14 or p[3] != "AGT" or p[6] != "tcp":
            continue
        node = int(p[2].strip("_"))
        # [src:port dst:port ttl nexthop]
        src = int(p[13].lstrip("[").split(":")[0])
        dst = int(p[14].split(":")[0])
        if (src, dst) not in wanted:
            continue
        uid = int(p[5])
        t = float(p[1])
        if p[0] == "s" and node == src:
            sent.setdefault(uid, t)
        elif p[0] == "r" and node == dst and uid in sent:
            out[(src, dst)].append((t, t - sent.pop(uid)))
    return out


PAPER = TcpVariantsAodv()
