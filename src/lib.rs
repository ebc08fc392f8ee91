//! sbx runs commands for AI agents and CI jobs inside a kernel-enforced Linux sandbox.

pub mod capability;
pub mod pipeline;
pub mod policy;
pub mod shell;

pub use capability::{
    CapabilitySet, EnvPolicy, FsCaps, Isolation, Limits, NetworkMode, Origin, PathEntry,
};
