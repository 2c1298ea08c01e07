//! Regenerate the parameter tables of docs/scenarios.md from the models'
//! declarations (crate::param). `cargo run --example param_docs` rewrites the
//! file; `-- --check` only says whether it is current (exit 1 if not), as the
//! test `tests/param_docs.rs` does.

use manetlab_core::param::regenerate;
use manetlab_core::scenario::PARAM_SECTIONS;
use std::path::Path;

fn main() {
    let check = std::env::args().any(|a| a == "--check");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenarios.md");
    let text = std::fs::read_to_string(&path).expect("docs/scenarios.md is readable");
    let new = regenerate(&text, PARAM_SECTIONS).unwrap_or_else(|e| {
        eprintln!("docs/scenarios.md: {e}");
        std::process::exit(2)
    });
    if new == text {
        println!("docs/scenarios.md: parameter tables are current");
    } else if check {
        eprintln!("docs/scenarios.md: parameter tables differ from the declarations (run `cargo run --example param_docs`)");
        std::process::exit(1);
    } else {
        std::fs::write(&path, new).expect("docs/scenarios.md is writable");
        println!("docs/scenarios.md: parameter tables rewritten");
    }
}
