//! The crate's layers point one way (docs/architecture.md). This test reads every
//! `src/**/*.rs`, maps each file to its top-level module and that module to a
//! layer, finds every `crate::<module>` reference in the code (use lines and
//! inline paths, test code included; comments and string literals are skipped),
//! and fails naming the file, the line and the reference when a file refers to a
//! higher layer, to a module of its own layer that is not an allowed edge, or to a
//! module no layer lists. It also fails on any import cycle among the top-level
//! modules.
//!
//! The stack, bottom to top (a layer may use any layer below it):
//!
//! ```text
//! sim            time, scheduler, timers, random streams
//! wire  (+ids)   packets, headers, protocol messages, drop reasons, notices
//! models         phy mac queue link routing transport app mobility faults
//! output         metrics (counters, result types) and trace (ns-2 / pcap writers)
//! scenario       the scenario schema: parses into the models' and outputs' configs
//! world          the driver: builds a run from a scenario, joins the layers
//! ```
//!
//! `lib.rs` (the crate root) sits above all of them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers, bottom first, with their top-level modules.
const LAYERS: &[(&str, &[&str])] = &[
    ("sim", &["sim", "param"]),
    ("wire", &["ids", "wire"]),
    (
        "models",
        &[
            "phy",
            "mac",
            "queue",
            "link",
            "routing",
            "transport",
            "app",
            "mobility",
            "faults",
        ],
    ),
    ("output", &["metrics", "trace"]),
    ("scenario", &["scenario"]),
    ("world", &["world"]),
];

/// The only references allowed between two modules of the same layer, each with
/// its reason. Keep this list acyclic (the cycle check below enforces it).
const SAME_LAYER_EDGES: &[(&str, &str)] = &[
    // Parameter declarations (`params!`) use the kernel's time and number formatting.
    ("param", "sim"),
    // Packet headers carry node and flow ids.
    ("wire", "ids"),
    // A point-to-point link serialises out of its own queue.
    ("link", "queue"),
    // The channel reads node positions from the trajectories.
    ("phy", "mobility"),
    // FRN routing reads the link state the FRN MAC keeps (one protocol over two layers).
    ("routing", "mac"),
    // Connectivity reports apply node switches and link failures to the topology.
    ("mobility", "faults"),
    // Results carry the routing counters, TCP traces and fault events.
    ("metrics", "routing"),
    ("metrics", "transport"),
    ("metrics", "faults"),
];

