//! One test (at least) per sentence of the pipeline's stages.
#[path = "pipeline_common/mod.rs"]
mod common;
use common::*;
use sbx::pipeline::*;
use sbx::policy::{Policy, SourceKind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const RULES: &str = "[policy]\nallow = [\"Bash(cargo test *)\", \"Bash(git diff *)\"]\nask = [\"Bash(git push *)\"]\ndeny = [{ rule = \"Bash(git push --force *)\", reason = \"no force push\" }]\n";

fn policy() -> Arc<Policy> {
    Arc::new(policy_of(&[(SourceKind::User, RULES)]))
}

fn builder(exec: &Arc<FakeExecutor>) -> PipelineBuilder {
    Pipeline::builder(policy(), ProfileCaps::new(profile_caps())).executor(exec.clone())
}

struct Fixed(&'static str, Option<Decision>);
impl Listener for Fixed {
    fn name(&self) -> &str {
        self.0
    }
    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        match self.1 {
            Some(d) => Ok(Ruling::new(d, Stage::Listener, self.0, "fixed")),
            None => next.decide(cx),
        }
    }
}

struct Failing(&'static str);
impl Listener for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        match self.0 {
            "panic" => panic!("listener bug"),
            "error" => Err(StageError::failed("listener", "failing", "boom")),
            "slow" => {
                std::thread::sleep(Duration::from_millis(30));
                next.decide(cx)
            }
            _ => next.decide(cx),
        }
    }
}

/// Swallows a later failure and answers allow: must not help.
struct Swallow;
impl Listener for Swallow {
    fn name(&self) -> &str {
        "swallow"
    }
    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        let _ = next.decide(cx);
        Ok(Ruling::allow(Stage::Listener, "swallow", "ignores errors"))
    }
}

struct CountingGuard(&'static str, Option<&'static str>, Arc<AtomicUsize>);
impl Guard for CountingGuard {
    fn name(&self) -> &str {
        self.0
    }
    fn vote(&self, _cx: &CallContext<'_>) -> Result<Vote, StageError> {
        self.2.fetch_add(1, Ordering::SeqCst);
        match self.1 {
            Some("panic") => panic!("guard bug"),
            Some("error") => Err(StageError::failed("guard", self.0, "boom")),
            Some(r) => Ok(Vote::Deny(r.into())),
            None => Ok(Vote::Abstain),
        }
    }
}

fn answer(a: ApprovalAnswer) -> Arc<dyn ApprovalChannel> {
    Arc::new(CallbackApproval(move |_: &ApprovalRequest| a.clone()))
}

// ---- pre-execute ----

#[tokio::test]
async fn listeners_first_decision_wins_and_order_matters() {
    let exec = Arc::new(FakeExecutor::ok("out"));
    let allow_first = builder(&exec)
        .listeners(vec![
            Arc::new(Fixed("pass", None)),
            Arc::new(Fixed("a", Some(Decision::Allow))),
            Arc::new(Fixed("d", Some(Decision::Deny))),
        ])
        .build();
    let r = allow_first.submit(bash("frobnicate")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.by.as_str()),
        (Decision::Allow, "a")
    );
    assert_eq!(
        r.trace
            .iter()
            .map(|t| (t.by.as_str(), t.outcome))
            .collect::<Vec<_>>(),
        vec![("pass", "pass"), ("a", "allow")]
    );
    let deny_first = builder(&exec)
        .listeners(vec![
            Arc::new(Fixed("d", Some(Decision::Deny))),
            Arc::new(Fixed("a", Some(Decision::Allow))),
        ])
        .build();
    let r = deny_first.submit(bash("frobnicate")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.by.as_str()),
        (Decision::Deny, "d")
    );
    assert_eq!(exec.runs(), 1);
}

#[tokio::test]
async fn default_waterfall_order_and_rules() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let p = builder(&exec).build();
    let r = p.submit(bash("git push --force origin")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage, r.ruling.rule.as_deref()),
        (
            Decision::Deny,
            Stage::Rules,
            Some("Bash(git push --force *)")
        )
    );
    assert_eq!(
        r.content,
        "denied: no force push (Bash(git push --force *))"
    );
    assert!(
        matches!(&r.ruling.source, Some(sbx::provenance::Provenance::Rule(s))
            if s.kind == sbx::policy::SourceKind::User && s.file == "user.toml")
    );
    let r = p.submit(bash("cargo test --all")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage),
        (Decision::Allow, Stage::Rules)
    );
    // Built-in deny rules decide in the managed-deny listener, before the rule set.
    let r = p.submit(bash("mkfs /dev/sda1")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage),
        (Decision::Deny, Stage::ManagedDeny)
    );
    assert_eq!(exec.runs(), 1);
}

