//! `sbx hook`: thin adapters that let Claude Code, Codex CLI and Gemini CLI ask the
//! pipeline before a tool runs, and optionally run shell calls inside `sbx run`.
//! No policy lives here: events are translated to calls, and the pipeline's rulings to answers.
#![forbid(unsafe_code)]

mod answer;
mod event;
mod handle;
mod quote;

/// Re-exported from [`crate::setup`], where every command loads its profile and policy.
pub use crate::setup::{Loaded, SetupError, SetupOptions};
pub use answer::{answer, fail_closed, post_answer};
pub use event::{EventError, Harness, HookEvent, MAX_EVENT_BYTES, patch_files};
pub use handle::{HookEventKind, HookOptions, SandboxMode, handle_event};
pub use quote::{QuoteError, sandbox_command, sandboxed_inner, sh_quote};