/// Items of the crate root (`lib.rs`) that any layer may name: plain constants and
/// the parameter-declaration macros (`#[macro_export]`, defined in `param`).
const ROOT_ITEMS: &[&str] = &["VERSION", "params", "param_choice", "int_param"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// Code with comments, string and character literals blanked out (newlines kept,
/// so line numbers stay right).
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |j: usize| c.get(j).copied();
        if c[i] == '/' && at(i + 1) == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && at(i + 1) == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == Some('*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (at(i + 1) == Some('"')
                || (at(i + 1) == Some('#') && matches!(at(i + 2), Some('"' | '#'))))
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            j += 1; // the opening quote
            loop {
                if j >= c.len() {
                    break;
                }
                if c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &c[i..j.min(c.len())] {
                blank(&mut out, ch);
            }
            i = j;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                if c[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            for &ch in &c[i..(j + 1).min(c.len())] {
                blank(&mut out, ch);
            }
            i = j + 1;
        } else if c[i] == '\'' && (at(i + 1) == Some('\\') || at(i + 2) == Some('\'')) {
            // A character literal ('x', '\n', '\''); a lifetime has no closing quote.
            let mut j = i + 1;
            if c[j] == '\\' {
                j += 1;
            }
            j += 1;
            while j < c.len() && c[j] != '\'' {
                j += 1;
            }
            for &ch in &c[i..(j + 1).min(c.len())] {
                blank(&mut out, ch);
            }
            i = j + 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Top-level modules `code` refers to, with the 1-based line of each reference:
/// `crate::m`, `crate::{m, n::x}` and `super::` chains that climb to the crate
/// root from a file whose module path is `path`.
fn references(code: &str, path: &[String]) -> Vec<(usize, String)> {
    let mut refs = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
            .collect()
    };
    let line_of = |pos: usize| code[..pos].matches('\n').count() + 1;
    let bytes = code.as_bytes();
    let word_start = |pos: usize| {
        pos == 0
            || !(bytes[pos - 1].is_ascii_alphanumeric()
                || bytes[pos - 1] == b'_'
                || bytes[pos - 1] == b'$')
    };
    for (pos, _) in code.match_indices("crate") {
        if !word_start(pos) {
            continue;
        }
        let after = code[pos + 5..].trim_start();
        let Some(after) = after.strip_prefix("::") else {
            continue;
        };
        let after = after.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            // Top-level names of a `crate::{...}` group (depth 1 only).
            let mut depth = 1;
            let mut at_name = true;
            let mut k = 0;
            let g: Vec<char> = group.chars().collect();
            while k < g.len() && depth > 0 {
                match g[k] {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => at_name = true,
                    ch if at_name && depth == 1 && (ch.is_alphanumeric() || ch == '_') => {
                        let name: String = g[k..]
                            .iter()
                            .take_while(|c| c.is_alphanumeric() || **c == '_')
                            .collect();
                        k += name.len();
                        refs.push((line_of(pos), name));
                        at_name = false;
                        continue;
                    }
                    _ => {}
                }
                k += 1;
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                refs.push((line_of(pos), name));
            }
        }
    }
    // `super::super::x` climbing out of the file's module to the root; inline
    // `mod m { ... }` blocks add one level each.
    let inline = inline_mod_depths(code);
    for (pos, _) in code.match_indices("super") {
        if !word_start(pos) || (pos > 0 && code[..pos].trim_end().ends_with("::")) {
            continue;
        }
        let mut rest = &code[pos..];
        let mut n = 0;
        while let Some(r) = rest.strip_prefix("super") {
            let r = r.trim_start();
            let Some(r) = r.strip_prefix("::") else { break };
            n += 1;
            rest = r.trim_start();
        }
        let depth = path.len() + inline.iter().filter(|(a, b)| *a < pos && pos < *b).count();
        if n == depth && n > 0 {
            let name = ident(rest);
            if !name.is_empty() {
                refs.push((line_of(pos), name));
            }
        }
    }
    refs
}

/// The byte spans of inline `mod name { ... }` blocks in `code`.
fn inline_mod_depths(code: &str) -> Vec<(usize, usize)> {
    let b = code.as_bytes();
    let mut spans = Vec::new();
    // Open braces, each with the start of its span when it opens an inline module.
    let mut open: Vec<Option<usize>> = Vec::new();
    for (i, &ch) in b.iter().enumerate() {
        match ch {
            b'{' => {
                let before = code[..i].trim_end();
                let words: Vec<&str> = before.rsplit(|c: char| c.is_whitespace()).take(2).collect();
                let is_mod = words.len() == 2
                    && words[1] == "mod"
                    && words[0].chars().all(|c| c.is_alphanumeric() || c == '_');
                open.push(is_mod.then_some(i));
            }
            b'}' => {
                if let Some(Some(start)) = open.pop() {
                    spans.push((start, i));
                }
            }
            _ => {}
        }
    }
    spans
}

/// Module path of a file under `src`: `routing/aodv/mod.rs` → [routing, aodv].
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every violation in `files` (relative path, source), and the module graph.
fn check(files: &[(PathBuf, String)]) -> (Vec<String>, BTreeMap<String, BTreeSet<String>>) {
    let mut errors = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, src) in files {
        let path = module_path(rel);
        let Some(from) = path.first().cloned() else {
            continue; // lib.rs: the crate root sits above every layer.
        };
        let Some(from_layer) = layer_of(&from) else {
            errors.push(format!(
                "{}: module `{from}` is in no layer (add it to LAYERS in tests/layers.rs)",
                rel.display()
            ));
            continue;
        };
        let code = strip(src);
        for (line, to) in references(&code, &path) {
            if to == from || to == "self" {
                continue;
            }
            if ROOT_ITEMS.contains(&to.as_str()) {
                continue;
            }
            let Some(to_layer) = layer_of(&to) else {
                errors.push(format!(
                    "src/{}:{line}: `crate::{to}` is in no layer",
                    rel.display()
                ));
                continue;
            };
            graph.entry(from.clone()).or_default().insert(to.clone());
            let (fl, tl) = (LAYERS[from_layer].0, LAYERS[to_layer].0);
            if to_layer > from_layer {
                errors.push(format!(
                    "src/{}:{line}: `crate::{to}` ({tl}) is above `{from}` ({fl}): a layer may only use the layers below it",
                    rel.display()
                ));
            } else if to_layer == from_layer
                && !SAME_LAYER_EDGES.contains(&(from.as_str(), to.as_str()))
            {
                errors.push(format!(
                    "src/{}:{line}: `crate::{to}` is in `{from}`'s own layer ({fl}) and `{from} -> {to}` is not in SAME_LAYER_EDGES",
                    rel.display()
                ));
            }
        }
    }
    (errors, graph)
}

