//! The tools `sbx serve` offers a model, their schemas in each vendor's format, and the
//! model-facing rendering of a result.
#![forbid(unsafe_code)]

use serde_json::{Value, json};

/// A schema format for `sbx tools --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolFormat {
    /// Anthropic Messages API: `name`, `description`, `input_schema`.
    Anthropic,
    /// OpenAI function tools: `type: function` with `function.parameters`.
    OpenAi,
    /// Plain JSON Schema documents keyed by tool name.
    JsonSchema,
}

impl ToolFormat {
    /// The format a name gives (`anthropic`, `openai`, `json-schema`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "anthropic" => Some(Self::Anthropic),
            "openai" => Some(Self::OpenAi),
            "json-schema" => Some(Self::JsonSchema),
            _ => None,
        }
    }
}

const BASH_DESCRIPTION: &str = "Run a bash command inside the sbx sandbox. The command runs \
under the session's profile: writes outside the workspace, reads of secrets and network \
access beyond the profile fail. Output is capped; the result ends with `[exit code: N]`. \
With `run_in_background` the command starts as a job and the result names its job id at once: \
use it for anything that may run longer than a minute, which agent hosts cut off.";

const JOB_OUTPUT_DESCRIPTION: &str = "Read what a background job (a bash call with \
`run_in_background`) wrote since the last read, and its status. With `wait_ms`, wait up to \
that long for new output or the job's end when there is neither yet. The result ends with \
`[exit code: N]` once the job has ended, or `[still running]`.";

const JOB_KILL_DESCRIPTION: &str = "Kill a background job and every process it started, and \
report how it ended (`[exit code: N]`; 128+N for signal N). Unread output stays readable \
with job_output.";

const JOB_LIST_DESCRIPTION: &str = "List this session's background jobs: id, status and \
command.";

/// The input schema of the `bash` tool.
pub fn bash_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": { "type": "string", "description": "The command line, run with `bash -c`." },
            "description": { "type": "string", "description": "What the command does, in a few words, for the approver." },
            "timeout_ms": { "type": "integer", "minimum": 1, "description": "Kill the command after this many milliseconds (the profile's limit still applies)." },
            "workdir": { "type": "string", "description": "Directory to run in, inside the workspace (default: the session's cwd)." },
            "run_in_background": { "type": "boolean", "description": "Start the command as a background job and return its job id without waiting; read its output with job_output, stop it with job_kill. The timeout still applies." }
        },
        "required": ["command"],
        "additionalProperties": false
    })
}

/// The input schema of `job_output`.
pub fn job_output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "job_id": { "type": "string", "description": "The id a background bash call returned." },
            "wait_ms": { "type": "integer", "minimum": 0, "maximum": 60000, "description": "Wait up to this many milliseconds for new output or the job's end (default 0: return at once)." }
        },
        "required": ["job_id"],
        "additionalProperties": false
    })
}

/// The input schema of `job_kill`.
pub fn job_kill_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "job_id": { "type": "string", "description": "The id a background bash call returned." }
        },
        "required": ["job_id"],
        "additionalProperties": false
    })
}

/// The input schema of `job_list`.
pub fn job_list_schema() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

const TERMINAL_OPEN: &str = "Open an interactive bash shell on a terminal inside the sbx \
sandbox (the same limits as bash calls) and return its terminal id. The shell keeps its \
directory and variables between sends. Terminals close after 30 idle minutes.";

const TERMINAL_SEND: &str = "Type into a terminal: `text` as is, then named `keys` (enter, \
tab, escape, backspace, up, down, left, right, ctrl-c, ctrl-d, ctrl-z, ctrl-<letter>). \
To run a command, send its text with keys [\"enter\"].";

const TERMINAL_READ: &str = "Read what a terminal wrote since the last read. Waits up to \
`wait_ms` for new output, or with `until` for output containing that text. With `screen`, \
also returns the rendered screen. Ends with `[terminal open]` or `[exit code: N]`.";

const TERMINAL_RESIZE: &str = "Set a terminal's size in rows and columns.";

const TERMINAL_SIGNAL: &str = "Send a signal (INT, TERM, HUP, QUIT, KILL, TSTP, CONT, USR1, \
USR2, WINCH) to the program in the foreground of a terminal.";

const TERMINAL_CLOSE: &str = "Close a terminal: kill its shell and every process it started, \
and return its last output.";

const TERMINAL_LIST: &str = "List this agent's terminals: id, status and shell.";

fn terminal_id() -> Value {
    json!({ "type": "string", "description": "The id terminal_open returned." })
}

fn object(properties: Value, required: &[&str]) -> Value {
    let mut o =
        json!({ "type": "object", "properties": properties, "additionalProperties": false });
    if !required.is_empty() {
        o["required"] = json!(required);
    }
    o
}

