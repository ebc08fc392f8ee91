//! The terminal tools after `terminal_open`: `terminal_send`, `terminal_read`,
//! `terminal_resize`, `terminal_signal`, `terminal_close` and `terminal_list`. The session
//! answers them from its terminals, without the pipeline: they start no process (the shell
//! was decided when it was opened, and the sandbox confines whatever it runs) and reach only
//! the caller's own terminals.
#![forbid(unsafe_code)]

use super::job_tools::Answer;
use super::protocol::{Event, JobInfo, JobStatus};
use super::ruling::SESSION;
use super::terminals::{TermRead, Terminals};
use crate::pipeline::{Ruling, Stage};
use crate::tools::render_job_output;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::future::Future;
use std::time::{Duration, Instant};

/// The ruling on a terminal tool call: the session allows it, since terminal tools act only
/// on the caller's own terminals, inside the sandbox they were opened in.
pub(super) fn ruling() -> Ruling {
    Ruling::allow(
        Stage::Terminals,
        SESSION,
        "terminal tools act only on the caller's own terminals, inside the sandbox they were opened in",
    )
}

/// A terminal tool other than `terminal_open`, by its served name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TermTool {
    Send,
    Read,
    Resize,
    Signal,
    Close,
    List,
}

impl TermTool {
    pub(super) fn parse(tool: &str) -> Option<Self> {
        match tool {
            "terminal_send" => Some(Self::Send),
            "terminal_read" => Some(Self::Read),
            "terminal_resize" => Some(Self::Resize),
            "terminal_signal" => Some(Self::Signal),
            "terminal_close" => Some(Self::Close),
            "terminal_list" => Some(Self::List),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendInput {
    terminal_id: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    keys: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    terminal_id: String,
    #[serde(default)]
    wait_ms: u64,
    #[serde(default)]
    until: Option<String>,
    #[serde(default)]
    screen: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResizeInput {
    terminal_id: String,
    rows: u16,
    cols: u16,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignalInput {
    terminal_id: String,
    signal: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdInput {
    terminal_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListInput {}

/// The bytes a named key sends: `enter`, `tab`, `escape`, `backspace`, arrows, `ctrl-X`.
pub fn key_bytes(key: &str) -> Option<Vec<u8>> {
    let fixed: &[u8] = match key {
        "enter" => b"\r",
        "tab" => b"\t",
        "escape" => b"\x1b",
        "backspace" => b"\x7f",
        "up" => b"\x1b[A",
        "down" => b"\x1b[B",
        "right" => b"\x1b[C",
        "left" => b"\x1b[D",
        _ => {
            let c = key.strip_prefix("ctrl-")?;
            let [b] = c.as_bytes() else { return None };
            let b = b.to_ascii_lowercase();
            return (b.is_ascii_lowercase() || b"[\\]^_".contains(&b))
                .then(|| vec![b.to_ascii_uppercase() & 0x1f]);
        }
    };
    Some(fixed.to_vec())
}

/// A signal by name, with or without `SIG`: those a terminal's foreground may be sent.
pub fn signal_number(name: &str) -> Option<i32> {
    let n = name.strip_prefix("SIG").unwrap_or(name);
    Some(match n {
        "INT" => libc::SIGINT,
        "TERM" => libc::SIGTERM,
        "HUP" => libc::SIGHUP,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "TSTP" => libc::SIGTSTP,
        "CONT" => libc::SIGCONT,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "WINCH" => libc::SIGWINCH,
        _ => return None,
    })
}

fn input_of<T: serde::de::DeserializeOwned>(
    name: &str,
    input: Map<String, Value>,
) -> Result<T, String> {
    serde_json::from_value(Value::Object(input))
        .map_err(|e| format!("invalid input for {name}: {e}"))
}

fn status_line(status: &JobStatus) -> String {
    render_job_output("", 0, status.code()).replace("[still running]", "[terminal open]")
}

fn read_answer(r: TermRead) -> Answer {
    let mut text = r.output;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if r.dropped > 0 {
        text.push_str(&format!(
            "[output truncated: {} earlier bytes dropped]\n",
            r.dropped
        ));
    }
    if let Some((screen, (row, col))) = r.screen {
        text.push_str(&format!(
            "[screen, cursor at row {row}, column {col}]\n{screen}\n[end of screen]\n"
        ));
    }
    text.push_str(&status_line(&r.info.status));
    Answer {
        content: text,
        truncated: r.dropped > 0,
        job_id: Some(r.info.job_id),
        status: Some(r.info.status),
        ..Answer::default()
    }
}

fn done(id: String, what: &str) -> Answer {
    Answer {
        content: format!("{what}\n[terminal open]"),
        job_id: Some(id),
        status: Some(JobStatus::Running),
        ..Answer::default()
    }
}

fn list_answer(terms: Vec<JobInfo>) -> Answer {
    let content = if terms.is_empty() {
        "no terminals".to_string()
    } else {
        terms
            .iter()
            .map(|t| format!("{}  {}  {}", t.job_id, status_line(&t.status), t.command))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Answer {
        content,
        jobs: Some(terms),
        ..Answer::default()
    }
}

async fn send(terms: &Terminals, i: SendInput, owner: &str) -> Answer {
    let mut bytes = i.text.into_bytes();
    for k in &i.keys {
        match key_bytes(k) {
            Some(b) => bytes.extend(b),
            None => return Answer::error(format!("unknown key `{k}`")),
        }
    }
    match terms.send(&i.terminal_id, owner, &bytes).await {
        Ok(()) => done(i.terminal_id, &format!("sent {} bytes", bytes.len())),
        Err(e) => Answer::error(e),
    }
}

/// Answer the terminal tool call `id` for `owner`; `stop` ends a wait early.
pub(super) async fn answer(
    terms: &Terminals,
    tool: TermTool,
    id: String,
    input: Map<String, Value>,
    owner: &str,
    stop: impl Future<Output = ()>,
) -> Event {
    let start = Instant::now();
    let answer = match tool {
        TermTool::Send => match input_of::<SendInput>("terminal_send", input) {
            Ok(i) => send(terms, i, owner).await,
            Err(e) => Answer::error(e),
        },
        TermTool::Read => match input_of::<ReadInput>("terminal_read", input) {
            Ok(i) => {
                let wait = Duration::from_millis(i.wait_ms);
                let until = i.until.as_deref();
                match terms
                    .read(&i.terminal_id, owner, wait, until, i.screen, stop)
                    .await
                {
                    Ok(r) => read_answer(r),
                    Err(e) => Answer::error(e),
                }
            }
            Err(e) => Answer::error(e),
        },
        TermTool::Resize => match input_of::<ResizeInput>("terminal_resize", input) {
            Ok(i) => match terms.resize(&i.terminal_id, owner, i.rows, i.cols).await {
                Ok(()) => done(i.terminal_id, &format!("resized to {}x{}", i.rows, i.cols)),
                Err(e) => Answer::error(e),
            },
            Err(e) => Answer::error(e),
        },
        TermTool::Signal => match input_of::<SignalInput>("terminal_signal", input) {
            Ok(i) => match signal_number(&i.signal) {
                Some(n) => match terms.signal(&i.terminal_id, owner, n).await {
                    Ok(()) => done(
                        i.terminal_id,
                        &format!("sent SIG{}", i.signal.trim_start_matches("SIG")),
                    ),
                    Err(e) => Answer::error(e),
                },
                None => Answer::error(format!("unknown signal `{}`", i.signal)),
            },
            Err(e) => Answer::error(e),
        },
        TermTool::Close => match input_of::<IdInput>("terminal_close", input) {
            Ok(i) => match terms.close_one(&i.terminal_id, owner, stop).await {
                Ok(r) => read_answer(r),
                Err(e) => Answer::error(e),
            },
            Err(e) => Answer::error(e),
        },
        TermTool::List => match input_of::<ListInput>("terminal_list", input) {
            Ok(ListInput {}) => list_answer(terms.list(owner)),
            Err(e) => Answer::error(e),
        },
    };
    answer.into_event(id, start.elapsed(), &ruling())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_signals_by_name() {
        assert_eq!(key_bytes("ctrl-c"), Some(vec![3]));
        assert_eq!(key_bytes("ctrl-D"), Some(vec![4]));
        assert_eq!(key_bytes("enter"), Some(b"\r".to_vec()));
        assert_eq!(key_bytes("up"), Some(b"\x1b[A".to_vec()));
        assert_eq!(key_bytes("ctrl-1"), None);
        assert_eq!(key_bytes("hyper"), None);
        assert_eq!(signal_number("SIGINT"), Some(libc::SIGINT));
        assert_eq!(signal_number("TERM"), Some(libc::SIGTERM));
        assert_eq!(signal_number("STOP"), None);
    }
}
