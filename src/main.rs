//! The `sbx` command line: a thin adapter over the library.
mod adapters;
mod check;
mod doctor;
mod explain;
mod gate;
mod mcp_cmd;
mod run;
mod stdout;

use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

const RUN_EXIT_CODES: &str = "Exit codes:
  N        the command's own exit code
  128+N    the command was killed by signal N
  124      the command timed out (SIGTERM, then SIGKILL after a grace period)
  125      sbx could not set up the sandbox (bad profile, a required protection missing);
           the message names the cause and the fix
  126      the command was found but is not executable
  127      the command was not found
  122      the command created or changed a protected path (moved to quarantine) and the
           profile sets `protected_change = \"fail\"`
  123      the permission pipeline refused the command (a deny rule, the safety floor,
           or an ask with no terminal to answer it); see `sbx check`";

const SESSION_EXIT_CODES: &str = "Exit codes:
  0        the input ended (every run stopped and checked)
  128+N    ended by signal N (SIGTERM, SIGINT or SIGHUP): every run stopped and checked first
  125      the session could not start (bad profile or policy, a required protection missing)
  1        the session failed while it ran (its input or output broke)";

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
        /// Permission mode: default, plan, accept-edits, sandbox-auto, bypass (default: the
        /// policy's, else sandbox-auto: whoever typed the command authorized it, and the kernel
        /// confines it; deny rules, ask rules, the floor and the plan's refusals still refuse).
        #[arg(long)]
        mode: Option<String>,
        /// Skip the permission pipeline: the person running sbx authorizes the command
        /// themselves. The sandbox is the same either way (it comes from the profile alone).
        #[arg(long, conflicts_with_all = ["policy", "mode"])]
        no_policy: bool,
        /// Write the JSON object to this file instead of stdout. Its directory is opened
        /// before the run; the report replaces whatever is at the name after it (by rename, not
        /// through a link the command left), and a report that cannot be written exits 125.
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
    #[command(after_help = SESSION_EXIT_CODES)]
    Serve(adapters::ServeArgs),
    /// Serve the sandbox's tools to an agent over MCP on stdin/stdout (see docs/mcp.md).
    #[command(after_help = SESSION_EXIT_CODES)]
    Mcp(mcp_cmd::McpArgs),
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
            ExitCode::from(
                run::run(&profile, workspace, timeout, json, json_out, gate, command) as u8,
            )
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
        } => ExitCode::from(check::check_cmd(
            &profile, workspace, policy, mode, json, tool, input, command,
        ) as u8),
        Cmd::Doctor { json } => doctor::doctor(json),
        Cmd::Explain {
            profile,
            workspace,
            json,
        } => explain::explain(&profile, workspace, json),
        Cmd::Hook(args) => adapters::hook(args),
        Cmd::Serve(args) => adapters::serve(args),
        Cmd::Mcp(args) => mcp_cmd::mcp(args),
        Cmd::Tools { format } => adapters::tools(&format),
    }
}

fn setup_error(msg: impl std::fmt::Display) -> i32 {
    eprintln!("sbx: {msg}");
    125
}
