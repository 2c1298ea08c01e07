//! ns-2 movement files (the output of CMU `setdest`, BonnMotion's ns-2 export, …).
//!
//! Source: ns-2.35 `indep-utils/cmu-scen-gen/setdest/setdest.cc` (output formats)
//! and `MobileNode` (`set X_`, `setdest`). Lines understood:
//!
//! ```text
//! # comment
//! $node_(0) set X_ 12.5
//! $node_(0) set Y_ 30.0
//! $node_(0) set Z_ 0.0                          (z is ignored)
//! $ns_ at 2.5 "$node_(0) setdest 100.0 200.0 5.0"
//! $node_(0) setdest 100.0 200.0 5.0             (no `at`: executes at time 0)
//! set god_ [God instance]                       (counted, otherwise ignored)
//! $god_ set-dist 0 1 2                          (counted, otherwise ignored)
//! $ns_ at 1.23 "$god_ set-dist 0 1 1"           (counted, otherwise ignored)
//! ```
//!
//! These are all the statements setdest (v1 and v2), ns-2.35's own scenario
//! files (`tcl/mobility/scene/scen-*`, which begin with `set god_ [God
//! instance]`) and BonnMotion emit. The GOD lines only feed ns-2's omniscient
//! shortest-path oracle (`God`), which no protocol here consults, so they are
//! checked for form and counted, nothing more.
//!
//! Anything else is an [`Ns2ParseError`] naming the line number and text: a
//! movement file is data, and we never guess at a command we do not model.
//! Writing produces the same format (`%.12f` coordinates as setdest prints them,
//! times exact to the nanosecond), so a trajectory from any model can be handed
//! to ns-2 or read back here.

use std::fmt::Write as _;
use std::io;

use super::{scripted_trajectory, Position, SetDest, Trajectory};
use crate::sim::SimTime;

/// Largest node index accepted (guards against a typo allocating gigabytes).
pub const MAX_NS2_NODE_INDEX: u32 = 1 << 20;

/// A line we cannot read: its 1-based number, its text and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ns-2 movement file, line {line}: {message}: `{text}`")]
pub struct Ns2ParseError {
    pub line: usize,
    pub text: String,
    pub message: String,
}

/// The contents of a movement file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ns2Movement {
    /// Start position of each node (m); nodes without `set X_/Y_` start at the
    /// origin, as ns-2's `MobileNode` does. Indexed by node; length = highest
    /// node index mentioned + 1.
    pub initial_m: Vec<Position>,
    /// Each node's setdest commands, in file order.
    pub moves: Vec<Vec<SetDest>>,
    /// Number of GOD lines skipped (`set god_ [God instance]` and `$god_ set-dist`:
    /// ns-2's shortest-path oracle, which nothing here uses).
    pub god_lines: usize,
}

impl Ns2Movement {
    /// Number of nodes the file mentions (highest index + 1).
    pub fn node_count(&self) -> u32 {
        self.initial_m.len() as u32
    }

    /// One trajectory per node for `n` nodes (nodes the file does not mention
    /// stay at the origin). `n` smaller than [`node_count`](Self::node_count) is an error.
    pub fn trajectories(&self, n: u32) -> Result<Vec<Trajectory>, super::MobilityError> {
        if n < self.node_count() {
            return Err(super::MobilityError::invalid(
                "nodes.count",
                n,
                format!(
                    "at least {} (the movement file moves node {})",
                    self.node_count(),
                    self.node_count() - 1
                ),
            ));
        }
        (0..n as usize)
            .map(|i| {
                let start = self.initial_m.get(i).copied().unwrap_or([0.0, 0.0]);
                let moves = self.moves.get(i).map(Vec::as_slice).unwrap_or(&[]);
                scripted_trajectory(start, moves, &format!("movement file node {i}"))
            })
            .collect()
    }

    fn node(&mut self, i: u32) -> usize {
        let i = i as usize;
        if self.initial_m.len() <= i {
            self.initial_m.resize(i + 1, [0.0, 0.0]);
            self.moves.resize(i + 1, Vec::new());
        }
        i
    }
}

/// Parse a movement file.
pub fn read_ns2_movement(text: &str) -> Result<Ns2Movement, Ns2ParseError> {
    // A UTF-8 byte order mark (some Windows editors write one) is not part of line 1.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut m = Ns2Movement::default();
    for (k, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |message: String| Ns2ParseError {
            line: k + 1,
            text: raw.to_string(),
            message,
        };
        parse_line(line, &mut m).map_err(err)?;
    }
    Ok(m)
}

