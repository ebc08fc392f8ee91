//! sbx runs commands for AI agents and CI jobs inside a kernel-enforced Linux sandbox.

pub mod capability;
pub mod pipeline;
pub mod policy;
pub mod shell;

pub use capability::{
    CapabilitySet, EnvPolicy, FsCaps, Isolation, Limits, NetworkMode, Origin, PathEntry,
};
pub mod enforce;
pub mod exec;
pub mod hook;
pub mod host;
pub mod plan;
pub mod profile;
pub mod serve;
pub mod tools;
pub use pipeline::{
    CallResult, Caller, CheckReport, Decision, EnforcedCaps, ExecOutcome, ExecRequest, Executor,
    Mode, Pipeline, ProfileCaps, Ruling, Stage, ToolCall, check,
};
pub use policy::{LoadOptions, Policy, PolicyEnv, PolicyError};
