//! Modes, hooks, access extraction and the floor under the pipeline.
#[path = "pipeline_common/mod.rs"]
mod common;
use common::*;
use sbx::pipeline::*;
use sbx::policy::{PolicyHookSpec, RuleSource, SourceKind};
use std::sync::Arc;

fn check_in(mode: Mode, rules: &str, call: &ToolCall, outlook: EnforcementOutlook) -> CheckReport {
    check(
        call,
        Arc::new(policy_of(&[(SourceKind::User, rules)])),
        mode,
        &profile_caps(),
        outlook,
    )
}

const NONE: &str = "[policy]\n";
fn full() -> EnforcementOutlook {
    EnforcementOutlook {
        fully_enforced: true,
        missing: vec![],
    }
}

#[test]
fn plan_mode_denies_writes_before_anything_else() {
    let allow_edits = "[policy]\nallow = [\"Edit\", \"Bash(cargo build *)\"]\n";
    let r = check_in(Mode::Plan, allow_edits, &edit("src/a.rs"), full());
    assert_eq!((r.decision, r.stage), (Decision::Deny, "plan-gate"));
    let r = check_in(Mode::Default, allow_edits, &edit("src/a.rs"), full());
    assert_eq!(r.decision, Decision::Allow);
    // Reads are not writes.
    let r = check_in(
        Mode::Plan,
        "[policy]\nallow = [\"Read\"]\n",
        &tool("Read", serde_json::json!({"file_path": "src/a.rs"})),
        full(),
    );
    assert_eq!(r.decision, Decision::Allow);
}

#[test]
fn accept_edits_allows_workspace_edits_only() {
    let r = check_in(Mode::AcceptEdits, NONE, &edit("src/a.rs"), full());
    assert_eq!((r.decision, r.stage), (Decision::Allow, "mode-fast-path"));
    let r = check_in(Mode::Default, NONE, &edit("src/a.rs"), full());
    assert_eq!(r.decision, Decision::Ask);
    let r = check_in(
        Mode::AcceptEdits,
        NONE,
        &edit("/nonexistent-sbx-test/elsewhere/x"),
        full(),
    );
    // Outside the profile's writable set: the kernel would refuse it, so no ask.
    assert_eq!((r.decision, r.stage), (Decision::Deny, "plan"));
    assert_eq!(r.rule.as_deref(), Some("plan:write"));
    // Credentials and policy files are never auto-approved by a mode.
    let r = check_in(Mode::AcceptEdits, NONE, &edit(".env"), full());
    assert_eq!(r.decision, Decision::Ask);
    assert!(
        r.trace
            .iter()
            .any(|t| t.stage == "floor" && t.by == "floor:dotenv")
    );
    let r = check_in(Mode::AcceptEdits, NONE, &edit(".sbx/policy.toml"), full());
    assert_eq!(r.decision, Decision::Ask);
    // Never past a deny rule.
    let r = check_in(
        Mode::AcceptEdits,
        "[policy]\ndeny = [\"Edit(src/**)\"]\n",
        &edit("src/a.rs"),
        full(),
    );
    assert_eq!(r.decision, Decision::Deny);
}

#[test]
fn sandbox_auto_allows_bash_only_when_fully_enforced_and_no_rule_asks() {
    let cmd = bash("frobnicate --all");
    let r = check_in(Mode::SandboxAuto, NONE, &cmd, full());
    assert_eq!(
        (r.decision, r.stage),
        (Decision::Allow, "sandbox-fast-path")
    );
    let missing = EnforcementOutlook {
        fully_enforced: false,
        missing: vec!["landlock".into()],
    };
    let r = check_in(Mode::SandboxAuto, NONE, &cmd, missing);
    assert_ne!(r.decision, Decision::Allow);
    let r = check_in(
        Mode::SandboxAuto,
        "[policy]\nask = [\"Bash(frobnicate *)\"]\n",
        &cmd,
        full(),
    );
    assert_eq!((r.decision, r.stage), (Decision::Ask, "rules"));
    let r = check_in(
        Mode::SandboxAuto,
        "[policy]\ndeny = [\"Bash(frobnicate *)\"]\n",
        &cmd,
        full(),
    );
    assert_eq!(r.decision, Decision::Deny);
    // Not for edits.
    let r = check_in(Mode::SandboxAuto, NONE, &edit("src/a.rs"), full());
    assert_eq!(r.decision, Decision::Ask);
}

