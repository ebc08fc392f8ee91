//! `sbx run`: the permission gate (unless skipped), then the command in the sandbox, with
//! its gaps warned about and its result optionally as JSON.
use crate::{cwd, gate, setup_error};
use sbx::exec::{Output, Resolved, RunRequest, Sandbox, Stream, Terminal};
use sbx::workspace::WorkspaceContext;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `gate`: the policy file and mode for the permission pipeline, or `None` to skip it.
pub fn run(
    profile: &str,
    workspace: Option<PathBuf>,
    timeout: Option<f64>,
    json: bool,
    json_out: Option<PathBuf>,
    gate: Option<(Option<PathBuf>, Option<String>)>,
    command: Vec<OsString>,
) -> i32 {
    let ws = workspace.unwrap_or_else(cwd);
    // The report's directory is held from before the run: the command cannot move it.
    let report_dir = match json_out.as_deref().map(ReportDir::open).transpose() {
        Ok(d) => d,
        Err(e) => return setup_error(e),
    };
    let Ready {
        sandbox,
        resolved,
        context,
    } = match load_and_gate(profile, &ws, gate, &command) {
        Ok(x) => x,
        Err(code) => return code,
    };

    let mut req = RunRequest::new(command, context);
    req.cwd = cwd();
    req.env = std::env::vars_os().collect();
    req.timeout = timeout.filter(|t| *t > 0.0).map(Duration::from_secs_f64);
    // The report goes on stdout after the command's output: it must start its own line.
    let open_line = Arc::new(AtomicBool::new(false));
    req.output = if json && json_out.is_none() {
        relay_tracking_lines(Arc::clone(&open_line))
    } else {
        Output::Inherit
    };
    req.forward_signals = true;
    req.relay_stdin = true;
    req.keep_plan = false;
    // A terminal on stdin or stdout reaches the command only as a pseudo-terminal sbx relays.
    req.terminal = Terminal::from_stdio();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return setup_error(format!("cannot start the runtime: {e}")),
    };
    let result = match rt.block_on(sandbox.run_resolved(req, None, resolved)) {
        Ok(r) => r,
        Err(e) => return setup_error(e),
    };
    reset_screen();
    tell(&result);
    if json || report_dir.is_some() {
        let written = print_json(&result, report_dir, open_line.load(Ordering::Relaxed));
        if let Err(e) = written {
            return setup_error(e);
        }
    }
    // The process exits next: the profile's thousands of paths and the runtime would only be
    // freed one allocation at a time. Whatever the run made outside has been cleaned up.
    std::mem::forget((sandbox, rt));
    exit_status(&result)
}

/// The exit status of `sbx run`: the run's code, except that a command that exited 0 after
/// its output was cut at the profile's `output` limit exits [`OUTPUT_CUT`]: what it printed
/// past the cap was discarded (`sbx run -- tar czf - . > ws.tgz` would leave a broken
/// archive), and a script or CI step must not take that for success.
fn exit_status(result: &sbx::exec::RunResult) -> i32 {
    match result.code() {
        0 if result.stdout_truncated || result.stderr_truncated => OUTPUT_CUT,
        code => code,
    }
}

/// `sbx run`'s exit status when output was cut at the limit and the command exited 0.
const OUTPUT_CUT: i32 = 121;

/// The run's gaps and notices (protected paths moved, limits reached) on stderr. On a
/// terminal, its display attributes are reset first: the command may have left them
/// concealed (`\e[8m`) or coloured as the background, which would hide these lines.
/// After a command that wrote to the caller's terminal (through the pseudo-terminal sbx
/// relays), the screen modes it may have left set are reset (see [`sbx::exec::SCREEN_RESET`]).
fn reset_screen() {
    let mut out = std::io::stdout().lock();
    if std::io::IsTerminal::is_terminal(&out) {
        let _ = out.write_all(sbx::exec::SCREEN_RESET);
        let _ = out.flush();
    }
}

