//! A minimal agent-harness loop embedding sbx as a library: a pipeline from a profile and a
//! policy, an approval callback, an observer, and the sandboxed executor. It runs three
//! calls: one allowed by a rule, one asked and approved, one denied.
//!
//! cargo run --example harness [WORKSPACE]
use sbx::pipeline::{
    ApprovalAnswer, ApprovalRequest, CallResult, CallbackApproval, Caller, Observer, ToolCall,
};
use sbx::serve::SandboxExecutor;
use sbx::setup::{Loaded, SetupOptions};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Prints one line per call and result; a real harness would write its transcript here.
struct PrintObserver;

impl Observer for PrintObserver {
    fn on_call(&self, call: &ToolCall) {
        println!("call   {} {}", call.id(), call.input());
    }
    fn on_result(&self, call: &ToolCall, r: &CallResult) {
        println!(
            "result {} {} by {} ({}): {:?}",
            call.id(),
            r.ruling.decision.as_str(),
            r.ruling.rule.as_deref().unwrap_or(&r.ruling.by),
            r.ruling
                .source
                .as_ref()
                .map_or_else(|| "-".to_string(), ToString::to_string),
            r.content
        );
    }
}

fn main() -> ExitCode {
    let workspace = match std::env::args_os().nth(1) {
        Some(w) => PathBuf::from(w),
        None => std::env::temp_dir().join(format!("sbx-harness-{}", std::process::id())),
    };
    if let Err(e) = std::fs::create_dir_all(&workspace) {
        eprintln!("workspace {}: {e}", workspace.display());
        return ExitCode::FAILURE;
    }
    // The harness's own policy, on top of the profile's default one.
    let policy = workspace.join("harness-policy.toml");
    let rules = "[policy]\nallow = [\"Bash(echo *)\"]\nask = [\"Bash(touch *)\"]\ndeny = [\"Bash(rm *)\"]\n";
    if let Err(e) = std::fs::write(&policy, rules) {
        eprintln!("{}: {e}", policy.display());
        return ExitCode::FAILURE;
    }
    let loaded = match Loaded::load(&SetupOptions {
        profile: "workspace".into(),
        policy: Some(policy),
        workspace: workspace.clone(),
    }) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("setup: {e}");
            return ExitCode::FAILURE;
        }
    };
    let approve = CallbackApproval(|req: &ApprovalRequest| {
        println!(
            "ask    {} ({}) -> approved once",
            req.canonical, req.asked.reason
        );
        ApprovalAnswer::AllowOnce
    });
    let executor = SandboxExecutor::new(loaded.sandbox.clone(), loaded.workspace.clone());
    let pipeline = loaded
        .pipeline()
        .approval(Arc::new(approve))
        .executor(Arc::new(executor))
        .observer(Arc::new(PrintObserver))
        .build();

    let caller = Caller {
        session: "example".into(),
        agent: "main".into(),
    };
    let calls = [
        ("1", "echo hello from the sandbox", "allow"),
        ("2", "touch approved.txt", "allow"),
        ("3", "rm -rf approved.txt", "deny"),
    ];
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut ok = true;
    for (id, command, expect) in calls {
        let call = ToolCall::bash(id, command, caller.clone(), &loaded.workspace.root);
        let r = rt.block_on(pipeline.submit(call));
        if r.ruling.decision.as_str() != expect {
            eprintln!(
                "call {id}: expected {expect}, got {}",
                r.ruling.decision.as_str()
            );
            ok = false;
        }
    }
    let made = loaded.workspace.root.join("approved.txt").exists();
    println!("approved.txt exists: {made}");
    if ok && made {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
