//! `sbx mcp` answers every malformed line the way JSON-RPC 2.0 says, and the session goes on:
//! a line that is not JSON gets a parse error with a null id, a batch an invalid request, a
//! `tools/call` whose arguments are not an object invalid params with its id, while
//! well-formed requests beside them are answered as usual.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn malformed_lines_get_json_rpc_errors_and_the_session_goes_on() {
    let ws = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sbx"))
        .args(["mcp", "--profile", "workspace", "--workspace"])
        .arg(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        INIT,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not json",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":"x"}}"#,
        r#"[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    ];
    for l in lines {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut answers: Vec<Value> = Vec::new();
    // Five answers are due: the initialize result, the two errors with a null id, the invalid
    // params and the tools list. The malformed notification gets none. The wait bounds a hang,
    // it times nothing.
    while answers.len() < 5 {
        let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(120)) else {
            panic!("sbx mcp stopped answering after {answers:#?}");
        };
        answers.push(serde_json::from_str(&line).expect("every line out is JSON"));
    }
    drop(stdin);
    let status = child.wait().unwrap();
    let by_id = |id: Value| answers.iter().filter(move |a| a["id"] == id);
    let null_codes: Vec<i64> = by_id(Value::Null)
        .map(|a| a["error"]["code"].as_i64().unwrap())
        .collect();
    assert_eq!(null_codes, [-32700, -32600], "{answers:#?}");
    let two: Vec<&Value> = by_id(2.into()).collect();
    assert_eq!(two.len(), 1, "{answers:#?}");
    assert_eq!(two[0]["error"]["code"], -32602, "{answers:#?}");
    assert!(by_id(1.into()).any(|a| a["result"]["protocolVersion"].is_string()));
    let listed = by_id(4.into())
        .next()
        .expect("tools/list answered after the errors");
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "bash")),
        "{listed}"
    );
    assert_eq!(answers.len(), 5, "{answers:#?}");
    assert!(status.success(), "{status}");
}