/// The terminal tools: `(name, description, input schema)`.
fn terminal_tools() -> Vec<ToolDef> {
    let dim = |what: &str| json!({ "type": "integer", "minimum": 1, "maximum": 1000, "description": what });
    vec![
        (
            "terminal_open",
            TERMINAL_OPEN,
            object(
                json!({
                    "workdir": { "type": "string", "description": "Directory to start in, inside the workspace." },
                    "rows": dim("Rows (default 24)."),
                    "cols": dim("Columns (default 80).")
                }),
                &[],
            ),
        ),
        (
            "terminal_send",
            TERMINAL_SEND,
            object(
                json!({
                    "terminal_id": terminal_id(),
                    "text": { "type": "string", "description": "Text to type, as is." },
                    "keys": { "type": "array", "items": { "type": "string" }, "description": "Named keys to press after the text." }
                }),
                &["terminal_id"],
            ),
        ),
        (
            "terminal_read",
            TERMINAL_READ,
            object(
                json!({
                    "terminal_id": terminal_id(),
                    "wait_ms": { "type": "integer", "minimum": 0, "maximum": 60000, "description": "Wait up to this long (default 0)." },
                    "until": { "type": "string", "description": "Wait until the unread output contains this text." },
                    "screen": { "type": "boolean", "description": "Also return the rendered screen." }
                }),
                &["terminal_id"],
            ),
        ),
        (
            "terminal_resize",
            TERMINAL_RESIZE,
            object(
                json!({
                    "terminal_id": terminal_id(), "rows": dim("Rows."), "cols": dim("Columns.")
                }),
                &["terminal_id", "rows", "cols"],
            ),
        ),
        (
            "terminal_signal",
            TERMINAL_SIGNAL,
            object(
                json!({
                    "terminal_id": terminal_id(),
                    "signal": { "type": "string", "enum": ["INT", "TERM", "HUP", "QUIT", "KILL", "TSTP", "CONT", "USR1", "USR2", "WINCH"] }
                }),
                &["terminal_id", "signal"],
            ),
        ),
        (
            "terminal_close",
            TERMINAL_CLOSE,
            object(json!({ "terminal_id": terminal_id() }), &["terminal_id"]),
        ),
        ("terminal_list", TERMINAL_LIST, object(json!({}), &[])),
    ]
}

/// A served tool: `(name, description, input schema)`.
type ToolDef = (&'static str, &'static str, Value);

/// Every tool sbx serves: `(name, description, input schema)`.
pub fn tools() -> Vec<ToolDef> {
    served().to_vec()
}

/// The served tools, built once: every call's input is checked against its tool's schema.
fn served() -> &'static [ToolDef] {
    static TOOLS: std::sync::LazyLock<Vec<ToolDef>> = std::sync::LazyLock::new(build_tools);
    &TOOLS
}

fn build_tools() -> Vec<ToolDef> {
    let mut v = vec![
        ("bash", BASH_DESCRIPTION, bash_schema()),
        ("job_output", JOB_OUTPUT_DESCRIPTION, job_output_schema()),
        ("job_kill", JOB_KILL_DESCRIPTION, job_kill_schema()),
        ("job_list", JOB_LIST_DESCRIPTION, job_list_schema()),
    ];
    v.extend(terminal_tools());
    v
}

/// The tool list in one vendor's format.
pub fn tool_schemas(format: ToolFormat) -> Value {
    let list = tools();
    match format {
        ToolFormat::Anthropic => Value::Array(
            list.into_iter()
                .map(|(n, d, s)| json!({ "name": n, "description": d, "input_schema": s }))
                .collect(),
        ),
        ToolFormat::OpenAi => Value::Array(
            list.into_iter()
                .map(|(n, d, s)| {
                    json!({ "type": "function", "function": { "name": n, "description": d, "parameters": s } })
                })
                .collect(),
        ),
        ToolFormat::JsonSchema => {
            let mut m = serde_json::Map::new();
            for (n, d, mut s) in list {
                if let Some(o) = s.as_object_mut() {
                    o.insert("$schema".into(), "https://json-schema.org/draft/2020-12/schema".into());
                    o.insert("title".into(), n.into());
                    o.insert("description".into(), d.into());
                }
                m.insert(n.to_string(), s);
            }
            Value::Object(m)
        }
    }
}

