//! The `sbx` command line: a thin adapter over the library.
mod adapters;
mod gate;

use clap::{Parser, Subcommand};
use sbx::exec::{Output, RunRequest, Sandbox};
use sbx::host::Host;
use sbx::profile::{BUILTIN_NAMES, Profile};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const RUN_EXIT_CODES: &str = "Exit codes:
  N        the command's own exit code
  128+N    the command was killed by signal N
  124      the command timed out (SIGTERM, then SIGKILL after a grace period)
  125      sbx could not set up the sandbox (bad profile, a required protection missing);
           the message names the cause and the fix
  126      the command was found but is not executable
  127      the command was not found
  123      the permission pipeline refused the command (a deny rule, the safety floor,
           or an ask with no terminal to answer it); see `sbx check`";

#[derive(Parser)]
#[command(
    name = "sbx",
    version,
    about = "Run commands inside a kernel-enforced Linux sandbox"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a command under a profile.
    #[command(after_help = RUN_EXIT_CODES)]
    Run {
        /// Built-in profile name or path to a profile .toml file.
        #[arg(long, default_value = "workspace")]
        profile: String,
        /// The workspace directory (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Wall-clock timeout in seconds (can only lower the profile's).
        #[arg(long)]
        timeout: Option<f64>,
        /// Print one JSON object describing the run last on stdout.
        #[arg(long)]
        json: bool,
        /// An extra policy file for the permission gate.
        #[arg(long)]
        policy: Option<PathBuf>,
        /// Permission mode: default, plan, accept-edits, sandbox-auto, bypass
        /// (default: the policy's).
        #[arg(long)]
        mode: Option<String>,
        /// Skip the permission pipeline: the person running sbx authorizes the command
        /// themselves. The sandbox is the same either way (it comes from the profile alone).
        #[arg(long, conflicts_with_all = ["policy", "mode"])]
        no_policy: bool,
        /// Write the JSON object to this file instead of stdout.
        #[arg(long)]
        json_out: Option<PathBuf>,
        /// The command and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<OsString>,
    },
    /// Decide a call without running it: the decision, the stage and rule that decided.
    /// Exits 0 whatever the decision; non-zero only when the check could not be made.
    Check {
        #[arg(long, default_value = "workspace")]
        profile: String,
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        policy: Option<PathBuf>,
        #[arg(long)]
        mode: Option<String>,
        #[arg(long)]
        json: bool,
        /// A tool other than Bash, e.g. Edit, Read, WebFetch, mcp__server__tool.
        #[arg(long, requires = "input")]
        tool: Option<String>,
        /// The tool's input as JSON.
        #[arg(long)]
        input: Option<String>,
        /// The Bash command string (when no --tool is given).
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Show what this host can enforce and which built-in profiles run fully here.
    Doctor {
        #[arg(long)]
        json: bool,
    },
    /// Print the resolved plan of a profile, with the origin of every entry.
    Explain {
        #[arg(long, default_value = "workspace")]
        profile: String,
        #[arg(long)]
        workspace: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Answer a harness's tool hook (PreToolUse / BeforeTool) from the policy. Always exits 0;
    /// any failure answers deny with its cause.
    Hook(adapters::HookArgs),
    /// Serve tool calls as JSON lines over stdin/stdout (see docs/protocol.md).
    Serve(adapters::ServeArgs),
    /// Print the schemas of the tools `sbx serve` offers.
    Tools {
        /// anthropic, openai or json-schema.
        #[arg(long, default_value = "anthropic")]
        format: String,
    },
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
}

fn main() -> ExitCode {
    sbx::exec::ensure_standard_fds();
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            profile,
            workspace,
            timeout,
            json,
            policy,
            mode,
            no_policy,
            json_out,
            command,
        } => {
            let gate = (!no_policy).then_some((policy, mode));
            ExitCode::from(run(&profile, workspace, timeout, json, json_out, gate, command) as u8)
        }
        Cmd::Check {
            profile,
            workspace,
            policy,
            mode,
            json,
            tool,
            input,
            command,
        } => ExitCode::from(check_cmd(
            &profile, workspace, policy, mode, json, tool, input, command,
        ) as u8),
        Cmd::Doctor { json } => doctor(json),
        Cmd::Explain {
            profile,
            workspace,
            json,
        } => explain(&profile, workspace, json),
        Cmd::Hook(args) => adapters::hook(args),
        Cmd::Serve(args) => adapters::serve(args),
        Cmd::Tools { format } => adapters::tools(&format),
    }
}

