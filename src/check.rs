//! `sbx check`: decide one call without running it and print the decision, the stage and
//! the rule that decided.
use crate::stdout::outln;
use crate::{cwd, gate};
use sbx::CheckReport;
use std::path::PathBuf;

#[expect(clippy::too_many_arguments, reason = "one parameter per CLI flag")]
pub fn check_cmd(
    profile: &str,
    workspace: Option<PathBuf>,
    policy: Option<PathBuf>,
    mode: Option<String>,
    json: bool,
    tool: Option<String>,
    input: Option<String>,
    command: Vec<String>,
) -> i32 {
    let fail = |e: String| {
        eprintln!("sbx check: {e}");
        2
    };
    let loaded = match gate::load(profile, policy, workspace.unwrap_or_else(cwd)) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let call = match (tool, input) {
        (Some(t), Some(i)) => match serde_json::from_str(&i) {
            Ok(v) => gate::tool_call(&t, v, cwd()),
            Err(e) => return fail(format!("--input is not JSON: {e}")),
        },
        _ if command.is_empty() => {
            return fail("give a command after `--`, or --tool and --input".into());
        }
        _ => gate::bash_call(&command.join(" "), cwd()),
    };
    let report = match gate::decide(&loaded, &call, mode.as_deref(), sbx::Mode::Default) {
        Ok((mode, decided)) => CheckReport::new(&call, mode, decided),
        Err(e) => return fail(e),
    };
    if json {
        outln!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        outln!("{report}");
    }
    0
}