// ---- guards ----

#[tokio::test]
async fn guards_run_only_when_allowed_including_approved_asks() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let n = Arc::new(AtomicUsize::new(0));
    let p = builder(&exec)
        .guard(Arc::new(CountingGuard("g", None, n.clone())))
        .approval(answer(ApprovalAnswer::AllowOnce))
        .build();
    p.submit(bash("cargo test")).await; // allowed by rule
    assert_eq!(n.load(Ordering::SeqCst), 1);
    let r = p.submit(bash("git push origin")).await; // ask, approved
    assert_eq!(r.ruling.decision, Decision::Allow);
    assert_eq!(n.load(Ordering::SeqCst), 2);
    p.submit(bash("git push --force x")).await; // denied: guards not consulted
    assert_eq!(n.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_guard_denial_is_final_and_guard_order_does_not_matter() {
    let n = Arc::new(AtomicUsize::new(0));
    let mk = |names: [(&'static str, Option<&'static str>); 3]| {
        let exec = Arc::new(FakeExecutor::ok(""));
        let mut b = builder(&exec);
        for (name, vote) in names {
            b = b.guard(Arc::new(CountingGuard(name, vote, n.clone())));
        }
        (b.build(), exec)
    };
    let (p1, e1) = mk([("a", None), ("b", Some("no b")), ("c", Some("no c"))]);
    let (p2, e2) = mk([("c", Some("no c")), ("b", Some("no b")), ("a", None)]);
    let r1 = p1.submit(bash("cargo test")).await;
    let r2 = p2.submit(bash("cargo test")).await;
    assert_eq!(r1.ruling, r2.ruling);
    assert_eq!(
        (r1.ruling.decision, r1.ruling.stage, r1.ruling.by.as_str()),
        (Decision::Deny, Stage::Guard, "b")
    );
    assert_eq!(e1.runs() + e2.runs(), 0);
}

// ---- approval ----

#[tokio::test]
async fn no_approval_channel_means_deny() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let r = builder(&exec).build().submit(bash("git push origin")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage),
        (Decision::Deny, Stage::Approval)
    );
    assert!(r.is_error && r.content.starts_with("denied: approval needed"));
    assert_eq!(exec.runs(), 0);
}

#[tokio::test]
async fn allow_once_is_not_remembered_and_deny_denies() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let asked = Arc::new(AtomicUsize::new(0));
    let a2 = asked.clone();
    let p = builder(&exec)
        .approval(Arc::new(CallbackApproval(move |_: &ApprovalRequest| {
            a2.fetch_add(1, Ordering::SeqCst);
            ApprovalAnswer::AllowOnce
        })))
        .build();
    p.submit(bash("git push origin")).await;
    p.submit(bash("git push origin")).await;
    assert_eq!((asked.load(Ordering::SeqCst), exec.runs()), (2, 2));
    let d = builder(&exec)
        .approval(answer(ApprovalAnswer::Deny(Some("not now".into()))))
        .build();
    let r = d.submit(bash("git push origin")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.reason.as_str()),
        (Decision::Deny, "not now")
    );
}

#[tokio::test]
async fn allow_for_session_covers_the_exact_call_in_that_session_only() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let asked = Arc::new(Mutex::new(Vec::<String>::new()));
    let a2 = asked.clone();
    let p = builder(&exec)
        .approval(Arc::new(CallbackApproval(move |req: &ApprovalRequest| {
            if let Ok(mut v) = a2.lock() {
                v.push(req.canonical.clone());
            }
            match req.scopes.first() {
                Some(s) => ApprovalAnswer::AllowForSession(s.clone()),
                None => ApprovalAnswer::Deny(None),
            }
        })))
        .build();
    p.submit(bash("git push origin")).await;
    let again = p.submit(bash("git push origin")).await;
    // An ask rule sits before session grants in the waterfall: it asks again.
    assert_eq!(again.ruling.stage, Stage::Approval);
    assert!(
        again
            .trace
            .iter()
            .any(|t| t.by == "rules" && t.outcome == "ask")
    );
    // Grants cover calls that fell through to the default ask.
    p.submit(edit("src/a.rs")).await;
    let r = p.submit(edit("src/a.rs")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage),
        (Decision::Allow, Stage::SessionGrant)
    );
    let other = p.submit(edit("src/b.rs")).await;
    assert_eq!(other.ruling.stage, Stage::Approval);
    let other_session = ToolCall::new(
        "c2",
        "Edit",
        serde_json::json!({"file_path": "src/a.rs"}),
        Caller {
            session: "s2".into(),
            agent: "a".into(),
        },
        WS,
    );
    assert_eq!(p.submit(other_session).await.ruling.stage, Stage::Approval);
}

