//! Run a scenario file with the core alone (no Python) and print summary.json;
//! with `--time`, print wall time and events/s to stderr; with `--out DIR`,
//! write the trace files the scenario's `[outputs]` asks for; with `--phases`
//! (no outputs), print the wall time of building, running and assembling the
//! results (which includes the connectivity report) to stderr; with `--kinds`
//! (no outputs), print the number of events executed per kind to stderr. Used by benchmarks.
//! The scenario is TOML, or JSON with a `.json` extension.
use manetlab_core::{run_with_outputs, Scenario};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run_scenario SCENARIO.toml [--time] [--out DIR]");
        std::process::exit(2);
    };
    // from_file also reads a movement file named by mobility.path (ns2_file model).
    let scenario = match Scenario::from_file(path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    };
    let out = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from);
    if args.iter().any(|a| a == "--kinds") {
        // Event-kind breakdown (profiling): one `kind=count` per line on stderr.
        let t0 = Instant::now();
        let mut sim = manetlab_core::Simulator::new(&scenario);
        sim.run_to_end();
        let wall = t0.elapsed().as_secs_f64();
        let r = sim.results();
        eprintln!("wall_s={wall:.4} events={}", r.events);
        for (kind, n) in sim.event_counts() {
            if n > 0 {
                eprintln!("kind {kind}={n}");
            }
        }
        println!("{}", r.to_json());
        return;
    }
    if args.iter().any(|a| a == "--phases") {
        let t0 = Instant::now();
        let mut sim = manetlab_core::Simulator::new(&scenario);
        let t1 = Instant::now();
        sim.run_to_end();
        let t2 = Instant::now();
        let r = sim.results();
        let t3 = Instant::now();
        let (build, run, results) = (
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
        );
        let total = build + run + results;
        eprintln!(
            "build_s={build:.4} run_s={run:.4} results_s={results:.4} total_s={total:.4} results_share={:.3} events={} peak_rss_kib={}",
            results / total,
            r.events,
            peak_rss_kib()
        );
        println!("{}", r.to_json());
        return;
    }
    let t0 = Instant::now();
    let r = match run_with_outputs(&scenario, out.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    if args.iter().any(|a| a == "--time") {
        let trace_bytes: u64 = r.outputs.iter().map(|f| f.bytes).sum();
        eprintln!("wall_s={wall:.4} events={} events_per_s={:.0} peak_rss_kib={} trace_bytes={trace_bytes}", r.events, r.events as f64 / wall, peak_rss_kib());
    }
    println!("{}", r.to_json());
}

/// Peak resident set size of this process (Linux `VmHWM`), 0 where unavailable.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