fn parse_line(line: &str, m: &mut Ns2Movement) -> Result<(), String> {
    // ns-2.35's scenario files create the GOD object first; Tcl allows any
    // spacing between the words.
    if line
        .split_whitespace()
        .eq(["set", "god_", "[God", "instance]"])
    {
        m.god_lines += 1;
        return Ok(());
    }
    if let Some(rest) = line.strip_prefix("$ns_") {
        // $ns_ at <t> "<command>"
        let rest = rest.trim_start();
        let rest = rest
            .strip_prefix("at")
            .filter(|r| r.starts_with(char::is_whitespace))
            .ok_or_else(|| "expected `$ns_ at <time> \"<command>\"`".to_string())?;
        let rest = rest.trim_start();
        let (time_tok, cmd) = rest
            .split_once(char::is_whitespace)
            .ok_or("missing command after the time")?;
        let time_s = number(time_tok, "time")?;
        if time_s < 0.0 {
            return Err(format!("time {time_s} is negative"));
        }
        let cmd = cmd.trim();
        let inner = cmd
            .strip_prefix('"')
            .and_then(|c| c.strip_suffix('"'))
            .ok_or("the command after the time must be in double quotes")?;
        return parse_command(inner.trim(), time_s, m);
    }
    parse_command(line, 0.0, m)
}

/// A command executed at `time_s`: node set / setdest, or a god line.
fn parse_command(cmd: &str, time_s: f64, m: &mut Ns2Movement) -> Result<(), String> {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    match toks.as_slice() {
        ["$god_", "set-dist", a, b, d] => {
            for (v, what) in [(a, "node"), (b, "node"), (d, "distance")] {
                v.parse::<u64>().map_err(|_| format!("{what} `{v}` is not a non-negative integer"))?;
            }
            m.god_lines += 1;
            Ok(())
        }
        [node, "set", coord, v] => {
            let i = m.node(node_index(node)?);
            let v = number(v, coord)?;
            match *coord {
                "X_" => m.initial_m[i][0] = v,
                "Y_" => m.initial_m[i][1] = v,
                "Z_" => {} // 2-D model: z is ignored.
                other => return Err(format!("unknown node attribute `{other}` (expected X_, Y_ or Z_)")),
            }
            if time_s != 0.0 {
                return Err("`set X_/Y_/Z_` must not be scheduled with `$ns_ at`".into());
            }
            Ok(())
        }
        [node, "setdest", x, y, v] => {
            let i = m.node(node_index(node)?);
            let dest_m = [number(x, "x")?, number(y, "y")?];
            let speed_mps = number(v, "speed")?;
            if speed_mps < 0.0 {
                return Err(format!("speed {speed_mps} is negative"));
            }
            m.moves[i].push(SetDest { time_s, dest_m, speed_mps });
            Ok(())
        }
        _ => Err("not a movement command (expected `$node_(i) set X_|Y_|Z_ v`, `$node_(i) setdest x y v`, `$god_ set-dist a b d` or `set god_ [God instance]`)".into()),
    }
}

fn node_index(tok: &str) -> Result<u32, String> {
    let idx = tok
        .strip_prefix("$node_(")
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("`{tok}` is not a node reference like $node_(3)"))?;
    let i: u32 = idx
        .parse()
        .map_err(|_| format!("node index `{idx}` is not a non-negative integer"))?;
    if i > MAX_NS2_NODE_INDEX {
        return Err(format!(
            "node index {i} is larger than {MAX_NS2_NODE_INDEX}"
        ));
    }
    Ok(i)
}

fn number(tok: &str, what: &str) -> Result<f64, String> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("{what} `{tok}` is not a finite number")),
    }
}

/// Seconds with exactly nine decimals: the nanosecond, losslessly.
fn secs(t: SimTime) -> String {
    format!("{}.{:09}", t.0 / 1_000_000_000, t.0 % 1_000_000_000)
}

/// Write trajectories as an ns-2 movement file: initial `set X_/Y_/Z_` lines,
/// then one `$ns_ at t "$node_(i) setdest x y v"` per moving leg, sorted by time
/// then node. Pauses need no command (an ns-2 node stops on arrival). `header`
/// lines become `#` comments.
pub fn write_ns2_movement<W: io::Write>(
    out: &mut W,
    trajectories: &[Trajectory],
    header: Option<&str>,
) -> io::Result<()> {
    out.write_all(ns2_movement_string(trajectories, header).as_bytes())
}