#[tokio::test]
async fn a_session_grant_may_cover_one_mcp_server() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let p = builder(&exec)
        .approval(Arc::new(CallbackApproval(
            |req: &ApprovalRequest| match req
                .scopes
                .iter()
                .find(|s| matches!(s, GrantScope::McpServer(_)))
            {
                Some(s) => ApprovalAnswer::AllowForSession(s.clone()),
                None => ApprovalAnswer::Deny(None),
            },
        )))
        .build();
    p.submit(tool("mcp__gh__list", serde_json::json!({}))).await;
    let r = p
        .submit(tool("mcp__gh__create", serde_json::json!({"t": 1})))
        .await;
    assert_eq!(r.ruling.stage, Stage::SessionGrant);
    let r = p.submit(tool("mcp__db__drop", serde_json::json!({}))).await;
    assert_eq!(r.ruling.stage, Stage::Approval);
}

#[tokio::test]
async fn a_scope_that_was_not_offered_denies() {
    let exec = Arc::new(FakeExecutor::ok(""));
    let p = builder(&exec)
        .approval(answer(ApprovalAnswer::AllowForSession(
            GrantScope::McpServer("x".into()),
        )))
        .build();
    let r = p.submit(edit("src/a.rs")).await;
    assert_eq!(r.ruling.decision, Decision::Deny);
}

// ---- execute ----