fn setup_error(msg: impl std::fmt::Display) -> i32 {
    eprintln!("sbx: {msg}");
    125
}

/// `gate`: the policy file and mode for the permission pipeline, or `None` to skip it.
fn run(
    profile: &str,
    workspace: Option<PathBuf>,
    timeout: Option<f64>,
    json: bool,
    json_out: Option<PathBuf>,
    gate: Option<(Option<PathBuf>, Option<String>)>,
    command: Vec<OsString>,
) -> i32 {
    let ws = workspace.unwrap_or_else(cwd);
    let sandbox = match gate {
        Some((policy, mode)) => {
            let loaded = match gate::load(profile, policy, ws.clone()) {
                Ok(l) => l,
                Err(e) => return setup_error(e),
            };
            if let Err(code) = gate::gate(&loaded, &command, cwd(), mode.as_deref()) {
                return code;
            }
            loaded.sandbox
        }
        None => match Profile::load(profile) {
            Ok(p) => std::sync::Arc::new(Sandbox::new(p)),
            Err(e) => return setup_error(e),
        },
    };

    let mut req = RunRequest::new(command);
    req.workspace = ws;
    req.cwd = cwd();
    req.env = std::env::vars_os().collect();
    req.timeout = timeout.filter(|t| *t > 0.0).map(Duration::from_secs_f64);
    req.output = Output::Inherit;
    req.forward_signals = true;
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return setup_error(format!("cannot start the runtime: {e}")),
    };
    let result = match rt.block_on(sandbox.run(req, None)) {
        Ok(r) => r,
        Err(e) => return setup_error(e),
    };
    let gaps: Vec<String> = result
        .enforcement
        .gaps()
        .iter()
        .map(|l| format!("{} ({})", l.name, l.detail))
        .collect();
    if !gaps.is_empty() {
        eprintln!(
            "sbx: warning: not fully enforced on this host: {}",
            gaps.join("; ")
        );
    }
    if json || json_out.is_some() {
        let mut v = serde_json::to_value(&result).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("code".into(), result.code().into());
        }
        let text = v.to_string();
        match json_out {
            Some(path) => {
                if let Err(e) = std::fs::write(&path, text + "\n") {
                    eprintln!("sbx: cannot write {}: {e}", path.display());
                }
            }
            None => println!("{text}"),
        }
    }
    result.code()
}

