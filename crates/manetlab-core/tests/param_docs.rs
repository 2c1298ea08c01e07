//! docs/scenarios.md's parameter tables are what the models declare: this
//! fails when a declaration changed and `cargo run --example param_docs` was
//! not run (or a table was edited by hand).

use manetlab_core::param::{regenerate, BEGIN};
use manetlab_core::scenario::PARAM_SECTIONS;

#[test]
fn committed_parameter_tables_are_generated() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let text = std::fs::read_to_string(path).unwrap();
    for s in PARAM_SECTIONS {
        assert!(
            text.contains(&format!("{BEGIN}{} -->", s.path)),
            "docs/scenarios.md has no generated table for [{}]",
            s.path
        );
    }
    let new = regenerate(&text, PARAM_SECTIONS).unwrap();
    assert!(
        new == text,
        "docs/scenarios.md's parameter tables differ from the declarations: run `cargo run --example param_docs`"
    );
}