#[tokio::test]
async fn timeout_wrapper_cancels_the_run() {
    let exec = Arc::new(FakeExecutor {
        delay: Some(Duration::from_secs(5)),
        ..FakeExecutor::default()
    });
    let p = builder(&exec)
        .wrapper(Arc::new(Timeout(Duration::from_millis(20))))
        .build();
    let r = p.submit(bash("cargo test")).await;
    assert!(
        r.is_error && r.content.contains("timed out"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn retry_only_failures_to_start() {
    let exec = Arc::new(FakeExecutor::ok("ok"));
    exec.spawn_failures.store(2, Ordering::SeqCst);
    let metrics = Arc::new(Metrics::default());
    let p = builder(&exec)
        .wrapper(Arc::new(MetricsWrapper(metrics.clone())))
        .wrapper(Arc::new(Retry {
            attempts: 3,
            backoff: Duration::from_millis(1),
        }))
        .build();
    let r = p.submit(bash("cargo test")).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(exec.runs(), 3);
    assert_eq!(metrics.runs.load(Ordering::SeqCst), 1);
    // A command that ran and failed is not retried.
    let failing = Arc::new(FakeExecutor {
        exit_status: 1,
        ..FakeExecutor::default()
    });
    let p = builder(&failing)
        .wrapper(Arc::new(Retry {
            attempts: 3,
            backoff: Duration::ZERO,
        }))
        .build();
    let r = p.submit(bash("cargo test")).await;
    assert!(r.is_error);
    assert_eq!(failing.runs(), 1);
}

#[tokio::test]
async fn the_executor_gets_the_frozen_call_and_the_profile_set() {
    let exec = Arc::new(FakeExecutor::ok(""));
    builder(&exec).build().submit(bash("cargo test -q")).await;
    let calls = exec.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0.argv, vec!["bash", "-c", "cargo test -q"]);
    assert_eq!(calls[0].1.get(), &profile_caps());
}

// ---- post-execute ----

struct Post(PostAction);
impl PostHandler for Post {
    fn name(&self) -> &str {
        "post"
    }
    fn handle(&self, _c: &ToolCall, _r: &CallResult) -> Result<PostAction, StageError> {
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn post_execute_accept_replace_and_block() {
    let exec = Arc::new(FakeExecutor::ok("secret output"));
    let run = |a: PostAction| {
        let p = builder(&exec).post(Arc::new(Post(a))).build();
        async move { p.submit(bash("cargo test")).await }
    };
    let r = run(PostAction::Accept).await;
    assert_eq!((r.content.as_str(), r.is_error), ("secret output", false));
    let r = run(PostAction::ReplaceContent("[redacted]".into())).await;
    assert_eq!(r.content, "[redacted]");
    let r = run(PostAction::ReplaceValue(serde_json::json!({"n": 1}))).await;
    assert_eq!(r.value, serde_json::json!({"n": 1}));
    let r = run(PostAction::Block("leak".into())).await;
    assert!(r.is_error && r.content.contains("blocked: leak"));
}

// ---- observers and error results ----

#[derive(Default)]
struct Seen(Mutex<Vec<(String, bool)>>);
impl Observer for Seen {
    fn on_call(&self, call: &ToolCall) {
        if let Ok(mut v) = self.0.lock() {
            v.push((format!("call {}", call.tool()), false));
        }
    }
    fn on_result(&self, call: &ToolCall, r: &CallResult) {
        if let Ok(mut v) = self.0.lock() {
            v.push((format!("result {}", call.tool()), r.is_error));
        }
    }
}

#[tokio::test]
async fn denials_unknown_tools_and_failures_are_error_results_seen_by_post_and_observers() {
    let exec = Arc::new(FakeExecutor {
        exit_status: 2,
        ..FakeExecutor::default()
    });
    let seen = Arc::new(Seen::default());
    let p = builder(&exec)
        .observer(seen.clone())
        .post(Arc::new(Post(PostAction::ReplaceValue(serde_json::json!(
            "post ran"
        )))))
        .build();
    let denied = p.submit(bash("git push --force x")).await;
    let unknown = p.submit(tool("Frobnicate", serde_json::json!({}))).await;
    let failed = p.submit(bash("cargo test")).await;
    for r in [&denied, &unknown, &failed] {
        assert!(r.is_error);
        assert_eq!(r.value, serde_json::json!("post ran"));
    }
    assert!(
        unknown.content.starts_with("denied: "),
        "{}",
        unknown.content
    );
    assert_eq!(seen.0.lock().map(|v| v.len()).unwrap_or(0), 6);
}

#[tokio::test]
async fn audit_log_writes_a_call_event_and_a_result_line() {
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut v) = self.0.lock() {
                v.extend_from_slice(b);
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let exec = Arc::new(FakeExecutor::ok("x"));
    let p = builder(&exec)
        .observer(Arc::new(AuditLog::new(Box::new(buf.clone()))))
        .build();
    p.submit(bash("git push --force x")).await;
    p.submit(bash("cargo test")).await;
    let text =
        String::from_utf8(buf.0.lock().map(|v| v.clone()).unwrap_or_default()).unwrap_or_default();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["event"], "call");
    assert_eq!(lines[0]["input"]["command"], "git push --force x");
    let deny = &lines[1];
    assert_eq!(
        (
            deny["event"].as_str(),
            deny["decision"].as_str(),
            deny["stage"].as_str()
        ),
        (Some("result"), Some("deny"), Some("rules"))
    );
    assert_eq!(deny["rule"], "Bash(git push --force *)");
    assert!(
        deny["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("user:"))
    );
    assert_eq!(deny["canonical"], "Bash(git push --force x)");
    assert_eq!(deny["call_id"], "c1");
    let ok = &lines[3];
    assert_eq!(
        (ok["decision"].as_str(), ok["exit_status"].as_i64()),
        (Some("allow"), Some(0))
    );
    assert_eq!(ok["enforcement"]["fake"], true);
    assert!(ok["duration_ms"].is_number() && ok["meta"]["category"] == "shell");
}

// ---- fail closed ----

#[tokio::test]
async fn a_failing_listener_denies_even_if_another_swallows_it() {
    for kind in ["panic", "error", "slow"] {
        let exec = Arc::new(FakeExecutor::ok(""));
        let p = builder(&exec)
            .listener_budget(Duration::from_millis(10))
            .listeners(vec![
                Arc::new(Swallow),
                Arc::new(Failing(kind)),
                Arc::new(Fixed("a", Some(Decision::Allow))),
            ])
            .build();
        let r = p.submit(bash("cargo test")).await;
        if kind == "slow" {
            // The slow listener does not fail on its own; the waterfall overran its budget.
            assert_eq!(r.ruling.decision, Decision::Deny, "{kind}: {:?}", r.ruling);
        } else {
            assert_eq!(
                (r.ruling.decision, r.ruling.by.as_str()),
                (Decision::Deny, "failing"),
                "{kind}"
            );
        }
        assert!(r.ruling.reason.contains("fail closed"));
        assert_eq!(exec.runs(), 0);
    }
}

#[tokio::test]
async fn a_failing_guard_denies() {
    for kind in ["panic", "error"] {
        let exec = Arc::new(FakeExecutor::ok(""));
        let n = Arc::new(AtomicUsize::new(0));
        let p = builder(&exec)
            .guard(Arc::new(CountingGuard("g", Some(kind), n)))
            .build();
        let r = p.submit(bash("cargo test")).await;
        assert_eq!(
            (r.ruling.decision, r.ruling.stage),
            (Decision::Deny, Stage::Guard),
            "{kind}"
        );
        assert_eq!(exec.runs(), 0);
    }
}

#[tokio::test]
async fn a_failing_approval_channel_denies() {
    struct Broken;
    impl ApprovalChannel for Broken {
        fn ask<'a>(
            &'a self,
            _r: &'a ApprovalRequest,
        ) -> BoxFuture<'a, Result<ApprovalAnswer, StageError>> {
            Box::pin(async { panic!("channel bug") })
        }
    }
    let exec = Arc::new(FakeExecutor::ok(""));
    let r = builder(&exec)
        .approval(Arc::new(Broken))
        .build()
        .submit(bash("git push x"))
        .await;
    assert_eq!(r.ruling.decision, Decision::Deny);
    assert_eq!(exec.runs(), 0);
}

/// A stage that never answers in time.
struct Hanging;
impl Listener for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }
    fn on_call(&self, _cx: &CallContext<'_>, _next: Next<'_>) -> Result<Ruling, StageError> {
        std::thread::sleep(Duration::from_secs(30));
        Ok(Ruling::new(
            Decision::Allow,
            Stage::Listener,
            "hanging",
            "too late",
        ))
    }
}
impl Guard for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }
    fn vote(&self, _cx: &CallContext<'_>) -> Result<Vote, StageError> {
        std::thread::sleep(Duration::from_secs(30));
        Ok(Vote::Abstain)
    }
}