/// A cycle in `graph`, if there is one (as a path that starts and ends at the same node).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let i = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[i..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn crate_sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(&src).unwrap().to_path_buf(), text)
        })
        .collect()
}

/// `Packet { ... }` struct literals (and patterns) outside `src/wire/`: every
/// packet is built with `Packet::new` / `Packet::control`, so a new per-packet
/// extension is a field added in `wire/packet.rs` alone.
fn packet_literals(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, src) in files {
        if rel.starts_with("wire") {
            continue;
        }
        let code = strip(src);
        let b = code.as_bytes();
        for (pos, _) in code.match_indices("Packet") {
            let word_before = pos > 0 && (b[pos - 1].is_ascii_alphanumeric() || b[pos - 1] == b'_');
            let after = code[pos + 6..].trim_start();
            if word_before || !after.starts_with('{') {
                continue;
            }
            let before = code[..pos].trim_end();
            if ["->", "&", "struct", "for", "mut"]
                .iter()
                .any(|w| before.ends_with(w))
            {
                continue; // a return type, a reference type, the definition, an impl
            }
            // A literal's braces open on `field:`, `field,`, `field }` or `..base`.
            let inside = after[1..].trim_start();
            let name: String = inside
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let next = inside[name.len()..].trim_start();
            let field = (next.starts_with(':') && !next.starts_with("::"))
                || next.starts_with(',')
                || next.starts_with('}');
            if !(inside.starts_with("..") || (!name.is_empty() && field)) {
                continue;
            }
            let line = code[..pos].matches('\n').count() + 1;
            found.push(format!("src/{}:{line}", rel.display()));
        }
    }
    found
}

#[test]
fn packets_are_built_by_constructors_outside_wire() {
    let unexpected = packet_literals(&crate_sources());
    assert!(
        unexpected.is_empty(),
        "build packets with Packet::new / Packet::control (wire/packet.rs), not a struct literal:\n{}",
        unexpected.join("\n")
    );
    // The scan itself sees a literal.
    let probe = vec![(
        PathBuf::from("mac/x.rs"),
        "fn f() -> Packet {\n    Packet { uid: 0, ..p }\n}\n".to_string(),
    )];
    assert_eq!(packet_literals(&probe), vec!["src/mac/x.rs:2".to_string()]);
}

#[test]
fn every_file_uses_only_lower_layers() {
    let files = crate_sources();
    assert!(files.len() > 50, "found only {} source files", files.len());
    let (errors, _) = check(&files);
    assert!(
        errors.is_empty(),
        "layer violations:\n{}",
        errors.join("\n")
    );
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let (_, graph) = check(&crate_sources());
    assert!(
        graph.contains_key("world") && graph.contains_key("routing"),
        "graph not built: {graph:?}"
    );
    if let Some(c) = find_cycle(&graph) {
        panic!("import cycle among top-level modules: {}", c.join(" -> "));
    }
    // The allowed same-layer edges alone must be acyclic too.
    let mut allowed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in SAME_LAYER_EDGES {
        allowed
            .entry(a.to_string())
            .or_default()
            .insert(b.to_string());
    }
    assert_eq!(find_cycle(&allowed), None);
}

