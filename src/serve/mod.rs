//! `sbx serve`: JSON lines over stdin/stdout for harnesses in any language.
//! See `docs/protocol.md`. A thin adapter: every call goes through the pipeline.
#![forbid(unsafe_code)]

mod executor;
mod lines;
mod protocol;
mod server;

pub use crate::hook::{Loaded, SetupError, SetupOptions};
pub use executor::{OUTCOME_BYTES, OutputSink, SandboxExecutor};
pub use lines::{Line, next_line};
pub use protocol::{
    ApprovalReply, DEFAULT_MAX_LINE_BYTES, Event, PROTOCOL_VERSION, Request, schemas,
};
pub use server::{ServeOptions, serve};
