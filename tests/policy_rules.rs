//! Rule semantics: deny > ask > allow regardless of order and source, per-segment Bash matching.
#[path = "pipeline_common/mod.rs"]
mod common;
use common::*;
use sbx::pipeline::Decision;
use sbx::policy::{self, PathFamily, SourceKind, Target};
use sbx::shell::{Analysis, Class, Segment};
use std::path::Path;

fn seg(text: &str, verdict: Decision) -> Segment {
    Segment {
        text: text.into(),
        argv: text.split(' ').map(String::from).collect(),
        class: Class::Opaque,
        verdict,
        reason: "test".into(),
        writes: vec![],
        reads: vec![],
        trees: vec![],
        links: vec![],
        write_patterns: vec![],
        read_patterns: vec![],
        findings: vec![],
        via: String::new(),
    }
}

fn analysis(segs: Vec<Segment>) -> Analysis {
    let verdict = segs
        .iter()
        .map(|s| s.verdict)
        .max()
        .unwrap_or(Decision::Ask);
    Analysis {
        segments: segs,
        verdict,
        reason: "test".into(),
        deciding_segment: None,
    }
}

fn eval(p: &policy::Policy, segs: Vec<Segment>) -> Option<Decision> {
    policy::bash::evaluate(p, &analysis(segs), sbx::Mode::Default).map(|r| r.decision)
}

const RULES: &str = "[policy]\nallow = [\"Bash(git *)\", \"Bash(cargo test *)\"]\nask = [\"Bash(git push *)\"]\ndeny = [\"Bash(git push --force *)\"]\n";

#[test]
fn deny_beats_ask_beats_allow() {
    let p = policy_of(&[(SourceKind::User, RULES)]);
    assert_eq!(
        eval(&p, vec![seg("git status", Decision::Ask)]),
        Some(Decision::Allow)
    );
    assert_eq!(
        eval(&p, vec![seg("git push origin", Decision::Ask)]),
        Some(Decision::Ask)
    );
    assert_eq!(
        eval(&p, vec![seg("git push --force origin", Decision::Ask)]),
        Some(Decision::Deny)
    );
}

#[test]
fn nothing_matched_passes_on_and_defaults_to_ask() {
    let p = policy_of(&[(SourceKind::User, RULES)]);
    assert_eq!(eval(&p, vec![seg("frobnicate", Decision::Ask)]), None);
    // Whole pipeline in default mode: an edit nothing matches is asked.
    let r = sbx::pipeline::check(
        &edit("src/a.rs"),
        std::sync::Arc::new(p),
        sbx::pipeline::Mode::Default,
        &profile_caps(),
        Default::default(),
    );
    assert_eq!((r.decision, r.stage), (Decision::Ask, "default"));
}

#[test]
fn deny_in_any_source_wins_regardless_of_source_order() {
    let user = (SourceKind::User, "[policy]\nallow = [\"Bash(make *)\"]\n");
    let project = (
        SourceKind::Project,
        "[policy]\ndeny = [\"Bash(make install *)\"]\n",
    );
    for order in [vec![user, project], vec![project, user]] {
        let p = policy_of(&order);
        assert_eq!(
            eval(&p, vec![seg("make install", Decision::Ask)]),
            Some(Decision::Deny)
        );
        assert_eq!(
            eval(&p, vec![seg("make all", Decision::Ask)]),
            Some(Decision::Allow)
        );
    }
}

#[test]
fn compound_allowed_only_if_every_segment_is() {
    let p = policy_of(&[(SourceKind::User, RULES)]);
    assert_eq!(
        eval(
            &p,
            vec![
                seg("git status", Decision::Ask),
                seg("cargo test", Decision::Ask)
            ]
        ),
        Some(Decision::Allow)
    );
    assert_eq!(
        eval(
            &p,
            vec![seg("git status", Decision::Ask), seg("rm x", Decision::Ask)]
        ),
        None
    );
    // A harmless segment (analyser Allow) does not need a rule.
    assert_eq!(
        eval(
            &p,
            vec![
                seg("git status", Decision::Ask),
                seg("echo hi", Decision::Allow)
            ]
        ),
        Some(Decision::Allow)
    );
    // Any segment matching deny denies the whole command.
    assert_eq!(
        eval(
            &p,
            vec![
                seg("cargo test", Decision::Ask),
                seg("git push --force x", Decision::Ask)
            ]
        ),
        Some(Decision::Deny)
    );
}

