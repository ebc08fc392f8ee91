//! A Bash decision against a 1,000-rule policy. Target: median <= 5 us, p99 <= 50 us.
//!
//! Criterion measures the mean/median; a direct sample of single decisions
//! prints the median and p99 as well.
use criterion::Criterion;
use sbx::WorkspaceContext;
use sbx::capability::{
    CapabilitySet, EnvFilter, FsCaps, Isolation, Limits, NetworkMode, Origin, PathEntry,
};
use sbx::pipeline::{Caller, Pipeline, ProfileCaps, ToolCall};
use sbx::policy::{self, SourceKind};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const WS: &str = "/nonexistent-sbx-bench/ws";

fn policy_text(n: usize) -> String {
    let tools = [
        "git", "cargo", "npm", "make", "docker", "kubectl", "python", "go", "rustup", "pip",
    ];
    let mut lists = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..n {
        let t = tools[i % tools.len()];
        let rule = match i % 5 {
            0 => format!("Bash({t} sub{i} *)"),
            1 => format!("Bash({t} --flag{i}:*)"),
            2 => format!("Bash(tool{i} * x{i})"),
            3 => format!("Edit(dir{i}/**)"),
            _ => format!("Read(~/secret{i}/**)"),
        };
        lists[i % 3].push(format!("{rule:?}"));
    }
    lists[0].push("\"Bash(git diff *)\"".into());
    format!(
        "[policy]\nallow = [{}]\nask = [{}]\ndeny = [{}]\n",
        lists[0].join(","),
        lists[1].join(","),
        lists[2].join(",")
    )
}

fn pipeline() -> Pipeline {
    let env = WorkspaceContext::new(WS, "/nonexistent-sbx-bench/home");
    let src = policy::parse_policy_file(&policy_text(1000), SourceKind::User, "bench.toml", &env);
    let policy = match src.and_then(|s| policy::merge(vec![s], &env)) {
        Ok(p) => p,
        Err(e) => panic!("bench policy: {e}"),
    };
    assert!(policy.rules().len() >= 1000);
    let entry = |p: &str| PathEntry {
        path: p.into(),
        required: false,
        origin: Origin::builtin("bench"),
    };
    let caps = CapabilitySet {
        fs: FsCaps {
            read: vec![entry("/usr"), entry(WS)],
            write: vec![entry(WS)],
            ..FsCaps::default()
        },
        network: NetworkMode::None,
        net_rules: Default::default(),
        limits: Limits::default(),
        isolation: Isolation::default(),
        env: EnvFilter::default(),
        extra_denied_syscalls: vec![],
        requires: vec![],
        origins: Default::default(),
    };
    Pipeline::builder(Arc::new(policy), ProfileCaps::new(caps)).build()
}

fn percentiles(p: &Pipeline, call: &ToolCall) {
    let mut samples: Vec<u128> = (0..20_000)
        .map(|_| {
            let t = Instant::now();
            black_box(p.decide(black_box(call)));
            t.elapsed().as_nanos()
        })
        .collect();
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "bash decision, 1000 rules, `{}`, {} samples: median {:.2} us, p99 {:.2} us, max {:.2} us",
        call.input()["command"].as_str().unwrap_or_default(),
        samples.len(),
        at(0.5) as f64 / 1000.0,
        at(0.99) as f64 / 1000.0,
        at(1.0) as f64 / 1000.0
    );
}

fn main() {
    let p = pipeline();
    let caller = Caller {
        session: "s".into(),
        agent: "a".into(),
    };
    let hit = ToolCall::bash("b1", "git diff HEAD~1", caller.clone(), WS);
    let miss = ToolCall::bash("b2", "frobnicate --all", caller.clone(), WS);
    // Path arguments: each is resolved and compared with the profile's plan.
    let paths = ToolCall::bash(
        "b3",
        "cat src/main.rs ~/.config/x ../ws/Cargo.toml",
        caller,
        WS,
    );
    percentiles(&p, &hit);
    percentiles(&p, &miss);
    percentiles(&p, &paths);
    let mut c = Criterion::default().configure_from_args();
    c.bench_function("bash decision, 1000 rules, allow rule matches", |b| {
        b.iter(|| black_box(p.decide(black_box(&hit))))
    });
    c.bench_function("bash decision, 1000 rules, nothing matches", |b| {
        b.iter(|| black_box(p.decide(black_box(&miss))))
    });
    c.final_summary();
}
