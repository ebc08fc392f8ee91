//! One call to run: the command, where it runs, its environment, timeout and output.
use super::{Output, Terminal};
use crate::workspace::WorkspaceContext;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One call to run.
pub struct RunRequest {
    /// The command and its arguments.
    pub argv: Vec<OsString>,
    /// Where the caller is; the command starts here when it lies inside the workspace.
    pub cwd: PathBuf,
    /// Where the command works: its root is the workspace `{workspace}` stands for, its
    /// homes `{home}`'s; its writable trees are left aside (the resolution makes them). A
    /// caller that already has it (a session's
    /// [`Loaded::workspace`](crate::setup::Loaded::workspace), say) gives it as it is; one
    /// with only a path derives it ([`RunRequest::in_workspace`]). The run takes it as it is
    /// when its root is canonical, else derives it again for the canonical root
    /// ([`WorkspaceContext::of`]).
    pub context: WorkspaceContext,
    /// The caller's environment, filtered by the profile.
    pub env: Vec<(OsString, OsString)>,
    /// Overrides the profile's timeout when smaller (or when the profile has none).
    pub timeout: Option<Duration>,
    /// How long a command has between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Where the output goes.
    pub output: Output,
    /// Forward SIGINT, SIGTERM, SIGHUP and SIGQUIT received by this process.
    pub forward_signals: bool,
    /// Resolves when the caller wants the call cancelled.
    pub cancel: Option<tokio::sync::oneshot::Receiver<()>>,
    /// Put this process's terminal behind a pseudo-terminal that sbx relays (see
    /// [`Terminal`]); `None` keeps plain fds and pipes. With a terminal on stdin, the run also
    /// handles the signals `forward_signals` names, so that the terminal's modes are restored.
    pub terminal: Option<Terminal>,
    /// In `proxy` network mode: whom to ask about a host name the profile does not list
    /// (`None`: such names are refused).
    pub net_approver: Option<crate::proxy::Approver>,
    /// With a terminal: the caller feeds it. The run neither reads this process's stdin nor
    /// follows its window size; once the init has opened the pseudo-terminal, a
    /// [`PtyControl`](super::PtyControl) on it is sent here.
    pub pty_primary: Option<tokio::sync::oneshot::Sender<super::PtyControl>>,
    /// Relay this process's stdin to the command (`sbx run`): a pipe or socket is passed as
    /// it is, anything else (a file, a directory, a device) is read by sbx and relayed. Unset,
    /// the command reads an empty stdin unless a pseudo-terminal feeds it.
    pub relay_stdin: bool,
    /// Keep the plan for a later run with the same inputs (see `exec::kept`); on by default.
    /// A one-shot run (`sbx run`) has no later run in its process: it plans without recording
    /// its questions, unless its sandbox keeps plans between processes (`Sandbox::store_plans`).
    pub keep_plan: bool,
}

impl RunRequest {
    /// A request to run `argv` where `context` says, from the current directory, with
    /// collected output and no environment.
    pub fn new<I, S>(argv: I, context: WorkspaceContext) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            context,
            cwd,
            env: Vec::new(),
            timeout: None,
            grace: Duration::from_secs(2),
            output: Output::Collect,
            forward_signals: false,
            cancel: None,
            terminal: None,
            net_approver: None,
            pty_primary: None,
            relay_stdin: false,
            keep_plan: true,
        }
    }

    /// [`RunRequest::new`] in the workspace at `path`, for a library caller that has only a
    /// path: its context is derived as setup derives one ([`WorkspaceContext::of`]).
    pub fn in_workspace<I, S>(argv: I, path: impl AsRef<Path>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self::new(argv, WorkspaceContext::of(path.as_ref()))
    }
}