#[test]
fn analyser_deny_is_never_lifted_but_ask_is() {
    let p = policy_of(&[(
        SourceKind::User,
        "[policy]\nallow = [\"Bash\", \"Bash(curl *)\"]\n",
    )]);
    assert_eq!(
        eval(&p, vec![seg("curl x", Decision::Deny)]),
        Some(Decision::Deny)
    );
    assert_eq!(
        eval(&p, vec![seg("curl x", Decision::Ask)]),
        Some(Decision::Allow)
    );
}

#[test]
fn bash_writes_are_judged_by_edit_rules() {
    let p = policy_of(&[(
        SourceKind::User,
        "[policy]\nallow = [\"Bash(echo *)\"]\ndeny = [\"Edit(secrets/**)\"]\n",
    )]);
    let mut s = seg("echo x", Decision::Ask);
    s.writes = vec![format!("{WS}/secrets/k").into()];
    assert_eq!(eval(&p, vec![s]), Some(Decision::Deny));
}

#[test]
fn claude_code_forms() {
    let p = policy_of(&[(
        SourceKind::User,
        "[policy]\nallow = [\"Read(src/**)\", \"Edit(//tmp/out/**)\", \"WebFetch(domain:*.example.com)\", \"mcp__gh\", \"mcp__db__query\"]\ndeny = [\"Read(~/.aws/**)\", \"Edit(*.lock)\"]\n",
    )]);
    fn read(path: &str) -> Target<'_> {
        Target::Path {
            tool: "Read",
            family: PathFamily::Read,
            path: Path::new(path),
        }
    }
    fn write(path: &str) -> Target<'_> {
        Target::Path {
            tool: "Write",
            family: PathFamily::Edit,
            path: Path::new(path),
        }
    }
    fn found(p: &policy::Policy, d: Decision, t: Target<'_>) -> Option<String> {
        p.find(d, &t, sbx::Mode::Default).map(|r| r.text.clone())
    }
    assert_eq!(
        found(&p, Decision::Allow, read(&format!("{WS}/src/a/b.rs"))),
        Some("Read(src/**)".into())
    );
    assert_eq!(
        found(&p, Decision::Allow, read(&format!("{WS}/docs/a.md"))),
        None
    );
    assert_eq!(
        found(
            &p,
            Decision::Deny,
            read(&format!("{HOME}/.aws/credentials"))
        ),
        Some("Read(~/.aws/**)".into())
    );
    assert_eq!(
        found(&p, Decision::Allow, write("/tmp/out/x")),
        Some("Edit(//tmp/out/**)".into())
    );
    assert_eq!(
        found(&p, Decision::Deny, write(&format!("{WS}/deep/Cargo.lock"))),
        Some("Edit(*.lock)".into())
    );
    assert_eq!(
        found(
            &p,
            Decision::Allow,
            Target::Domain {
                tool: "WebFetch",
                host: "api.example.com"
            }
        ),
        Some("WebFetch(domain:*.example.com)".into())
    );
    assert_eq!(
        found(
            &p,
            Decision::Allow,
            Target::Domain {
                tool: "WebFetch",
                host: "example.org"
            }
        ),
        None
    );
    assert_eq!(
        found(
            &p,
            Decision::Allow,
            Target::Mcp {
                server: "gh",
                tool: "create_issue"
            }
        ),
        Some("mcp__gh".into())
    );
    assert_eq!(
        found(
            &p,
            Decision::Allow,
            Target::Mcp {
                server: "db",
                tool: "query"
            }
        ),
        Some("mcp__db__query".into())
    );
    assert_eq!(
        found(
            &p,
            Decision::Allow,
            Target::Mcp {
                server: "db",
                tool: "drop"
            }
        ),
        None
    );
}