#[expect(clippy::too_many_arguments, reason = "one parameter per CLI flag")]
fn check_cmd(
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
    let report = match gate::decide(&loaded, &call, mode.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if json {
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        println!(
            "{} by {} ({})",
            report.decision.as_str(),
            report.by,
            report.stage
        );
        println!("  reason: {}", report.reason);
        if let Some(r) = &report.rule {
            println!("  rule:   {r}");
        }
        if let Some(s) = &report.source {
            println!("  source: {s}");
        }
        println!("  call:   {}", report.canonical);
    }
    0
}

fn doctor(json: bool) -> ExitCode {
    let host = Host::detect();
    let ws = cwd();
    let mut profiles = Vec::new();
    for name in BUILTIN_NAMES {
        let verdict = match Profile::load(name) {
            Ok(p) => {
                let sb = Sandbox::with_host(p, host.clone());
                match sb.plan_for(&ws, &host) {
                    Ok((_, plan)) => {
                        let gaps: Vec<String> = plan
                            .report
                            .iter()
                            .filter(|l| l.status != sbx::plan::LayerStatus::Enforced)
                            .map(|l| format!("{}: {}", l.name, l.detail))
                            .collect();
                        if gaps.is_empty() {
                            ("full".to_string(), String::new())
                        } else {
                            ("partial".to_string(), gaps.join("; "))
                        }
                    }
                    Err(e) => ("refused".to_string(), e.to_string()),
                }
            }
            Err(e) => ("error".to_string(), e.to_string()),
        };
        profiles
            .push(serde_json::json!({"profile": name, "status": verdict.0, "detail": verdict.1}));
    }
    if json {
        println!(
            "{}",
            serde_json::json!({"host": host, "profiles": profiles})
        );
        return ExitCode::SUCCESS;
    }
    let show = |name: &str, a: &sbx::host::Availability| match a {
        sbx::host::Availability::Available => println!("  {name:<28} yes"),
        sbx::host::Availability::Missing { reason, fix } => {
            println!("  {name:<28} no: {reason}\n  {:<28} fix: {fix}", "")
        }
    };
    println!("host (euid {}):", host.euid);
    match host.landlock_abi {
        Some(v) => println!(
            "  {:<28} ABI {v} (sbx uses up to {})",
            "landlock",
            sbx::host::LANDLOCK_ABI
        ),
        None => show("landlock", &host.landlock),
    }
    show("seccomp", &host.seccomp);
    show("unprivileged user namespaces", &host.user_namespaces);
    show("mount/pid/net namespaces", &host.namespaces);
    show(
        "cgroup v2 delegation",
        &sbx::host::cgroup_v2_delegation(host.euid),
    );
    println!(
        "  {:<28} {}",
        "pids cgroup (for root)",
        host.pids_cgroup
            .as_ref()
            .map_or("none".to_string(), |p| p.display().to_string())
    );
    println!("profiles:");
    for p in &profiles {
        println!(
            "  {:<14} {} {}",
            p["profile"].as_str().unwrap_or(""),
            p["status"].as_str().unwrap_or(""),
            p["detail"].as_str().unwrap_or("")
        );
    }
    ExitCode::SUCCESS
}

fn explain(profile: &str, workspace: Option<PathBuf>, json: bool) -> ExitCode {
    let p = match Profile::load(profile) {
        Ok(p) => p,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    let host = Host::detect();
    let ws = workspace.unwrap_or_else(cwd);
    let ws = std::fs::canonicalize(&ws).unwrap_or(ws);
    let sb = Sandbox::with_host(p, host.clone());
    let (caps, plan) = match sb.plan_for(&ws, &host) {
        Ok(x) => x,
        Err(e) => return ExitCode::from(setup_error(e) as u8),
    };
    if json {
        println!(
            "{}",
            serde_json::json!({"profile": sb.profile().name, "capabilities": caps, "plan": plan})
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "profile {} ({})",
        sb.profile().name,
        sb.profile().description
    );
    println!("namespaces: {:?}", plan.namespaces);
    println!("filesystem (landlock):");
    if let Some(ll) = &plan.landlock {
        for r in &ll.rules {
            println!(
                "  {:<40} {:<50} {}",
                r.path.display(),
                format!("{:?}", r.rights),
                r.origin
            );
        }
        println!(
            "  tcp: {}; scopes: signals={} abstract-unix={}",
            if ll.deny_tcp { "denied" } else { "allowed" },
            ll.scope_signals,
            ll.scope_abstract_unix
        );
    }
    println!("mounts:");
    for m in &plan.mounts {
        println!("  {}", serde_json::to_string(m).unwrap_or_default());
    }
    if let Some(s) = &plan.seccomp {
        println!("seccomp: EPERM for {}", s.denied.join(" "));
        for (name, o) in &s.extra {
            println!("  extra {name} from {o}");
        }
        println!(
            "  sockets allowed: {}; clone3 -> ENOSYS; namespace clone flags refused; x32 blocked; ioctls denied: {}",
            s.socket_families.join(","),
            s.deny_ioctls.join(",")
        );
    }
    println!("network: {:?}", plan.network);
    println!("limits:");
    for r in &plan.rlimits {
        println!("  {:?} = {} from {}", r.resource, r.value, r.origin);
    }
    println!(
        "  timeout_ms = {:?}, output_bytes = {:?}, pids cgroup = {:?}",
        plan.timeout_ms, plan.output_bytes, plan.cgroup_pids_max
    );
    println!(
        "environment: cleared; pass {}; set {:?}",
        plan.env_pass.join(" "),
        plan.env_set
    );
    println!("report:");
    for l in &plan.report {
        println!("  {:<16} {:?} {}", l.name, l.status, l.detail);
    }
    ExitCode::SUCCESS
}
