"""The ns-2 validation table's bookkeeping (no ns-2 needed): the acceptance bands,
per-table seed counts and the argument checks."""

from manetlab.ns2 import validate
from manetlab.ns2.crosscheck import paired_ci


def test_verdict_bands():
    # Goodput: ±3 % of ns-2's mean.
    assert validate.verdict("tcp_goodput_kbps", 102.9, 100.0, 1.0, 4.8, 10) == "within"
    assert validate.verdict("tcp_goodput_kbps", 96.0, 100.0, -9.0, 1.0, 10) == "n.s."
    assert validate.verdict("tcp_goodput_kbps", 110.0, 100.0, 3.5, 16.5, 10) == "outside"
    assert validate.verdict("tcp_goodput_kbps", 90.0, 100.0, -16.5, -3.5, 10) == "outside"
    # Delivery ratio: ±0.02 absolute.
    assert validate.verdict("cbr_pdr", 0.80, 0.785, 0.0, 0.03, 10) == "within"
    assert validate.verdict("cbr_pdr", 0.75, 0.785, -0.05, -0.021, 10) == "outside"
    # No band for delay and routing overhead.
    assert validate.verdict("cbr_delay_mean_s", 9.0, 1.0, 7.0, 9.0, 10) == "—"
    # One seed (ns-2 hung on the others) has no interval: not a verdict against the model.
    assert validate.verdict("tcp_goodput_kbps", 110.0, 100.0, 10.0, 10.0, 1) == "n.s."


def _row(table, row_id, metrics):
    return validate.Row(table, row_id, row_id, metrics, f"cmd {row_id}", lambda seed: {}, None)


def test_render_counts_bands_and_notes_per_table_seeds():
    rows = [_row("chains", "c1", ("tcp_goodput_kbps",)), _row("rwp20", "r1", ("tcp_goodput_kbps", "cbr_pdr"))]
    seeds = {"chains": [1, 2, 3], "rwp20": [1, 2, 3, 4], "broch50": [1]}
    chain = [(s, "tcp_goodput_kbps", 100.0 + s, 100.0) for s in (1, 2, 3)]  # ratio 1.02: within
    # rwp20: goodput 20 % above ns-2 on every seed (outside), one seed missing; delivery equal.
    rwp = [(s, "tcp_goodput_kbps", 120.0 + s, 100.0 + s) for s in (1, 2, 3)] + [(s, "cbr_pdr", 0.5, 0.5) for s in (1, 2, 3)]
    text = validate.render(rows, {0: chain, 1: rwp}, {1: ["seed 4: hung"]}, seeds, "2.35", ["--out", "x.md"])
    assert "N = chains 3, rwp20 4." in text
    assert "Banded rows (TCP goodput, CBR delivery): 2 within, 0 n.s., 1 outside." in text
    assert "| r1 (n=3) | tcp_goodput_kbps |" in text  # 3 of rwp20's 4 seeds
    assert "| c1 | tcp_goodput_kbps |" in text  # all 3 of the chain's
    assert "* r1: seed 4: hung" in text
    d, lo, hi = paired_ci([121.0, 122.0, 123.0], [101.0, 102.0, 103.0])
    assert (d, lo, hi) == (20.0, 20.0, 20.0)


def test_bad_seed_counts_are_refused(capsys):
    assert validate.main(["--out", "x.md", "--rwp20-seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert "--rwp20-seeds" in err and "positive" in err


def test_n_s_rows_are_extended_once_and_reported_at_the_larger_size():
    # Row c1: 4 % below ns-2 with a wide interval at 3 seeds (n.s.); c2 within; r1 outside.
    rows = [_row("chains", "c1", ("tcp_goodput_kbps",)), _row("chains", "c2", ("tcp_goodput_kbps",)), _row("rwp20", "r1", ("tcp_goodput_kbps",))]
    seeds = {"chains": [1, 2, 3], "rwp20": [1, 2, 3], "broch50": [1]}

    def value(row_id, seed):
        if row_id == "c1":  # mean 96 over 1..3, then exactly 100 for seeds 4..10
            return {1: 86.0, 2: 106.0, 3: 96.0}.get(seed, 100.0)
        return 101.0 if row_id == "c2" else 150.0 + seed

    def run(rr, ss):
        res = {j: [(s, "tcp_goodput_kbps", value(r.row_id, s), 100.0) for s in ss[r.table] if not (r.row_id == "c1" and s == 9)] for j, r in enumerate(rr)}
        return res, {j: ["seed 9: hung"] for j, r in enumerate(rr) if r.row_id == "c1"}

    calls = []
    results, failures = run(rows, seeds)
    failures = {}
    first = validate.extend_rows(rows, seeds, results, failures, 10, lambda rr, ss: calls.append(([r.row_id for r in rr], ss)) or run(rr, ss))
    # Only the n.s. row runs on, with the seeds after the first pass's, once.
    assert calls == [(["c1"], {"chains": [4, 5, 6, 7, 8, 9, 10], "rwp20": [4, 5, 6, 7, 8, 9, 10], "broch50": [2, 3, 4, 5, 6, 7, 8, 9, 10]})]
    assert first == {0: "n.s. at 3 seeds"}
    assert sorted(s for s, *_ in results[0]) == [1, 2, 3, 4, 5, 6, 7, 8, 10]
    assert failures == {0: ["seed 9: hung"]}
    text = validate.render(rows, results, failures, seeds, "2.35", ["--out", "x.md"], first)
    # Mean (288 + 600) / 9 = 98.67: within ±3 % now, the first verdict kept beside it.
    assert "| c1 (n=9) | tcp_goodput_kbps |" in text and "| within (n.s. at 3 seeds) |" in text
    assert "| c2 | tcp_goodput_kbps |" in text and "| r1 | tcp_goodput_kbps |" in text
    assert "were run on, once, with seeds up to 10" in text
    assert "Banded rows (TCP goodput, CBR delivery): 2 within, 0 n.s., 1 outside." in text
    # Nothing n.s.: nothing runs.
    assert validate.extend_rows(rows[1:], seeds, {0: results[1], 1: results[2]}, {}, 10, lambda rr, ss: calls.append(rr)) == {}
    assert len(calls) == 1


def test_bad_extension_is_refused(capsys):
    assert validate.main(["--out", "x.md", "--extend-seeds", "0"]) == 2
    assert "--extend-seeds" in capsys.readouterr().err


def test_broch_rows_are_not_extended():
    rows = [_row("broch50", "b1", ("cbr_pdr",))]
    seeds = {"chains": [1], "rwp20": [1], "broch50": [1, 2, 3]}
    res = {0: [(1, "cbr_pdr", 0.70, 0.80), (2, "cbr_pdr", 0.80, 0.80), (3, "cbr_pdr", 0.78, 0.80)]}
    assert validate.row_stats(rows[0], res[0])[0][3] == "n.s."
    assert validate.extend_rows(rows, seeds, res, {}, 300, lambda rr, ss: 1 / 0) == {}
