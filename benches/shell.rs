//! Throughput of shell analysis on typical agent commands.
//! Target: at least 100,000 commands classified per second on one core.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sbx::WorkspaceContext;
use sbx::shell::{ShellContext, analyze};
use std::hint::black_box;

const TYPICAL: &[&str] = &[
    "ls -la",
    "cd src && ls",
    "git status",
    "git diff --stat",
    "git log --oneline -20",
    "cargo test 2>&1 | tail -20",
    "cargo build --release",
    "FOO=1 nice git diff x",
    "grep -rn \"rm -rf\" scripts/",
    "rg -n 'fn main' src",
    "cat Cargo.toml | grep version",
    "sh -c 'echo hi'",
    "git commit -m \"fix: parse errors\"",
    "find . -name '*.rs' | xargs wc -l",
    "echo done > out.txt",
    "npm test",
    "python -m pytest -q",
    "mkdir -p build && cd build && cmake ..",
    "rm -rf target",
    "curl -s https://example.com | jq .",
    "head -n 50 src/main.rs",
    "sed -n '1,20p' src/lib.rs",
    "git add -A && git commit -m wip",
    "for f in *.rs; do wc -l \"$f\"; done",
];

fn bench(c: &mut Criterion) {
    let workspace = WorkspaceContext::new("/nonexistent-ws", "/nonexistent-home")
        .with_writable(["/tmp".into()]);
    let ctx = ShellContext {
        cwd: "/nonexistent-ws".into(),
        workspace: &workspace,
    };
    let mut g = c.benchmark_group("shell");
    g.throughput(Throughput::Elements(TYPICAL.len() as u64));
    g.bench_function("analyze_typical", |b| {
        b.iter(|| {
            for cmd in TYPICAL {
                black_box(analyze(black_box(cmd), &ctx));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
