//! JSON-RPC framing in front of the SDK's stdio transport: every line a client sends that the
//! protocol says must be answered gets an answer. The SDK drops a line that is not JSON without
//! a word, reads a line of any length whole, and answers a `tools/call` whose `arguments` are
//! not an object with "method not found". Here, before the SDK sees a line:
//! - a line that is not JSON gets a parse error (-32700), and one over the limit an invalid
//!   request (-32600), both with a null id, as JSON-RPC 2.0 requires when no id can be read;
//! - an array (a batch, which the current protocol removed), or an object that is not a
//!   JSON-RPC 2.0 message, gets an invalid request (-32600);
//! - a request whose `params` is not an object, or a `tools/call` without a tool name or with
//!   `arguments` that are not an object, gets invalid params (-32602) with its id.
//!
//! A notification is never answered: a malformed one is dropped. The rest goes on to the SDK
//! unchanged. The SDK's messages and these answers leave through one writer, a line at a time.
use crate::serve::{Line, next_line};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// JSON-RPC 2.0's codes for what this module refuses.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// On to the SDK.
    Pass,
    /// Answered here with this error response.
    Answer(Value),
    /// A malformed notification: dropped, as notifications get no answer.
    Drop,
}

fn error(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Answer(
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

/// Judge one line (without its newline).
fn judge(line: &[u8]) -> Verdict {
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return error(Value::Null, PARSE_ERROR, format!("parse error: {e}")),
    };
    match value {
        Value::Object(m) => judge_message(&m),
        Value::Array(_) => error(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: batches are not supported; send one message per line".into(),
        ),
        _ => error(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: a message is a JSON object".into(),
        ),
    }
}

/// A JSON object: a request, a notification or a response.
fn judge_message(m: &Map<String, Value>) -> Verdict {
    let id = m.get("id").cloned();
    let valid_id = id
        .as_ref()
        .is_none_or(|i| i.is_string() || i.is_number() || i.is_null());
    let reply_id = id.clone().filter(|_| valid_id).unwrap_or(Value::Null);
    let invalid = |why: &str| {
        error(
            reply_id.clone(),
            INVALID_REQUEST,
            format!("invalid request: {why}"),
        )
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    if !valid_id {
        return invalid("`id` must be a string or a number");
    }
    let Some(method) = m.get("method") else {
        // A response to one of the server's requests (elicitation): the SDK's to match.
        return Verdict::Pass;
    };
    let Some(method) = method.as_str() else {
        return if id.is_some() {
            invalid("`method` must be a string")
        } else {
            Verdict::Drop
        };
    };
    match (params_problem(method, m.get("params")), id) {
        (None, _) => Verdict::Pass,
        (Some(why), Some(id)) => error(id, INVALID_PARAMS, format!("invalid params: {why}")),
        (Some(_), None) => Verdict::Drop,
    }
}

/// Why a method's `params` do not have the shape every request needs, if they do not.
fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    let params = match params {
        None if method == "tools/call" => return Some("`tools/call` needs params".into()),
        None => return None,
        Some(Value::Object(p)) => p,
        Some(_) => return Some("`params` must be an object".into()),
    };
    if method != "tools/call" {
        return None;
    }
    if !params.get("name").is_some_and(Value::is_string) {
        return Some("`tools/call` needs the tool's `name` as a string".into());
    }
    match params.get("arguments") {
        None | Some(Value::Object(_)) => None,
        Some(_) => Some("`arguments` must be an object".into()),
    }
}

/// The SDK's side of the framing: what it reads and where it writes.
pub(super) struct SdkSide {
    pub input: DuplexStream,
    pub output: DuplexStream,
}

/// Frame `input` and `output` for the SDK. The returned future relays until the client's
/// input has ended and the SDK has closed its output.
pub(super) fn frame<R, W>(
    input: R,
    output: W,
    max_line_bytes: usize,
    pipe_bytes: usize,
) -> (
    SdkSide,
    impl std::future::Future<Output = std::io::Result<()>>,
)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (to_sdk, sdk_input) = tokio::io::duplex(pipe_bytes);
    let (sdk_output, from_sdk) = tokio::io::duplex(pipe_bytes);
    let (lines, outgoing) = mpsc::unbounded_channel();
    let relay = async move {
        let client = read_client(input, to_sdk, lines.clone(), max_line_bytes);
        let sdk = read_sdk(from_sdk, lines);
        let reading = async {
            tokio::pin!(client, sdk);
            tokio::select! {
                // The client is done: the SDK may still answer what it was sent.
                read = &mut client => read.and(sdk.await),
                // The SDK is done: the session is over, whatever the client still sends.
                written = &mut sdk => written,
            }
        };
        let (read, write) = tokio::join!(reading, write_client(outgoing, output));
        read.and(write)
    };
    let sdk = SdkSide {
        input: sdk_input,
        output: sdk_output,
    };
    (sdk, relay)
}