#[tokio::test]
async fn a_listener_or_guard_that_hangs_denies_the_call() {
    let exec = Arc::new(FakeExecutor::ok("out"));
    let listener = builder(&exec)
        .listeners(vec![Arc::new(Hanging)])
        .listener_budget(Duration::from_millis(50))
        .build();
    let r = listener.submit(bash("git diff x")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.by.as_str()),
        (Decision::Deny, "timeout"),
        "{:?}",
        r.ruling
    );
    assert!(r.is_error);
    let guarded = builder(&exec)
        .guard(Arc::new(Hanging))
        .guard_budget(Duration::from_millis(50))
        .build();
    let r = guarded.submit(bash("git diff x")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.stage),
        (Decision::Deny, Stage::Guard),
        "{:?}",
        r.ruling
    );
    // The same calls without the hanging stages are allowed and run.
    let plain = builder(&exec).build();
    let r = plain.submit(bash("git diff x")).await;
    assert_eq!(r.ruling.decision, Decision::Allow);
    assert_eq!(exec.runs(), 1);
}

/// Hangs on the first call it sees, then passes every call on.
struct HangsOnce(AtomicUsize);
impl Listener for HangsOnce {
    fn name(&self) -> &str {
        "hangs-once"
    }
    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        if self.0.fetch_add(1, Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_secs(30));
        }
        next.decide(cx)
    }
}

#[tokio::test]
async fn a_hung_stage_holds_up_no_later_call() {
    let exec = Arc::new(FakeExecutor::ok("out"));
    let mut listeners = sbx::pipeline::default_listeners();
    listeners.insert(
        0,
        Arc::new(HangsOnce(AtomicUsize::new(0))) as Arc<dyn Listener>,
    );
    let p = builder(&exec)
        .listeners(listeners)
        .listener_budget(Duration::from_millis(100))
        .build();
    let r = p.submit(bash("git diff x")).await;
    assert_eq!(
        (r.ruling.decision, r.ruling.by.as_str()),
        (Decision::Deny, "timeout")
    );
    // The first stage still sleeps on its worker; the next calls get workers of their own.
    for _ in 0..3 {
        let start = std::time::Instant::now();
        let r = p.submit(bash("git diff x")).await;
        assert_eq!(r.ruling.decision, Decision::Allow, "{:?}", r.ruling);
        assert!(start.elapsed() < Duration::from_secs(5));
    }
    assert_eq!(exec.runs(), 3);
}
