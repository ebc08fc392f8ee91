//! Loading policies: TOML shape, errors naming file, line and rule, examples, sources.
#[path = "pipeline_common/mod.rs"]
mod common;
use common::*;
use sbx::pipeline::{Decision, Mode};
use sbx::policy::{self, PolicyError, SourceKind};

fn load(text: &str, kind: SourceKind) -> Result<policy::PolicySource, PolicyError> {
    policy::parse_policy_file(text, kind, "p.toml", &env())
}

#[test]
fn rules_load_with_source_and_line() {
    let s = load("[policy]\nallow = [\n  \"Bash(git diff *)\",\n  { rule = \"Read(src/**)\", reason = \"code\" },\n]\n", SourceKind::User)
        .map_err(|e| e.to_string());
    let s = s.as_ref().map(|s| {
        s.rules
            .iter()
            .map(|r| (r.text.clone(), r.source.line, r.reason.clone()))
            .collect::<Vec<_>>()
    });
    assert_eq!(
        s,
        Ok(vec![
            ("Bash(git diff *)".to_string(), 3, None),
            ("Read(src/**)".to_string(), 4, Some("code".to_string()))
        ])
    );
}

#[test]
fn bad_rule_names_file_line_and_rule() {
    let e = load("[policy]\n\ndeny = [\"Bash(git push\"]\n", SourceKind::User)
        .err()
        .map(|e| e.to_string());
    let e = e.unwrap_or_default();
    assert!(e.contains("p.toml:3"), "{e}");
    assert!(e.contains("Bash(git push"), "{e}");
}

#[test]
fn unknown_keys_are_errors_with_line() {
    let e = load("[policy]\nallow = []\nalow = []\n", SourceKind::User)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("p.toml:3") && e.contains("policy.alow"), "{e}");
    let e = load("[other]\n", SourceKind::User)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("unknown key `other`"), "{e}");
    let e = load("[policy.examples]\nmust_pass = []\n", SourceKind::User)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("policy.examples.must_pass"), "{e}");
    let e = load(
        "[[policy.hooks]]\ncommand = [\"x\"]\ntimeout = 3\n",
        SourceKind::User,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(
        e.contains("policy.hooks.timeout") && e.contains(":3"),
        "{e}"
    );
}

#[test]
fn invalid_toml_names_the_line() {
    let e = load("[policy]\nallow = [\n\"x\"\n,,]\n", SourceKind::User)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.starts_with("p.toml:4"), "{e}");
}

#[test]
fn profile_policy_table_ignores_other_tables_but_not_unknown_policy_keys() {
    let text = "[filesystem]\nread = [\"/usr\"]\n\n[policy]\nallow = [\"Bash(cargo test *)\"]\n";
    let s =
        policy::parse_profile_policy(text, "profiles/x.toml", &env()).map_err(|e| e.to_string());
    assert_eq!(
        s.map(|s| (s.rules.len(), s.rules[0].source.line, s.kind)),
        Ok((1, 5, SourceKind::Profile))
    );
    let bad = policy::parse_profile_policy("[policy]\nfoo = 1\n", "x.toml", &env());
    assert!(matches!(bad, Err(PolicyError::UnknownKey { .. })));
}

#[test]
fn failing_example_prevents_loading() {
    let text =
        "[policy]\nallow = [\"Bash(git diff *)\"]\n[policy.examples]\nmust_deny = [\"git diff\"]\n";
    let s = load(text, SourceKind::User).map_err(|e| e.to_string());
    let r = s.and_then(|s| policy::merge(vec![s], &env()).map_err(|e| e.to_string()));
    let e = r.err().unwrap_or_default();
    assert!(
        e.contains("p.toml:4") && e.contains("git diff") && e.contains("must be deny"),
        "{e}"
    );
}