#[test]
fn the_check_catches_upward_references_and_cycles() {
    let file = |p: &str, s: &str| (PathBuf::from(p), s.to_string());
    let files = vec![
        // An upward `use`, an inline path and a group, each in a different form.
        file("wire/packet.rs", "use crate::routing::dsr::SourceRoute;\n"),
        file("queue/mod.rs", "fn f() { let _ = crate::metrics::Thing; }\n"),
        file("mac/mod.rs", "use crate::{sim::SimTime, world::World};\n"),
        // Two models using each other without an allowed edge.
        file("faults/mod.rs", "use crate::mobility::X;\n"),
        // `super::super` climbing from routing/aodv/tests.rs to the root.
        file("routing/aodv/tests.rs", "use super::super::super::scenario::Scenario;\n"),
        // Not references: comments and strings.
        file(
            "sim/mod.rs",
            "// crate::world::X\n/* crate::world */ const S: &str = \"crate::world\";\nconst C: char = '\"'; // \"\nuse crate::sim::x;\n",
        ),
        file("newmod/mod.rs", "fn f() {}\n"),
        // Inside an inline module, `super::super` from queue/mod.rs reaches the root.
        file("queue/red.rs", "mod tests {\n    use super::super::super::world::W;\n    use super::super::X;\n}\n"),
    ];
    let (errors, graph) = check(&files);
    let has = |needle: &str| errors.iter().any(|e| e.contains(needle));
    assert!(
        has("src/wire/packet.rs:1: `crate::routing` (models) is above `wire`"),
        "{errors:#?}"
    );
    assert!(
        has("src/queue/mod.rs:1: `crate::metrics` (output) is above `queue`"),
        "{errors:#?}"
    );
    assert!(
        has("src/mac/mod.rs:1: `crate::world` (world)"),
        "{errors:#?}"
    );
    assert!(
        has("src/faults/mod.rs:1: `crate::mobility` is in `faults`'s own layer"),
        "{errors:#?}"
    );
    assert!(
        has("src/routing/aodv/tests.rs:1: `crate::scenario`"),
        "{errors:#?}"
    );
    assert!(
        has("newmod/mod.rs: module `newmod` is in no layer"),
        "{errors:#?}"
    );
    assert!(has("src/queue/red.rs:2: `crate::world`"), "{errors:#?}");
    assert!(
        !errors.iter().any(|e| e.contains("sim/mod.rs")),
        "{errors:#?}"
    );
    assert_eq!(errors.len(), 7, "{errors:#?}");
    // faults -> mobility plus the allowed mobility -> faults is a cycle.
    let mut g = graph.clone();
    g.entry("mobility".into())
        .or_default()
        .insert("faults".into());
    let c = find_cycle(&g).expect("a cycle");
    assert!(
        c.contains(&"faults".to_string()) && c.contains(&"mobility".to_string()),
        "{c:?}"
    );
}

/// The trace and pcap writers and the driver's trace hooks render protocol
/// messages through `wire::WireFormat` only: outside test modules they name no
/// protocol's message type.
#[test]
fn writers_do_not_match_on_protocol_messages() {
    const PROTOCOL_TYPES: &[&str] = &[
        "RoutingMessage::",
        "AodvMessage",
        "DsrMessage",
        "DsdvMessage",
        "FrnMessage",
        "SourceRoute",
        "FrnHeader",
    ];
    let mut found = Vec::new();
    for (rel, src) in crate_sources() {
        let writer =
            rel.starts_with("trace") || rel.starts_with("world") || rel == Path::new("world.rs");
        if !writer {
            continue;
        }
        let code = strip(&src);
        let tests = cfg_test_spans(&code);
        for t in PROTOCOL_TYPES {
            for (pos, _) in code.match_indices(t) {
                if tests.iter().any(|&(a, b)| a < pos && pos < b) {
                    continue;
                }
                let line = code[..pos].matches('\n').count() + 1;
                found.push(format!("src/{}:{line}: {t}", rel.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "render through WireFormat (wire/render.rs), not by matching on a protocol:\n{}",
        found.join("\n")
    );
}

/// Spans of `#[cfg(test)] mod name { ... }` blocks.
fn cfg_test_spans(code: &str) -> Vec<(usize, usize)> {
    inline_mod_depths(code)
        .into_iter()
        .filter(|&(start, _)| {
            let before = code[..start].trim_end();
            let head = before.rsplit_once("mod").map_or("", |(h, _)| h).trim_end();
            head.ends_with("#[cfg(test)]")
        })
        .collect()
}
