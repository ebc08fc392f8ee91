//! Property tests of the invariant and of order-insensitivity and fail-closed behaviour.
#[path = "pipeline_common/mod.rs"]
mod common;
use common::*;
use proptest::prelude::*;
use sbx::capability::{CapabilitySet, Limits, NetworkMode};
use sbx::pipeline::*;
use sbx::policy::{self, SourceKind};
use std::sync::Arc;

fn rt() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => panic!("runtime: {e}"),
    }
}

/// A listener that answers with a fixed decision, narrowing to an arbitrary set.
struct Narrowing(Decision, CapabilitySet);
impl Listener for Narrowing {
    fn name(&self) -> &str {
        "narrowing"
    }
    fn on_call(&self, _cx: &CallContext<'_>, _next: Next<'_>) -> Result<Ruling, StageError> {
        Ok(Ruling::new(self.0, Stage::Listener, "narrowing", "test").narrowed(self.1.clone()))
    }
}

#[derive(Clone, Debug)]
enum Step {
    Pass,
    Decide(Decision),
    Panic,
    Error,
}
struct Scripted(usize, Step);
impl Listener for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn on_call(&self, cx: &CallContext<'_>, next: Next<'_>) -> Result<Ruling, StageError> {
        match &self.1 {
            Step::Pass => next.decide(cx),
            Step::Decide(d) => Ok(Ruling::new(
                *d,
                Stage::Listener,
                "scripted",
                format!("#{}", self.0),
            )),
            Step::Panic => panic!("scripted panic"),
            Step::Error => Err(StageError::failed("listener", "scripted", "scripted error")),
        }
    }
}

#[derive(Clone, Debug)]
enum GVote {
    Abstain,
    Deny(u8),
    Panic,
    Error,
}
struct G(String, GVote);
impl Guard for G {
    fn name(&self) -> &str {
        &self.0
    }
    fn vote(&self, _cx: &CallContext<'_>) -> Result<Vote, StageError> {
        match self.1 {
            GVote::Abstain => Ok(Vote::Abstain),
            GVote::Deny(n) => Ok(Vote::Deny(format!("reason {n}"))),
            GVote::Panic => panic!("guard panic"),
            GVote::Error => Err(StageError::failed("guard", &self.0, "guard error")),
        }
    }
}

fn decision() -> impl Strategy<Value = Decision> {
    prop_oneof![
        Just(Decision::Allow),
        Just(Decision::Ask),
        Just(Decision::Deny)
    ]
}

fn caps() -> impl Strategy<Value = CapabilitySet> {
    let paths = prop::collection::vec(
        prop::sample::select(vec![
            "/",
            "/usr",
            "/tmp",
            WS,
            "/etc",
            "/nonexistent-sbx-test/ws/src",
            HOME,
        ]),
        0..4,
    );
    (
        paths.clone(),
        paths.clone(),
        paths,
        0..4u8,
        prop::option::of(1u64..100_000),
        any::<bool>(),
        prop::sample::subsequence(HOSTS, 0..HOSTS.len()),
        prop::sample::subsequence(HOSTS, 0..HOSTS.len()),
    )
        .prop_map(|(r, w, d, net, t, pid, allow, deny)| {
            let mut c = profile_caps();
            c.fs.read = r.into_iter().map(entry).collect();
            c.fs.write = w.into_iter().map(entry).collect();
            c.fs.deny_read = d.into_iter().map(entry).collect();
            c.network = match net {
                0 => NetworkMode::None,
                1 => NetworkMode::Loopback,
                2 => NetworkMode::Proxy,
                _ => NetworkMode::Host,
            };
            let rule = |h: &&str| {
                sbx::proxy::parse_host_rule(h, sbx::capability::Origin::builtin("prop"))
                    .unwrap_or_else(|e| panic!("{e}"))
            };
            c.net_rules.allow = allow.iter().map(rule).collect();
            c.net_rules.deny = deny.iter().map(rule).collect();
            c.limits = Limits {
                timeout_ms: t,
                ..Limits::default()
            };
            c.isolation.pid = pid;
            c.env.pass = vec!["PATH".into(), "SECRET".into()];
            c
        })
}

const HOSTS: &[&str] = &["a.org", "*.b.org", "c.org:443", "d.org"];

const POOL: &[&str] = &[
    "Bash(git *)",
    "Bash(git push *)",
    "Bash(cargo test *)",
    "Bash(*)",
    "Bash",
    "Edit(src/**)",
    "Edit",
    "Read",
    "Read(~/.ssh/**)",
    "WebFetch(domain:example.com)",
    "mcp__gh",
    "Bash(rm -rf *)",
    "Edit(*.lock)",
];

fn calls() -> Vec<ToolCall> {
    vec![
        bash("git push origin"),
        bash("cargo test --all"),
        bash("rm -rf build"),
        edit("src/a.rs"),
        edit("Cargo.lock"),
        edit(".env"),
        tool("Read", serde_json::json!({"file_path": "~/.ssh/id_rsa"})),
        tool(
            "WebFetch",
            serde_json::json!({"url": "https://example.com"}),
        ),
        tool("mcp__gh__list", serde_json::json!({})),
        tool("Mystery", serde_json::json!({})),
    ]
}

