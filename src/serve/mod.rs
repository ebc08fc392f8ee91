//! `sbx serve`: JSON lines over stdin/stdout for harnesses in any language.
//! See `docs/protocol.md`. A thin adapter: every call goes through the pipeline.
#![forbid(unsafe_code)]

mod approval;
mod executor;
mod job_tools;
mod jobs;
mod lines;
mod protocol;
mod ruling;
mod runs;
mod server;
mod term;
mod term_tools;
mod terminals;
mod unread;
mod utf8;

/// Re-exported from [`crate::setup`], where every command loads its profile and policy.
pub use crate::setup::{Loaded, SetupError, SetupOptions};
pub use executor::{OUTCOME_BYTES, OutputSink, SandboxExecutor};
pub use jobs::{JobError, JobRead, Jobs, MAX_JOB_WAIT};
pub use lines::{Line, next_line};
pub use protocol::{
    ApprovalReply, DEFAULT_MAX_LINE_BYTES, Event, JobInfo, JobStatus, PROTOCOL_VERSION, Request,
    schemas,
};
pub use server::{ServeOptions, TERMINAL_SHELL, serve, serve_until};
pub use term_tools::{key_bytes, signal_number};
pub use terminals::{
    MAX_TERMINAL_WAIT, MAX_TERMINALS, TERMINAL_IDLE, TermRead, TerminalError, Terminals,
};
pub use unread::JOB_OUTPUT_BYTES;
