//! `sbx tools`: the served tools' schemas in each format, strict about unknown fields,
//! and the model-facing rendering of results.
use serde_json::{Value, json};
use std::process::Command;

fn tools(format: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sbx"))
        .args(["tools", "--format", format])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn check_bash_schema(s: &Value) {
    assert_eq!(s["type"], "object");
    assert_eq!(s["additionalProperties"], false);
    assert_eq!(s["required"], json!(["command"]));
    let mut props: Vec<&str> = s["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{s}"))
        .keys()
        .map(String::as_str)
        .collect();
    props.sort_unstable();
    assert_eq!(
        props,
        vec![
            "command",
            "description",
            "run_in_background",
            "timeout_ms",
            "workdir"
        ]
    );
    assert_eq!(s["properties"]["timeout_ms"]["type"], "integer");
    assert_eq!(s["properties"]["run_in_background"]["type"], "boolean");
}

/// The job and terminal tools: strict objects, `job_id` required where a job is named.
fn check_job_schemas(get: impl Fn(&str) -> Value) {
    for (name, props, required) in [
        ("job_output", vec!["job_id", "wait_ms"], json!(["job_id"])),
        ("job_kill", vec!["job_id"], json!(["job_id"])),
        ("job_list", vec![], Value::Null),
        (
            "terminal_open",
            vec!["cols", "rows", "workdir"],
            Value::Null,
        ),
        (
            "terminal_send",
            vec!["keys", "terminal_id", "text"],
            json!(["terminal_id"]),
        ),
        (
            "terminal_read",
            vec!["screen", "terminal_id", "until", "wait_ms"],
            json!(["terminal_id"]),
        ),
        (
            "terminal_resize",
            vec!["cols", "rows", "terminal_id"],
            json!(["terminal_id", "rows", "cols"]),
        ),
        (
            "terminal_signal",
            vec!["signal", "terminal_id"],
            json!(["terminal_id", "signal"]),
        ),
        (
            "terminal_close",
            vec!["terminal_id"],
            json!(["terminal_id"]),
        ),
        ("terminal_list", vec![], Value::Null),
    ] {
        let s = get(name);
        assert_eq!(s["type"], "object", "{name}: {s}");
        assert_eq!(s["additionalProperties"], false, "{name}: {s}");
        assert_eq!(s["required"], required, "{name}: {s}");
        let mut keys: Vec<&str> = s["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name}: {s}"))
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, props, "{name}");
    }
    assert_eq!(get("job_output")["properties"]["wait_ms"]["maximum"], 60000);
}

const NAMES: [&str; 11] = [
    "bash",
    "job_output",
    "job_kill",
    "job_list",
    "terminal_open",
    "terminal_send",
    "terminal_read",
    "terminal_resize",
    "terminal_signal",
    "terminal_close",
    "terminal_list",
];

#[test]
fn anthropic_format() {
    let (code, out) = tools("anthropic");
    assert_eq!(code, Some(0));
    let v = parse(&out);
    let list = v.as_array().unwrap_or_else(|| panic!("{v}"));
    let names: Vec<&str> = list.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, NAMES);
    let mut keys: Vec<&str> = list[0]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(keys, vec!["description", "input_schema", "name"]);
    check_bash_schema(&list[0]["input_schema"]);
    let find = |n: &str| {
        list.iter()
            .find(|t| t["name"] == n)
            .map(|t| t["input_schema"].clone())
            .unwrap_or_default()
    };
    check_job_schemas(find);
}

#[test]
fn openai_format() {
    let (code, out) = tools("openai");
    assert_eq!(code, Some(0));
    let v = parse(&out);
    assert_eq!(v[0]["type"], "function");
    assert_eq!(v[0]["function"]["name"], "bash");
    check_bash_schema(&v[0]["function"]["parameters"]);
    let list = v.as_array().unwrap_or_else(|| panic!("{v}"));
    let names: Vec<&str> = list
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(names, NAMES);
    assert!(list.iter().all(|t| t["type"] == "function"));
    let find = |n: &str| {
        list.iter()
            .find(|t| t["function"]["name"] == n)
            .map(|t| t["function"]["parameters"].clone())
            .unwrap_or_default()
    };
    check_job_schemas(find);
}

#[test]
fn json_schema_format() {
    let (code, out) = tools("json-schema");
    assert_eq!(code, Some(0));
    let v = parse(&out);
    assert_eq!(
        v["bash"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(v["bash"]["title"], "bash");
    check_bash_schema(&v["bash"]);
    let mut names: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    let mut want = NAMES.to_vec();
    want.sort_unstable();
    assert_eq!(names, want);
    for n in NAMES {
        assert_eq!(v[n]["title"], n);
    }
    check_job_schemas(|n| v[n].clone());
}

#[test]
fn unknown_format_is_an_error() {
    let (code, out) = tools("yaml");
    assert_eq!(code, Some(2));
    assert!(out.is_empty());
}

#[test]
fn rendering_for_the_model() {
    use sbx::tools::render_result;
    assert_eq!(render_result("ok\n", false, 3, 0), "ok\n[exit code: 0]");
    assert_eq!(
        render_result("partial", true, 100, 1),
        "partial\n[output truncated: 7 of 100 bytes shown]\n[exit code: 1]"
    );
    assert_eq!(render_result("", false, 0, 124), "[exit code: 124]");
}

#[test]
fn job_output_rendering_for_the_model() {
    use sbx::tools::render_job_output;
    assert_eq!(
        render_job_output("so far", 0, None),
        "so far\n[still running]"
    );
    assert_eq!(
        render_job_output("done\n", 0, Some(0)),
        "done\n[exit code: 0]"
    );
}