#[test]
fn bypass_allows_what_rules_do_not_deny_or_ask_but_stays_under_the_floor() {
    let fetch = tool(
        "WebFetch",
        serde_json::json!({"url": "https://example.com/x"}),
    );
    let r = check_in(Mode::Bypass, NONE, &fetch, full());
    assert_eq!(r.decision, Decision::Allow);
    let r = check_in(
        Mode::Bypass,
        "[policy]\nask = [\"WebFetch(domain:example.com)\"]\n",
        &fetch,
        full(),
    );
    assert_eq!(r.decision, Decision::Ask);
    let r = check_in(Mode::Bypass, NONE, &edit(".git/hooks/pre-commit"), full());
    assert_eq!((r.decision, r.stage), (Decision::Deny, "floor"));
    // Unknown tools are never allowed by default, even in bypass.
    let r = check_in(
        Mode::Bypass,
        NONE,
        &tool("Frobnicate", serde_json::json!({})),
        full(),
    );
    assert_eq!(r.decision, Decision::Ask);
    let r = check_in(
        Mode::Default,
        "[policy]\nallow = [\"Frobnicate\"]\n",
        &tool("Frobnicate", serde_json::json!({})),
        full(),
    );
    assert_eq!(r.decision, Decision::Allow);
}

#[test]
fn the_floor_is_not_lifted_by_allow_rules() {
    let r = check_in(
        Mode::Default,
        "[policy]\nallow = [\"Edit\", \"Write\"]\n",
        &edit(".github/workflows/ci.yml"),
        full(),
    );
    assert_eq!(
        (r.decision, r.stage, r.rule.as_deref()),
        (Decision::Ask, "floor", Some("floor:ci-workflows"))
    );
    let r = check_in(
        Mode::Default,
        "[policy]\nallow = [\"Edit\"]\n",
        &edit("~/.ssh/authorized_keys"),
        full(),
    );
    assert_eq!(r.decision, Decision::Deny);
}

#[test]
fn read_only_fast_path_and_readable_set() {
    let read = |p: &str| tool("Read", serde_json::json!({"file_path": p}));
    let r = check_in(Mode::Default, NONE, &read("src/a.rs"), full());
    assert_eq!(
        (r.decision, r.stage),
        (Decision::Allow, "read-only-fast-path")
    );
    let r = check_in(
        Mode::Default,
        NONE,
        &read("/nonexistent-sbx-test/home/.ssh/id_rsa"),
        full(),
    );
    // The profile hides it: denied with the profile line, never asked.
    assert_eq!((r.decision, r.stage), (Decision::Deny, "plan"));
    assert_eq!(r.rule.as_deref(), Some("plan:deny-read"));
    assert!(
        r.source.is_some_and(|s| s.to_string().contains("test")),
        "the origin is named"
    );
    // Outside the readable set altogether.
    let r = check_in(Mode::Default, NONE, &read("/etc/hostname"), full());
    assert_eq!(
        (r.decision, r.rule.as_deref()),
        (Decision::Deny, Some("plan:read"))
    );
}

#[test]
fn webfetch_domain_comes_from_the_url() {
    let rules = "[policy]\nallow = [\"WebFetch(domain:example.com)\"]\n";
    let f = |u: &str| {
        check_in(
            Mode::Default,
            rules,
            &tool("WebFetch", serde_json::json!({"url": u})),
            full(),
        )
        .decision
    };
    assert_eq!(f("https://EXAMPLE.com./a"), Decision::Allow);
    assert_eq!(f("https://user:pw@example.com.evil.io/"), Decision::Ask);
    assert_eq!(f("not a url"), Decision::Deny);
}