#[test]
fn reported_rule_does_not_depend_on_rule_order() {
    let a = "[policy]\ndeny = [\"Bash(rm *)\", \"Bash(rm -rf *)\"]\n";
    let b = "[policy]\ndeny = [\"Bash(rm -rf *)\", \"Bash(rm *)\"]\n";
    let pa = policy_of(&[(SourceKind::User, a)]);
    let pb = policy_of(&[(SourceKind::User, b)]);
    let ra = policy::bash::evaluate(
        &pa,
        &analysis(vec![seg("rm -rf x", Decision::Ask)]),
        sbx::Mode::Default,
    )
    .and_then(|r| r.rule.map(|r| r.text.clone()));
    let rb = policy::bash::evaluate(
        &pb,
        &analysis(vec![seg("rm -rf x", Decision::Ask)]),
        sbx::Mode::Default,
    )
    .and_then(|r| r.rule.map(|r| r.text.clone()));
    assert_eq!(ra, rb);
    assert!(ra.is_some());
}

#[test]
fn floor_raises_writes() {
    let f = WorkspaceContext::new(WS, HOME).with_writable(["/tmp".into()]);
    let d = |p: &str| policy::floor_for_write(Path::new(p), &f).map(|h| h.decision);
    assert_eq!(d(&format!("{WS}/src/main.rs")), None);
    assert_eq!(d("/tmp/x"), None);
    assert_eq!(d("/dev/null"), None);
    assert_eq!(d("/dev/shm/x"), None);
    assert_eq!(d("/dev/sda"), Some(Decision::Deny));
    assert_eq!(d("/etc/passwd"), Some(Decision::Deny));
    assert_eq!(d(&format!("{WS}/.git/config")), Some(Decision::Ask));
    assert_eq!(
        d(&format!("{WS}/.git/hooks/pre-commit")),
        Some(Decision::Deny)
    );
    assert_eq!(
        d(&format!("{WS}/.github/workflows/ci.yml")),
        Some(Decision::Ask)
    );
    assert_eq!(d(&format!("{WS}/.env")), Some(Decision::Ask));
    assert_eq!(d(&format!("{WS}/app/.env.production")), Some(Decision::Ask));
    assert_eq!(d(&format!("{HOME}/.ssh/config")), Some(Decision::Ask));
    assert_eq!(
        d(&format!("{HOME}/.ssh/authorized_keys")),
        Some(Decision::Deny)
    );
    assert_eq!(d(&format!("{WS}/keys/id_rsa.pub")), Some(Decision::Ask));
    assert_eq!(d(&format!("{HOME}/.bashrc")), Some(Decision::Deny));
    assert_eq!(d(&format!("{WS}/.bashrc")), Some(Decision::Ask));
    assert_eq!(d(&format!("{HOME}/notes.txt")), Some(Decision::Ask));
    assert_eq!(d("/etc/passwd"), Some(Decision::Deny));
    assert_eq!(d(&format!("{WS}/.sbx/policy.toml")), Some(Decision::Ask));
}

/// A segment whose command runs under a wrapper: `text` is the unwrapped command.
fn wrapped(full: &str, inner: &str) -> Segment {
    Segment {
        argv: full.split(' ').map(String::from).collect(),
        ..seg(inner, Decision::Ask)
    }
}

#[test]
fn wrappers_are_matched_by_deny_and_must_match_allow_too() {
    let deny = policy_of(&[(SourceKind::User, "[policy]\ndeny = [\"Bash(sudo *)\"]\n")]);
    assert_eq!(
        eval(
            &deny,
            vec![wrapped("sudo apt-get install x", "apt-get install x")]
        ),
        Some(Decision::Deny)
    );
    let allow = policy_of(&[(
        SourceKind::User,
        "[policy]\nallow = [\"Bash(apt-get install *)\"]\n",
    )]);
    // The bare command is allowed; under sudo the allow rule alone does not reach it.
    assert_eq!(
        eval(&allow, vec![seg("apt-get install x", Decision::Ask)]),
        Some(Decision::Allow)
    );
    assert_eq!(
        eval(
            &allow,
            vec![wrapped("sudo apt-get install x", "apt-get install x")]
        ),
        None
    );
}