/// The client's lines: judged, then passed to the SDK or answered. Ends with the input; the
/// SDK then sees its input end.
async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    mut to_sdk: DuplexStream,
    answers: mpsc::UnboundedSender<Vec<u8>>,
    max: usize,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(input);
    loop {
        let verdict = match next_line(&mut reader, max).await? {
            Line::Eof => break,
            Line::Line(l) if l.iter().all(u8::is_ascii_whitespace) => continue,
            Line::TooLong { len } => error(
                Value::Null,
                INVALID_REQUEST,
                format!("invalid request: a line of {len} bytes; the limit is {max} bytes"),
            ),
            Line::Line(mut l) => match judge(&l) {
                Verdict::Pass => {
                    l.push(b'\n');
                    if to_sdk.write_all(&l).await.is_err() {
                        break; // The SDK has stopped reading: the session is over.
                    }
                    continue;
                }
                other => other,
            },
        };
        if let Verdict::Answer(a) = verdict {
            let _ = answers.send(a.to_string().into_bytes());
        }
    }
    to_sdk.shutdown().await
}

/// The SDK's messages, a whole line each, until it closes its output.
async fn read_sdk(
    from_sdk: DuplexStream,
    lines: mpsc::UnboundedSender<Vec<u8>>,
) -> std::io::Result<()> {
    let mut sdk = BufReader::new(from_sdk);
    while let Line::Line(l) = next_line(&mut sdk, usize::MAX).await? {
        if lines.send(l).is_err() {
            break;
        }
    }
    Ok(())
}

/// Every outgoing line, in the order made, until both the client's reader and the SDK are done.
async fn write_client<W: AsyncWrite + Unpin>(
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) -> std::io::Result<()> {
    while let Some(mut line) = outgoing.recv().await {
        line.push(b'\n');
        output.write_all(&line).await?;
        output.flush().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> Option<(i64, Value)> {
        match v {
            Verdict::Answer(a) => Some((a["error"]["code"].as_i64()?, a["id"].clone())),
            _ => None,
        }
    }

    #[test]
    fn lines_that_are_not_json_get_a_parse_error_with_a_null_id() {
        assert_eq!(
            code(&judge(b"this is not json")),
            Some((PARSE_ERROR, Value::Null))
        );
        assert_eq!(
            code(&judge(b"{\"jsonrpc\":\"2.0\",")),
            Some((PARSE_ERROR, Value::Null))
        );
    }

    #[test]
    fn requests_of_the_wrong_shape_are_refused_with_their_id() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":"x"}}"#;
        assert_eq!(code(&judge(call)), Some((INVALID_PARAMS, json!(7))));
        let no_name = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}"#;
        assert_eq!(code(&judge(no_name)), Some((INVALID_PARAMS, json!("a"))));
        let params = br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}"#;
        assert_eq!(code(&judge(params)), Some((INVALID_PARAMS, json!(8))));
        let version = br#"{"jsonrpc":"1.0","id":9,"method":"tools/list"}"#;
        assert_eq!(code(&judge(version)), Some((INVALID_REQUEST, json!(9))));
        let bad_id = br#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#;
        assert_eq!(code(&judge(bad_id)), Some((INVALID_REQUEST, Value::Null)));
        assert_eq!(code(&judge(b"[1,2]")), Some((INVALID_REQUEST, Value::Null)));
        assert_eq!(code(&judge(b"42")), Some((INVALID_REQUEST, Value::Null)));
    }

    #[test]
    fn well_formed_messages_pass_and_malformed_notifications_are_dropped() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true"}}}"#;
        assert_eq!(judge(call), Verdict::Pass);
        let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        assert_eq!(judge(list), Verdict::Pass);
        let response = br#"{"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}"#;
        assert_eq!(judge(response), Verdict::Pass);
        let note = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#;
        assert_eq!(judge(note), Verdict::Drop);
    }
}