#[test]
fn symlinks_are_judged_by_their_target() {
    let Ok(dir) = tempfile::tempdir() else {
        panic!("tempdir")
    };
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).ok();
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.join(".git/hooks"), ws.join("innocent")).ok();
    let env = WorkspaceContext::new(ws.clone(), dir.path().join("home"));
    let policy = sbx::policy::merge(vec![], &env).map_err(|e| e.to_string());
    let Ok(policy) = policy else {
        panic!("{policy:?}")
    };
    let call = ToolCall::new(
        "c",
        "Write",
        serde_json::json!({"file_path": "innocent/pre-commit"}),
        Caller::default(),
        &ws,
    );
    let mut caps = profile_caps();
    caps.fs.write = vec![entry(&ws.to_string_lossy())];
    let r = check(&call, Arc::new(policy), Mode::Bypass, &caps, full());
    assert_eq!(
        (r.decision, r.rule.as_deref()),
        (Decision::Deny, Some("floor:git-hooks")),
        "{r:?}"
    );
    assert!(
        r.canonical.contains(".git/hooks/pre-commit"),
        "{}",
        r.canonical
    );
}

/// Through the library's pipeline, in every mode: a `..` after a link climbs from the link's
/// target. A workspace link into the home reaches a hidden directory (denied by the plan,
/// never asked), and a home link to a directory elsewhere makes a lexically hidden path a
/// harmless one (allowed), for Bash and the Read tool alike.
#[test]
fn a_dotdot_after_a_link_is_judged_where_the_kernel_lands() {
    let Ok(dir) = tempfile::tempdir() else {
        panic!("tempdir")
    };
    let Ok(base) = dir.path().canonicalize() else {
        panic!("canonical tempdir")
    };
    let (ws, home) = (base.join("ws"), base.join("home"));
    for d in [
        ws.clone(),
        home.join("proj"),
        home.join(".hidden"),
        home.join("dots/cfg"),
    ] {
        std::fs::create_dir_all(d).ok();
    }
    std::os::unix::fs::symlink(home.join("proj"), ws.join("into-home")).ok();
    std::os::unix::fs::symlink(home.join("dots/cfg"), home.join(".cfg")).ok();
    let env = WorkspaceContext::new(ws.clone(), home.clone());
    let Ok(policy) = sbx::policy::merge(vec![], &env) else {
        panic!("policy")
    };
    let policy = Arc::new(policy);
    let mut caps = profile_caps();
    caps.fs.read = vec![entry("/usr"), entry(&base.to_string_lossy())];
    caps.fs.write = vec![entry(&ws.to_string_lossy())];
    caps.fs.deny_read = vec![entry(&home.join(".hidden").to_string_lossy())];
    let hidden = home.join(".cfg/../.hidden/notes");
    for mode in [Mode::Default, Mode::SandboxAuto, Mode::Bypass] {
        for (tool, input, want) in [
            (
                "Bash",
                serde_json::json!({"command": "cat into-home/../.hidden/notes"}),
                Decision::Deny,
            ),
            (
                "Read",
                serde_json::json!({"file_path": "into-home/../.hidden/notes"}),
                Decision::Deny,
            ),
            (
                "Bash",
                serde_json::json!({"command": "cat into-home/../proj/notes.md"}),
                Decision::Allow,
            ),
            (
                "Read",
                serde_json::json!({"file_path": hidden}),
                Decision::Allow,
            ),
            (
                "Bash",
                serde_json::json!({"command": format!("cat {}", hidden.display())}),
                Decision::Allow,
            ),
        ] {
            let call = ToolCall::new("c", tool, input.clone(), Caller::default(), &ws);
            let r = check(&call, policy.clone(), mode, &caps, full());
            assert_eq!(r.decision, want, "{mode:?} {tool} {input}: {r:?}");
            if want == Decision::Deny {
                assert_eq!(r.rule.as_deref(), Some("plan:deny-read"), "{r:?}");
            }
        }
    }
}