fn rules_text(rules: &[(usize, u8)]) -> String {
    let list = |k: u8| {
        rules
            .iter()
            .filter(|r| r.1 == k)
            .map(|r| format!("{:?}", POOL[r.0]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "[policy]\nallow = [{}]\nask = [{}]\ndeny = [{}]\n",
        list(0),
        list(1),
        list(2)
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever listeners decide and whatever narrowing they ask for, the executor gets a subset of the profile's set.
    #[test]
    fn enforced_set_is_a_subset_of_the_profile(profile in caps(), narrow in caps(), d in decision(), call in 0..10usize) {
        let exec = Arc::new(FakeExecutor::ok(""));
        let p = Pipeline::builder(Arc::new(policy_of(&[])), ProfileCaps::new(profile.clone()))
            .executor(exec.clone())
            .insert_listener(0, Arc::new(Narrowing(d, narrow)))
            .approval(Arc::new(CallbackApproval(|_: &ApprovalRequest| ApprovalAnswer::AllowOnce)))
            .build();
        let _ = rt().block_on(p.submit(calls()[call].clone()));
        for (_, caps) in exec.calls.lock().map(|c| c.clone()).unwrap_or_default() {
            prop_assert!(caps.get().is_subset_of(&profile));
        }
    }

    /// The order of rule sources (and of rules within them) never changes a decision or its reported rule.
    #[test]
    fn rule_source_order_never_changes_a_decision(
        rules in prop::collection::vec((0..POOL.len(), 0..3u8, 0..3u8), 0..12),
        mode in prop::sample::select(vec![Mode::Default, Mode::Plan, Mode::AcceptEdits, Mode::SandboxAuto, Mode::Bypass]),
    ) {
        let kinds = [SourceKind::User, SourceKind::Profile, SourceKind::File];
        let split = |rules: &[(usize, u8, u8)], order: &[usize]| -> Vec<(SourceKind, String)> {
            order.iter().map(|&k| {
                let mine: Vec<(usize, u8)> = rules.iter().filter(|r| r.2 as usize == k).map(|r| (r.0, r.1)).collect();
                (kinds[k], rules_text(&mine))
            }).collect()
        };
        let build = |srcs: Vec<(SourceKind, String)>| {
            let sources = srcs.iter().map(|(k, t)| source(*k, t)).collect();
            policy::merge(sources, &env()).map(Arc::new).map_err(|e| e.to_string())
        };
        let mut reversed_rules = rules.clone();
        reversed_rules.reverse();
        let a = build(split(&rules, &[0, 1, 2]));
        let b = build(split(&reversed_rules, &[2, 0, 1]));
        prop_assert!(a.is_ok() && b.is_ok());
        let (Ok(a), Ok(b)) = (a, b) else { unreachable!() };
        for call in calls() {
            let ra = check(&call, a.clone(), mode, &profile_caps(), EnforcementOutlook::default());
            let rb = check(&call, b.clone(), mode, &profile_caps(), EnforcementOutlook::default());
            prop_assert_eq!(ra, rb);
        }
    }

    /// Guard order never changes a decision; any failing guard denies.
    #[test]
    fn guard_order_never_changes_a_decision(votes in prop::collection::vec(prop_oneof![
        Just(GVote::Abstain), (0..3u8).prop_map(GVote::Deny), Just(GVote::Panic), Just(GVote::Error)], 0..5), seed in any::<u64>()) {
        let guards: Vec<G> = votes.iter().enumerate().map(|(i, v)| G(format!("g{i}"), v.clone())).collect();
        let mut shuffled: Vec<usize> = (0..guards.len()).collect();
        // Deterministic shuffle from the seed.
        let mut s = seed;
        for i in (1..shuffled.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (s >> 33) as usize % (i + 1));
        }
        let run = |order: &[usize]| {
            let exec = Arc::new(FakeExecutor::ok(""));
            let mut b = Pipeline::builder(Arc::new(policy_of(&[(SourceKind::User, "[policy]\nallow = [\"Bash(cargo test *)\"]\n")])), ProfileCaps::new(profile_caps())).executor(exec.clone());
            for &i in order {
                b = b.guard(Arc::new(G(guards[i].0.clone(), guards[i].1.clone())));
            }
            let r = rt().block_on(b.build().submit(bash("cargo test")));
            (r.ruling, exec.runs())
        };
        let natural: Vec<usize> = (0..guards.len()).collect();
        let (r1, n1) = run(&natural);
        let (r2, n2) = run(&shuffled);
        prop_assert_eq!(&r1, &r2);
        prop_assert_eq!(n1, n2);
        let any_fail_or_deny = votes.iter().any(|v| !matches!(v, GVote::Abstain));
        prop_assert_eq!(r1.decision == Decision::Deny, any_fail_or_deny);
        prop_assert_eq!(n1 == 0, any_fail_or_deny);
    }

    /// Any failing listener, wherever it sits, denies the call.
    #[test]
    fn any_failing_listener_denies(
        steps in prop::collection::vec(prop_oneof![Just(Step::Pass), decision().prop_map(Step::Decide)], 0..5),
        fail_at in 0..6usize,
        panic in any::<bool>(),
    ) {
        let mut listeners: Vec<Arc<dyn Listener>> = steps.iter().enumerate().map(|(i, s)| Arc::new(Scripted(i, s.clone())) as Arc<dyn Listener>).collect();
        let at = fail_at.min(listeners.len());
        // The failure only counts if the waterfall reaches it.
        let reached = steps[..at].iter().all(|s| matches!(s, Step::Pass));
        listeners.insert(at, Arc::new(Scripted(99, if panic { Step::Panic } else { Step::Error })));
        let exec = Arc::new(FakeExecutor::ok(""));
        let p = Pipeline::builder(Arc::new(policy_of(&[])), ProfileCaps::new(profile_caps()))
            .executor(exec.clone())
            .listeners(listeners)
            .approval(Arc::new(CallbackApproval(|_: &ApprovalRequest| ApprovalAnswer::AllowOnce)))
            .build();
        let r = rt().block_on(p.submit(bash("cargo test")));
        if reached {
            prop_assert_eq!(r.ruling.decision, Decision::Deny);
            prop_assert_eq!(exec.runs(), 0);
        }
    }
}