fn tell(result: &sbx::exec::RunResult) {
    use std::io::IsTerminal;
    let gaps: Vec<String> = result
        .enforcement
        .gaps()
        .iter()
        .map(|l| format!("{} ({})", l.name, l.detail))
        .collect();
    let mut lines: Vec<String> = result
        .notices()
        .into_iter()
        .map(|n| format!("sbx: {n}"))
        .collect();
    if !gaps.is_empty() {
        let gaps = gaps.join("; ");
        lines.insert(
            0,
            format!("sbx: warning: not fully enforced on this host: {gaps}"),
        );
    }
    if lines.is_empty() {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err.is_terminal() {
        let _ = write!(err, "\x1b[0m");
    }
    for l in lines {
        let _ = writeln!(err, "{l}");
    }
}

/// What loading gives the run: the sandbox, the gate's resolution to reuse, and the workspace
/// context the gate worked in (without the gate, the one derived from the workspace's path).
struct Ready {
    sandbox: Arc<Sandbox>,
    resolved: Option<Resolved>,
    context: WorkspaceContext,
}

/// The sandbox to run in: the profile alone (`--no-policy`), or the profile and policy with
/// the permission gate passed. `Err` is the exit code. The resolution the gate made is kept
/// for the run when the command was allowed at once; the workspace context it was made in
/// goes to the run in any case.
fn load_and_gate(
    profile: &str,
    ws: &Path,
    gate: Option<(Option<PathBuf>, Option<String>)>,
    command: &[OsString],
) -> Result<Ready, i32> {
    let Some((policy, mode)) = gate else {
        let context = sbx::setup::workspace(ws).map_err(setup_error)?;
        return sbx::setup::sandbox(profile)
            .map(|s| Ready {
                sandbox: Arc::new(s),
                resolved: None,
                context,
            })
            .map_err(setup_error);
    };
    let mut loaded = gate::load(profile, policy, ws.to_path_buf()).map_err(setup_error)?;
    let passed = gate::gate(&loaded, command, cwd(), mode.as_deref())?;
    // A run that follows at once reuses the gate's resolution of the profile. After a
    // prompt, which can take any time, the files its globs match may have changed.
    let resolved = loaded
        .resolved
        .take()
        .filter(|_| passed == gate::Passed::Allowed);
    Ok(Ready {
        sandbox: loaded.sandbox,
        resolved,
        context: loaded.workspace,
    })
}

/// The run as one JSON object with its exit code: to the report file, or last on stdout, on a
/// line of its own (`open_line`: what the command printed last left a line open). A report
/// file that cannot be written fails the run.
fn print_json(
    result: &sbx::exec::RunResult,
    report: Option<ReportDir>,
    open_line: bool,
) -> Result<(), String> {
    let mut v = serde_json::to_value(result).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("code".into(), exit_status(result).into());
    }
    let text = v.to_string();
    if let Some(report) = report {
        return report.write(&(text + "\n"));
    }
    let lead = if open_line { "\n" } else { "" };
    // A reader that went away (`| head -1`) is not the run's failure: the exit code still
    // reports the command, so a write error is not an outcome here.
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{lead}{text}").and_then(|()| out.flush());
    Ok(())
}

/// The command's output relayed as it arrives, noting whether what went to stdout last left a
/// line open (did not end in a newline, or may not have been written whole).
fn relay_tracking_lines(open_line: Arc<AtomicBool>) -> Output {
    use std::io::Write;
    Output::Callback(Box::new(move |stream, chunk| {
        let written = match stream {
            Stream::Stdout => {
                let mut out = std::io::stdout().lock();
                let written = out.write_all(chunk).and_then(|()| out.flush());
                if let Some(&last) = chunk.last() {
                    open_line.store(written.is_err() || last != b'\n', Ordering::Relaxed);
                }
                written
            }
            Stream::Stderr => std::io::stderr().write_all(chunk),
        };
        sbx::exec::wanted(written)
    }))
}

/// Where `--json-out` puts the report: its directory, opened before the run, and its name. The
/// path may lie where the command can write, so the report is written to a new file in that
/// directory and renamed over the name: whatever the command left there (a link, which would
/// send sbx's write, made outside the sandbox, anywhere the command chose; a FIFO, which would
/// block it; a forged report it made read-only) is replaced, never followed or opened.
struct ReportDir {
    dir: std::os::fd::OwnedFd,
    parent: PathBuf,
    name: std::ffi::OsString,
    shown: PathBuf,
}

impl ReportDir {
    fn open(path: &Path) -> Result<Self, String> {
        use nix::fcntl::{OFlag, open};
        let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
        let name = path.file_name().ok_or_else(|| fail(&"not a file name"))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let dir = open(parent, flags, nix::sys::stat::Mode::empty()).map_err(|e| fail(&e))?;
        Ok(ReportDir {
            dir,
            parent: parent.to_path_buf(),
            name: name.to_os_string(),
            shown: path.to_path_buf(),
        })
    }

    fn write(&self, text: &str) -> Result<(), String> {
        use nix::fcntl::{OFlag, openat, renameat};
        let fail =
            |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", self.shown.display());
        // A directory moved away and another put at its name would leave what the command
        // wrote there at FILE and the report elsewhere: refused.
        if !self.still_there() {
            return Err(fail(&"its directory was replaced during the run"));
        }
        let mut tmp = self.name.clone();
        tmp.push(format!(".sbx-{}-{}", std::process::id(), nanos()));
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW;
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o644);
        let fd = openat(&self.dir, tmp.as_os_str(), flags | OFlag::O_CLOEXEC, mode)
            .map_err(|e| fail(&e))?;
        let written = std::fs::File::from(fd).write_all(text.as_bytes());
        let placed = written.map_err(|e| fail(&e)).and_then(|()| {
            renameat(&self.dir, tmp.as_os_str(), &self.dir, self.name.as_os_str())
                .map_err(|e| fail(&e))
        });
        if placed.is_err() {
            let _ = nix::unistd::unlinkat(
                &self.dir,
                tmp.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
        }
        placed
    }
}

impl ReportDir {
    /// Whether the report's directory named now is the one opened before the run.
    fn still_there(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let held = nix::sys::stat::fstat(&self.dir);
        let named = std::fs::metadata(&self.parent);
        matches!((held, named), (Ok(h), Ok(n)) if h.st_dev == n.dev() && h.st_ino == n.ino())
    }
}

/// The clock's nanoseconds, to keep a temporary name from being guessed ahead.
fn nanos() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
}