#[test]
fn check_report_serialises_the_documented_fields() {
    let r = check_in(
        Mode::Default,
        "[policy]\ndeny = [\"Bash(git push *)\"]\n",
        &bash("git push"),
        full(),
    );
    let v = serde_json::to_value(&r).unwrap_or_default();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["stage"], "rules");
    assert_eq!(v["rule"], "Bash(git push *)");
    assert!(
        v["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("user:user.toml:"))
    );
    assert!(v["reason"].is_string() && v["trace"].is_array());
}

// ---- hooks ----

fn hook(script: &str, timeout_ms: u64) -> Arc<dyn PolicyHook> {
    Arc::new(CommandPolicyHook {
        spec: PolicyHookSpec {
            command: vec!["sh".into(), "-c".into(), script.into()],
            timeout_ms,
            source: RuleSource {
                kind: SourceKind::User,
                file: "user.toml".into(),
                line: 7,
            },
        },
    })
}

async fn run_with_hooks(
    rules: &str,
    call: ToolCall,
    hooks: Vec<Arc<dyn PolicyHook>>,
) -> (CallResult, Arc<FakeExecutor>) {
    let exec = Arc::new(FakeExecutor::ok(""));
    let mut b = Pipeline::builder(
        Arc::new(policy_of(&[(SourceKind::User, rules)])),
        ProfileCaps::new(profile_caps()),
    )
    .executor(exec.clone());
    for h in hooks {
        b = b.policy_hook(h);
    }
    (b.build().submit(call).await, exec)
}

const ALLOW_TESTS: &str =
    "[policy]\nallow = [\"Bash(cargo test *)\"]\nask = [\"Bash(git push *)\"]\n";

#[tokio::test]
async fn hooks_fold_strictest_wins_in_any_order() {
    let allow = || hook("echo '{\"decision\":\"allow\"}'", 5000);
    let deny = || {
        hook(
            "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"hook says no\"}}'",
            5000,
        )
    };
    let (a, ea) = run_with_hooks(ALLOW_TESTS, bash("cargo test"), vec![allow(), deny()]).await;
    let (b, _) = run_with_hooks(ALLOW_TESTS, bash("cargo test"), vec![deny(), allow()]).await;
    assert_eq!(a.ruling, b.ruling);
    assert_eq!(
        (a.ruling.decision, a.ruling.stage, a.ruling.reason.as_str()),
        (Decision::Deny, Stage::PolicyHook, "hook says no")
    );
    assert_eq!(
        a.ruling.source,
        Some(sbx::provenance::Provenance::Rule(sbx::policy::RuleSource {
            kind: sbx::policy::SourceKind::User,
            file: "user.toml".into(),
            line: 7
        }))
    );
    assert_eq!(ea.runs(), 0);
}

#[tokio::test]
async fn a_hook_allow_never_lifts_an_ask_rule_or_the_floor() {
    let allow = hook("echo '{\"decision\":\"allow\"}'", 5000);
    let (r, e) = run_with_hooks(ALLOW_TESTS, bash("git push origin"), vec![allow.clone()]).await;
    assert_eq!(
        r.ruling.decision,
        Decision::Deny,
        "ask, then no approval channel"
    );
    assert_eq!(e.runs(), 0);
    let (r, _) = run_with_hooks(
        "[policy]\nallow = [\"Edit\"]\n",
        edit(".env"),
        vec![allow.clone()],
    )
    .await;
    assert_eq!(r.ruling.decision, Decision::Deny);
    // It may settle the default ask, when nothing else had an opinion.
    let (r, e) = run_with_hooks(ALLOW_TESTS, edit("src/a.rs"), vec![allow]).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage),
        (Decision::Allow, Stage::PolicyHook)
    );
    assert_eq!(e.runs(), 1);
}

#[tokio::test]
async fn a_hook_rewrite_is_recorded_never_applied() {
    let rewrite = hook(
        "cat >/dev/null; echo '{\"decision\":\"allow\",\"updated_input\":{\"command\":\"rm -rf /\"}}'",
        5000,
    );
    let (r, e) = run_with_hooks(ALLOW_TESTS, bash("cargo test"), vec![rewrite]).await;
    assert_eq!(r.hook_rewrites.len(), 1);
    assert_eq!(r.hook_rewrites[0].updated_input["command"], "rm -rf /");
    let calls = e.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls[0].0.argv[2], "cargo test");
}

