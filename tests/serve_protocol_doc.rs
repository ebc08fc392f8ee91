//! docs/protocol.md carries the current JSON Schema of every message.
use serde_json::Value;

fn block_after(doc: &str, marker: &str) -> Value {
    let start = doc
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} missing"));
    let rest = &doc[start..];
    let open = rest
        .find("```json\n")
        .unwrap_or_else(|| panic!("no json block"))
        + 8;
    let close = rest[open..]
        .find("\n```")
        .unwrap_or_else(|| panic!("unclosed block"));
    serde_json::from_str(&rest[open..open + close]).unwrap_or_else(|e| panic!("{marker}: {e}"))
}

#[test]
fn protocol_doc_schemas_are_current() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    let s = sbx::serve::schemas();
    assert_eq!(
        block_after(&doc, "<!-- schema:request -->"),
        s["request"],
        "regenerate with `sbx serve --schema`"
    );
    assert_eq!(
        block_after(&doc, "<!-- schema:event -->"),
        s["event"],
        "regenerate with `sbx serve --schema`"
    );
}

#[test]
fn every_message_type_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    let s = sbx::serve::schemas();
    for dir in ["request", "event"] {
        let branches = s[dir]["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{dir}: no oneOf"));
        for b in branches {
            let t = b["properties"]["type"]["const"]
                .as_str()
                .unwrap_or_else(|| panic!("{b}"));
            assert!(
                doc.contains(&format!("| `{t}`")),
                "`{t}` has no row in docs/protocol.md"
            );
        }
    }
}