/// [`write_ns2_movement`] into a `String`.
pub fn ns2_movement_string(trajectories: &[Trajectory], header: Option<&str>) -> String {
    let mut s = String::new();
    if let Some(h) = header {
        s.push_str("#\n");
        for l in h.lines() {
            let _ = writeln!(s, "# {l}");
        }
        s.push_str("#\n");
    }
    for (i, t) in trajectories.iter().enumerate() {
        let p = t.position_at(SimTime::ZERO);
        let _ = writeln!(s, "$node_({i}) set X_ {:.12}", p[0]);
        let _ = writeln!(s, "$node_({i}) set Y_ {:.12}", p[1]);
        let _ = writeln!(s, "$node_({i}) set Z_ {:.12}", 0.0);
    }
    let mut cmds: Vec<(SimTime, usize, Position, f64)> = trajectories
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.legs()
                .iter()
                .filter(|l| !l.is_pause() && l.end != SimTime::MAX)
                .map(move |l| (l.start, i, l.to_m, l.speed_mps))
        })
        .collect();
    cmds.sort_by_key(|c| (c.0, c.1));
    for (t, i, to, v) in cmds {
        let _ = writeln!(
            s,
            "$ns_ at {} \"$node_({i}) setdest {:.12} {:.12} {:.12}\"",
            secs(t),
            to[0],
            to[1],
            v
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_line_forms() {
        let text = "set god_ [God instance]\n# hello\n\n$node_(1) set X_ 10.5\n$node_(1) set Y_ 20\n$node_(1) set Z_ 0.0\n\
                    $god_ set-dist 0 1 2\n$ns_ at 3.0 \"$god_ set-dist 0 1 1\"\n\
                    $ns_ at 1.5 \"$node_(1) setdest 30.5 20 4.0\"\n$node_(0) setdest 5 5 1\r\n";
        let m = read_ns2_movement(text).unwrap();
        assert_eq!(m.node_count(), 2);
        assert_eq!(m.initial_m, vec![[0.0, 0.0], [10.5, 20.0]]);
        assert_eq!(m.god_lines, 3);
        assert_eq!(
            m.moves[1],
            vec![SetDest {
                time_s: 1.5,
                dest_m: [30.5, 20.0],
                speed_mps: 4.0
            }]
        );
        assert_eq!(
            m.moves[0],
            vec![SetDest {
                time_s: 0.0,
                dest_m: [5.0, 5.0],
                speed_mps: 1.0
            }]
        );
        let t = m.trajectories(3).unwrap();
        assert_eq!(t[1].position_at(SimTime::from_secs_f64(4.0)), [20.5, 20.0]);
        assert_eq!(t[2].position_at(SimTime::from_secs_f64(4.0)), [0.0, 0.0]);
        assert!(m.trajectories(1).is_err());
    }

    #[test]
    fn errors_carry_line_and_text() {
        let cases = [
            ("$node_(0) set X_ abc", "X_ `abc` is not a finite number"),
            ("$node_(x) set X_ 1", "node index `x`"),
            ("$node_(0) set W_ 1", "unknown node attribute `W_`"),
            ("$ns_ at -1 \"$node_(0) setdest 1 1 1\"", "negative"),
            ("$ns_ at 1 $node_(0) setdest 1 1 1", "double quotes"),
            (
                "$ns_ at 1 \"$node_(0) setdest 1 1\"",
                "not a movement command",
            ),
            ("$ns_ halt", "expected `$ns_ at"),
            ("$node_(0) setdest 1 1 -2", "speed -2 is negative"),
            ("$node_(99999999) set X_ 1", "larger than"),
            ("$god_ set-dist 0 1 x", "distance `x`"),
            ("set val(nn) 3", "not a movement command"),
            ("set god_ [God create]", "not a movement command"),
            ("set god_ [God instance] extra", "not a movement command"),
        ];
        for (line, want) in cases {
            let text = format!("# first\n$node_(0) set X_ 1.0\n{line}\n");
            let e = read_ns2_movement(&text).unwrap_err();
            assert_eq!(e.line, 3, "{line}");
            assert_eq!(e.text, line);
            assert!(e.message.contains(want), "{line}: {}", e.message);
        }
    }

    #[test]
    fn writer_formats_like_setdest() {
        let moves = [SetDest {
            time_s: 0.25,
            dest_m: [3.0, 4.0],
            speed_mps: 1.0,
        }];
        let t = scripted_trajectory([0.0, 0.0], &moves, "m").unwrap();
        let s = ns2_movement_string(&[t], Some("nodes: 1"));
        assert_eq!(
            s,
            "#\n# nodes: 1\n#\n$node_(0) set X_ 0.000000000000\n$node_(0) set Y_ 0.000000000000\n\
             $node_(0) set Z_ 0.000000000000\n$ns_ at 0.250000000 \"$node_(0) setdest 3.000000000000 4.000000000000 1.000000000000\"\n"
        );
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        let text = "$node_(0) set X_ 10.0\n$node_(0) set Y_ 20.0\n";
        let with_bom = format!("\u{feff}{text}");
        let (a, b) = (
            read_ns2_movement(text).unwrap(),
            read_ns2_movement(&with_bom).unwrap(),
        );
        assert_eq!(a.initial_m, b.initial_m);
        assert_eq!(b.initial_m[0], [10.0, 20.0]);
    }
}