#[tokio::test]
async fn a_hook_that_crashes_errors_or_times_out_denies() {
    for script in ["exit 3", "echo not-json", "sleep 5", "kill -9 $$"] {
        let (r, e) = run_with_hooks(ALLOW_TESTS, bash("cargo test"), vec![hook(script, 200)]).await;
        assert_eq!(
            (r.ruling.decision, r.ruling.stage),
            (Decision::Deny, Stage::PolicyHook),
            "{script}: {:?}",
            r.ruling
        );
        assert!(r.ruling.reason.contains("fail closed"), "{script}");
        assert_eq!(e.runs(), 0);
    }
    // Exit status 2 is a deny answer, as in Claude Code.
    let (r, _) = run_with_hooks(
        ALLOW_TESTS,
        bash("cargo test"),
        vec![hook("echo nope >&2; exit 2", 2000)],
    )
    .await;
    assert_eq!(
        (r.ruling.decision, r.ruling.reason.as_str()),
        (Decision::Deny, "nope")
    );
    // A hook with no opinion changes nothing.
    let (r, e) = run_with_hooks(ALLOW_TESTS, bash("cargo test"), vec![hook("true", 2000)]).await;
    assert_eq!(r.ruling.decision, Decision::Allow);
    assert_eq!(e.runs(), 1);
}

#[tokio::test]
async fn a_hook_receives_the_call_as_json() {
    let probe = hook(
        "grep -q '\"tool_name\":\"Bash\"' && echo '{\"decision\":\"deny\",\"reason\":\"saw it\"}'",
        5000,
    );
    let (r, _) = run_with_hooks(ALLOW_TESTS, bash("cargo test"), vec![probe]).await;
    assert_eq!(r.ruling.reason, "saw it");
}

/// A rule with `modes` decides only calls in those modes, for Bash and for other tools alike;
/// the same rule without them decides in every mode.
#[test]
fn a_rule_with_modes_applies_only_in_them() {
    let limited = "[policy]\nask = [{ rule = \"Edit(*secret*)\", modes = [\"default\", \"accept-edits\"] }]\ndeny = [{ rule = \"Bash(frobnicate *)\", modes = [\"default\"] }]\n";
    let every = "[policy]\nask = [\"Edit(*secret*)\"]\ndeny = [\"Bash(frobnicate *)\"]\n";
    let write = bash("echo x > db-secret.txt");
    let run = bash("frobnicate --all");
    for (mode, applies) in [
        (Mode::Default, true),
        (Mode::AcceptEdits, true),
        (Mode::SandboxAuto, false),
    ] {
        let r = check_in(mode, limited, &edit("db-secret.txt"), full());
        assert_eq!(
            r.decision == Decision::Ask && r.stage == "rules",
            applies,
            "{mode:?} {r:?}"
        );
        let r = check_in(mode, every, &edit("db-secret.txt"), full());
        assert_eq!((r.decision, r.stage), (Decision::Ask, "rules"), "{mode:?}");
        let r = check_in(mode, limited, &write, full());
        assert_eq!(r.stage == "rules", applies, "{mode:?} {r:?}");
        let r = check_in(mode, every, &write, full());
        assert_eq!((r.decision, r.stage), (Decision::Ask, "rules"), "{mode:?}");
    }
    let r = check_in(Mode::Default, limited, &run, full());
    assert_eq!((r.decision, r.stage), (Decision::Deny, "rules"));
    let r = check_in(Mode::SandboxAuto, limited, &run, full());
    assert_eq!(
        (r.decision, r.stage),
        (Decision::Allow, "sandbox-fast-path")
    );
    let r = check_in(Mode::SandboxAuto, every, &run, full());
    assert_eq!((r.decision, r.stage), (Decision::Deny, "rules"));
}