/// A result as a model should see it: the output, a notice when it was cut, and a
/// closing `[exit code: N]` line. `code` is the conventional exit code (128+N for a signal).
pub fn render_result(output: &str, truncated: bool, total_bytes: u64, code: i32) -> String {
    let mut s = String::with_capacity(output.len() + 64);
    s.push_str(output);
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    let shown = output.len();
    if truncated && total_bytes > shown as u64 {
        s.push_str(&format!(
            "[output truncated: {shown} of {total_bytes} bytes shown]\n"
        ));
    } else if truncated {
        // The rest was cut before it was counted: its size is not known.
        s.push_str(&format!(
            "[output truncated: only the first {shown} bytes shown]\n"
        ));
    }
    s.push_str(&format!("[exit code: {code}]"));
    s
}

/// A background job's output as a model should see it: what it wrote since the last read, a
/// notice when older unread output was dropped, and `[exit code: N]` once it has ended
/// (`code`), `[still running]` before.
pub fn render_job_output(output: &str, dropped: u64, code: Option<i32>) -> String {
    let mut s = String::with_capacity(output.len() + 64);
    s.push_str(output);
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    if dropped > 0 {
        s.push_str(&format!(
            "[output truncated: {dropped} earlier bytes dropped]\n"
        ));
    }
    match code {
        Some(c) => s.push_str(&format!("[exit code: {c}]")),
        None => s.push_str("[still running]"),
    }
    s
}

/// A call that did not run (denied, or failed before starting), for the model.
pub fn render_refusal(content: &str) -> String {
    content.to_string()
}

/// Check `input` against the input schema of the served tool `tool`: `None` when sbx does
/// not serve a tool of that name, else why the input does not fit, naming the field. Hosts
/// validate against the schema too, but a client that does not must get an error, not a
/// silent default (a terminal of 65535 by 65535 cells, a timeout ignored).
pub fn validate_input(
    tool: &str,
    input: &serde_json::Map<String, Value>,
) -> Option<Result<(), String>> {
    let (_, _, schema) = served().iter().find(|(name, _, _)| *name == tool)?;
    Some(validate_object(schema, input).map_err(|e| format!("invalid input for {tool}: {e}")))
}

/// The part of JSON Schema that sbx's own tool schemas use: an object's `properties`,
/// `required` and `additionalProperties: false`; each property's `type` (string, integer,
/// boolean, array of strings), `minimum` and `maximum`.
fn validate_object(schema: &Value, input: &serde_json::Map<String, Value>) -> Result<(), String> {
    let empty = serde_json::Map::new();
    let props = schema["properties"].as_object().unwrap_or(&empty);
    for name in schema["required"].as_array().into_iter().flatten() {
        if let Some(name) = name.as_str()
            && !input.contains_key(name)
        {
            return Err(format!("missing field `{name}`"));
        }
    }
    for (name, value) in input {
        let Some(prop) = props.get(name) else {
            return Err(format!("unknown field `{name}`"));
        };
        validate_value(prop, value).map_err(|e| format!("`{name}` {e}"))?;
    }
    Ok(())
}

fn validate_value(prop: &Value, value: &Value) -> Result<(), String> {
    let fits = match prop["type"].as_str() {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("integer") => value.is_u64() || value.is_i64(),
        Some("array") => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
        _ => true,
    };
    if !fits {
        return Err(format!("must be of type {}", prop["type"]));
    }
    if let Some(allowed) = prop["enum"].as_array()
        && !allowed.contains(value)
    {
        return Err(format!("must be one of {}", prop["enum"]));
    }
    let n = value
        .as_i64()
        .map(i128::from)
        .or(value.as_u64().map(i128::from));
    if let (Some(n), Some(min)) = (n, prop["minimum"].as_i64())
        && n < i128::from(min)
    {
        return Err(format!("must be at least {min}"));
    }
    if let (Some(n), Some(max)) = (n, prop["maximum"].as_i64())
        && n > i128::from(max)
    {
        return Err(format!("must be at most {max}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_ends_with_the_exit_code() {
        assert_eq!(render_result("hi\n", false, 3, 0), "hi\n[exit code: 0]");
        assert_eq!(render_result("", false, 0, 2), "[exit code: 2]");
        assert_eq!(
            render_result("abc", true, 3, 0),
            "abc\n[output truncated: only the first 3 bytes shown]\n[exit code: 0]"
        );
        assert_eq!(
            render_result("abc", true, 10, 137),
            "abc\n[output truncated: 3 of 10 bytes shown]\n[exit code: 137]"
        );
    }

    #[test]
    fn job_output_ends_with_the_exit_code_or_still_running() {
        assert_eq!(render_job_output("a", 0, None), "a\n[still running]");
        assert_eq!(render_job_output("", 0, Some(0)), "[exit code: 0]");
        assert_eq!(
            render_job_output("b\n", 7, Some(143)),
            "b\n[output truncated: 7 earlier bytes dropped]\n[exit code: 143]"
        );
    }
}
