#![allow(dead_code)]
pub use sbx::WorkspaceContext;
use sbx::capability::{
    CapabilitySet, EnvFilter, FsCaps, Isolation, Limits, NetworkMode, Origin, PathEntry,
};
use sbx::pipeline::{Caller, ToolCall};
use sbx::policy::{self, PolicySource, SourceKind};
use std::path::PathBuf;

pub const WS: &str = "/nonexistent-sbx-test/ws";
pub const HOME: &str = "/nonexistent-sbx-test/home";

pub fn env() -> WorkspaceContext {
    WorkspaceContext::new(WS, HOME)
}

pub fn entry(p: &str) -> PathEntry {
    PathEntry {
        path: PathBuf::from(p),
        required: false,
        origin: Origin::builtin("test"),
    }
}

pub fn profile_caps() -> CapabilitySet {
    CapabilitySet {
        fs: FsCaps {
            read: vec![entry("/usr"), entry(WS)],
            write: vec![entry(WS), entry("/tmp")],
            execute: vec![entry("/usr")],
            deny_read: vec![entry("/nonexistent-sbx-test/home/.ssh")],
            deny_write: vec![],
            ..FsCaps::default()
        },
        network: NetworkMode::Loopback,
        net_rules: Default::default(),
        limits: Limits {
            timeout_ms: Some(60_000),
            ..Limits::default()
        },
        isolation: Isolation::default(),
        env: EnvFilter {
            pass: vec!["PATH".into(), "HOME".into()],
            ..EnvFilter::default()
        },
        extra_denied_syscalls: vec![],
        requires: vec![],
        origins: Default::default(),
    }
}

pub fn source(kind: SourceKind, text: &str) -> PolicySource {
    match policy::parse_policy_file(text, kind, &format!("{}.toml", kind.as_str()), &env()) {
        Ok(s) => s,
        Err(e) => panic!("test policy does not load: {e}"),
    }
}

pub fn policy_of(texts: &[(SourceKind, &str)]) -> policy::Policy {
    let sources = texts.iter().map(|(k, t)| source(*k, t)).collect();
    match policy::merge(sources, &env()) {
        Ok(p) => p,
        Err(e) => panic!("merge failed: {e}"),
    }
}

pub fn caller() -> Caller {
    Caller {
        session: "s1".into(),
        agent: "a1".into(),
    }
}

pub fn bash(cmd: &str) -> ToolCall {
    ToolCall::bash("c1", cmd, caller(), WS)
}

pub fn tool(name: &str, input: serde_json::Value) -> ToolCall {
    ToolCall::new("c1", name, input, caller(), WS)
}

pub fn edit(path: &str) -> ToolCall {
    tool(
        "Edit",
        serde_json::json!({"file_path": path, "old_string": "a", "new_string": "b"}),
    )
}
