//! `sbx check`, and the permission gate in front of `sbx run`: argument handling only; the
//! decision is the library pipeline's.
use sbx::hook::sh_quote;
use sbx::pipeline::{Decided, EnforcementOutlook, Wording};
use sbx::setup::{Loaded, SetupOptions};
use sbx::{Caller, Decision, Mode, Pipeline, ProfileCaps, Ruling, Stage, ToolCall};
use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

/// Exit code of `sbx run` when the permission pipeline refuses the command.
pub const DENIED: i32 = 123;

/// The command line as one shell string, so that `Bash(...)` rules apply to it.
pub fn command_string(argv: &[OsString]) -> Result<String, String> {
    let mut parts = Vec::with_capacity(argv.len());
    for a in argv {
        let s = a
            .to_str()
            .ok_or_else(|| format!("argument {a:?} is not UTF-8"))?;
        parts.push(sh_quote(s).map_err(|e| e.to_string())?);
    }
    Ok(parts.join(" "))
}

pub fn load(profile: &str, policy: Option<PathBuf>, workspace: PathBuf) -> Result<Loaded, String> {
    Loaded::load(&SetupOptions {
        profile: profile.to_string(),
        policy,
        workspace,
    })
    .map_err(|e| e.to_string())
}

/// The mode: `--mode`, else the one a policy source sets, else `fallback`, which says who
/// proposed the command (`sandbox-auto` for `sbx run`, `default` for `sbx check`).
fn mode_of(loaded: &Loaded, mode: Option<&str>, fallback: Mode) -> Result<Mode, String> {
    match mode {
        Some(m) => Mode::parse(m).ok_or_else(|| {
            format!("unknown mode `{m}` (default, plan, accept-edits, sandbox-auto, bypass)")
        }),
        None => Ok(loaded.policy.mode().map_or(fallback, |(m, _)| *m)),
    }
}

/// Decide one call without running anything: the mode it was decided in, and the decision.
pub fn decide(
    loaded: &Loaded,
    call: &ToolCall,
    mode: Option<&str>,
    fallback: Mode,
) -> Result<(Mode, Decided), String> {
    let mode = mode_of(loaded, mode, fallback)?;
    // Only these modes' fast paths read the outlook; the others need not plan for it.
    let outlook = match mode {
        Mode::SandboxAuto | Mode::Bypass => loaded.outlook(),
        Mode::Default | Mode::Plan | Mode::AcceptEdits => EnforcementOutlook::default(),
    };
    let pipeline = Pipeline::builder(loaded.policy.clone(), ProfileCaps::new(loaded.caps.clone()))
        .mode(mode)
        .outlook(outlook)
        .build();
    Ok((mode, pipeline.decide(call)))
}

fn caller(agent: &str) -> Caller {
    Caller {
        session: format!("cli-{}", std::process::id()),
        agent: agent.into(),
    }
}

pub fn bash_call(command: &str, cwd: PathBuf) -> ToolCall {
    ToolCall::bash(
        format!("cli-{}", std::process::id()),
        command,
        caller("sbx"),
        cwd,
    )
}

pub fn tool_call(tool: &str, input: serde_json::Value, cwd: PathBuf) -> ToolCall {
    ToolCall::new(
        format!("cli-{}", std::process::id()),
        tool,
        input,
        caller("sbx"),
        cwd,
    )
}

/// Ask the person at the terminal. No terminal means no.
fn prompt(command: &str, r: &Ruling) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return false;
    };
    let mut w = &tty;
    let _ = write!(
        w,
        "sbx: {command}\nsbx: needs approval: {}\nsbx: run it? [y/N] ",
        r.text(Wording::Terminal)
    );
    let _ = w.flush();
    let mut line = String::new();
    if std::io::BufReader::new(&tty).read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim(), "y" | "Y" | "yes")
}

/// What a job with no terminal can do about an ask.
fn how_to_proceed(command: &str, r: &Ruling) -> String {
    let first = if r.rule.is_some() && r.stage == Stage::Rules {
        "sbx: an ask rule decided: remove it from the policy, or run from a terminal and approve the command"
    } else {
        "sbx: to run it with no terminal, allow it by a rule in .sbx/policy.toml or a file given with --policy (a finding of the shell analysis is lifted only by a rule that writes the command out, with no wildcard), or run from a terminal and approve it"
    };
    format!("{first}; `sbx check --json -- {command}` shows each step of the decision")
}

/// How the gate let a command through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Passed {
    /// Allowed by the policy at once.
    Allowed,
    /// Approved by the person at the terminal, after however long they took.
    Approved,
}

/// The gate in front of `sbx run`: `Ok` to run, `Err(code)` to stop.
pub fn gate(
    loaded: &Loaded,
    argv: &[OsString],
    cwd: PathBuf,
    mode: Option<&str>,
) -> Result<Passed, i32> {
    let command = command_string(argv).map_err(|e| {
        eprintln!("sbx: {e}");
        125
    })?;
    // A person or a CI job typed this command: the kernel confines it (`sandbox-auto`).
    let (_, decided) =
        decide(loaded, &bash_call(&command, cwd), mode, Mode::SandboxAuto).map_err(|e| {
            eprintln!("sbx: {e}");
            125
        })?;
    let ruling = decided.ruling;
    let why = ruling.text(Wording::Terminal);
    match ruling.decision {
        Decision::Allow => Ok(Passed::Allowed),
        Decision::Ask => {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "sbx: denied: needs approval and there is no terminal to ask on: {why}\n{}",
                    how_to_proceed(&command, &ruling)
                );
                return Err(DENIED);
            }
            if prompt(&command, &ruling) {
                Ok(Passed::Approved)
            } else {
                eprintln!("sbx: denied: approval needed and not given: {why}");
                Err(DENIED)
            }
        }
        Decision::Deny => {
            eprintln!("sbx: denied: {why}");
            Err(DENIED)
        }
    }
}