#[test]
fn passing_examples_load() {
    let text = "[policy]\nallow = [\"Bash(git diff *)\"]\ndeny = [\"Bash(git push --force *)\"]\nask = [\"Bash(git push *)\"]\n[policy.examples]\nmust_allow = [\"git diff\"]\nmust_ask = [\"git push origin\"]\nmust_deny = [\"git push --force origin\"]\n";
    let r = load(text, SourceKind::User)
        .map_err(|e| e.to_string())
        .and_then(|s| policy::merge(vec![s], &env()).map_err(|e| e.to_string()));
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn every_builtin_profile_policy_loads_and_passes_its_examples() {
    for name in policy::PROFILE_POLICIES {
        let text = policy::profile_policy(name).unwrap_or_default();
        let file = format!("profiles/policy/{name}.toml");
        let s = policy::parse_profile_policy(text, &file, &env());
        let r = s.map_err(|e| e.to_string()).and_then(|s| {
            assert!(!s.examples.is_empty(), "{name} has no examples");
            policy::merge(vec![s], &env()).map_err(|e| e.to_string())
        });
        assert!(r.is_ok(), "{name}: {r:?}");
    }
    assert!(policy::profile_policy("nope").is_none());
}

#[test]
fn project_policy_may_not_loosen_mode_or_add_hooks() {
    assert!(matches!(
        load("[policy]\nmode = \"bypass\"\n", SourceKind::Project),
        Err(PolicyError::NotPermitted { .. })
    ));
    assert!(load("[policy]\nmode = \"plan\"\n", SourceKind::Project).is_ok());
    assert!(load("[policy]\nmode = \"bypass\"\n", SourceKind::User).is_ok());
    assert!(matches!(
        load(
            "[[policy.hooks]]\ncommand = [\"./x\"]\n",
            SourceKind::Project
        ),
        Err(PolicyError::NotPermitted { .. })
    ));
    assert!(matches!(
        load("[policy]\nmode = \"fast\"\n", SourceKind::User),
        Err(PolicyError::UnknownMode { .. })
    ));
    // A rule's modes: mode names, at least one.
    assert!(matches!(
        load(
            "[policy]\nask = [{ rule = \"Edit\", modes = [\"fast\"] }]\n",
            SourceKind::User
        ),
        Err(PolicyError::UnknownMode { .. })
    ));
    let e = load(
        "[policy]\nask = [{ rule = \"Edit\", modes = [] }]\n",
        SourceKind::User,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(e.contains("p.toml:2") && e.contains("non-empty"), "{e}");
    let e = load(
        "[policy]\nask = [{ rule = \"Edit\", modes = \"default\" }]\n",
        SourceKind::User,
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(e.contains("p.toml:2"), "{e}");
    let ok = load(
        "[policy]\nask = [{ rule = \"Edit\", modes = [\"default\", \"plan\"] }]\n",
        SourceKind::User,
    )
    .map(|s| s.rules[0].modes.clone())
    .map_err(|e| e.to_string());
    assert_eq!(ok, Ok(Some(vec![Mode::Default, Mode::Plan])));
}

#[test]
fn mode_comes_from_the_highest_source_whatever_the_order() {
    let a = (SourceKind::Project, "[policy]\nmode = \"plan\"\n");
    let b = (SourceKind::User, "[policy]\nmode = \"accept-edits\"\n");
    for order in [vec![a, b], vec![b, a]] {
        let p = policy_of(&order);
        assert_eq!(p.mode().map(|m| m.0), Some(Mode::AcceptEdits));
    }
}

#[test]
fn load_reads_user_project_and_file_sources() {
    let dir = tempfile::tempdir().map_err(|e| e.to_string());
    let Ok(dir) = dir else { panic!("tempdir") };
    let ws = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(ws.join(".sbx")).ok();
    std::fs::create_dir_all(home.join(".config/sbx")).ok();
    std::fs::write(
        home.join(".config/sbx/policy.toml"),
        "[policy]\nallow = [\"Bash(cargo test *)\"]\n",
    )
    .ok();
    std::fs::write(
        ws.join(".sbx/policy.toml"),
        "[policy]\ndeny = [\"Bash(cargo test *)\"]\n",
    )
    .ok();
    let extra = dir.path().join("extra.toml");
    std::fs::write(&extra, "[policy]\nask = [\"Bash(make *)\"]\n").ok();
    let env = WorkspaceContext::new(ws.clone(), home.clone());
    let opts = policy::LoadOptions {
        policy_file: Some(extra.clone()),
        ..Default::default()
    };
    let p = policy::load(&env, &opts).map_err(|e| e.to_string());
    let Ok(p) = p else { panic!("{p:?}") };
    let kinds: Vec<_> = p.rules().iter().map(|r| r.source.kind).collect();
    assert!(
        kinds.contains(&SourceKind::User)
            && kinds.contains(&SourceKind::Project)
            && kinds.contains(&SourceKind::File)
    );
    let (d, why) = policy::examples::command_decision(&p, "cargo test");
    assert_eq!(d, Decision::Deny, "{why}");
    assert!(why.contains("project:"), "{why}");
    let missing = policy::LoadOptions {
        policy_file: Some(dir.path().join("missing.toml")),
        ..Default::default()
    };
    assert!(matches!(
        policy::load(&env, &missing),
        Err(PolicyError::Read { .. })
    ));
}
