//! Policy: rules in allow / ask / deny lists, their patterns, the sources they
//! merge from, and the safety floor beneath them.
//!
//! Evaluation is deny > ask > allow whatever the order of rules and sources;
//! nothing matched means ask. See `docs/policy.md`.
#![forbid(unsafe_code)]

pub mod bash;
mod builtin;
mod command;
mod error;
pub mod examples;
pub mod floor;
mod hook;
mod load;
mod pattern;
mod rule;
mod set;
mod simple_glob;

use crate::workspace::WorkspaceContext;
pub use builtin::{BUILTIN_POLICY, PROFILE_POLICIES, profile_policy};
pub use command::CommandPattern;
pub use error::{Location, PolicyError};
pub use floor::{FloorHit, floor_for_write, floor_for_writes, is_sensitive};
pub use hook::{DEFAULT_POLICY_HOOK_TIMEOUT_MS, PolicyHookSpec};
pub use load::{Example, PolicySource, load_policy_file, parse_policy_file, parse_profile_policy};
pub use pattern::{DomainPattern, PathFamily, PathPattern, Pattern};
pub use rule::{Rule, RuleSource, SourceKind};
pub use set::{Policy, Target};

use std::path::PathBuf;

/// The built-in source, parsed.
pub fn builtin_source(workspace: &WorkspaceContext) -> Result<PolicySource, PolicyError> {
    parse_policy_file(BUILTIN_POLICY, SourceKind::Builtin, "sbx", workspace)
}

/// Merge sources into one policy. The built-in source is always part of it
/// (added here when `sources` does not hold it).
///
/// Each source's examples are verified against that source plus the built-in
/// rules; a source whose own examples fail makes the whole load fail. The mode
/// is taken from the last source that sets one in the order profile, project,
/// user, file (the order of `sources` does not matter).
pub fn merge(
    mut sources: Vec<PolicySource>,
    workspace: &WorkspaceContext,
) -> Result<Policy, PolicyError> {
    let builtin = builtin_source(workspace)?;
    if !sources.iter().any(|s| s.kind == SourceKind::Builtin) {
        sources.push(builtin.clone());
    }
    verify_examples(&sources)?;
    let rank = |k: SourceKind| match k {
        SourceKind::Builtin => 0,
        SourceKind::Managed => 1,
        SourceKind::Profile => 2,
        SourceKind::Project => 3,
        SourceKind::User => 4,
        SourceKind::File => 5,
    };
    let mode = sources
        .iter()
        .filter_map(|s| s.mode.clone())
        .max_by(|a, b| (rank(a.1.kind), &a.1).cmp(&(rank(b.1.kind), &b.1)));
    let mut rules = Vec::new();
    let mut hooks = Vec::new();
    for s in sources {
        rules.extend(s.rules);
        hooks.extend(s.hooks);
    }
    Ok(Policy::from_parts(rules, mode, hooks, workspace.clone()))
}

/// Verify each source's examples against the built-in rules plus its own, shipped ones
/// included: an example is a command the source's rules must decide as written, wherever the
/// source loads. They are judged in a workspace and home of their own that hold nothing
/// ([`examples::workspace`]): what the workspace a run happens to hold (a `.cargo/config.toml`
/// naming `sccache` as its `rustc-wrapper`, which makes `cargo metadata` ask) says nothing of
/// the rules, and must not stop every command from loading.
fn verify_examples(sources: &[PolicySource]) -> Result<(), PolicyError> {
    let blank = examples::workspace();
    let mut builtin: Option<PolicySource> = None;
    for s in sources.iter().filter(|s| !s.examples.is_empty()) {
        let base = match &builtin {
            Some(b) => b,
            None => builtin.insert(builtin_source(&blank)?),
        };
        let mut rules = base.rules.clone();
        if s.kind != SourceKind::Builtin {
            rules.extend(s.reparsed(&blank)?.rules);
        }
        let own = Policy::from_parts(rules, None, Vec::new(), blank.clone());
        examples::verify(s, &own)?;
    }
    Ok(())
}

/// Where to look for policy sources.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// The policies the profile brings, as source name and text, base first
    /// ([`Profile::policy_sources`](crate::profile::Profile::policy_sources)); the `[policy]`
    /// table of each is a profile source.
    pub profile: Vec<(String, String)>,
    /// Defaults to `~/.config/sbx/policy.toml`; a missing file is no source.
    pub user_file: Option<PathBuf>,
    /// Skip the user file entirely.
    pub no_user: bool,
    /// Skip `.sbx/policy.toml` in the workspace.
    pub no_project: bool,
    /// `--policy FILE`; must exist.
    pub policy_file: Option<PathBuf>,
}

/// Load built-in, profile, user, project and `--policy` sources and merge them.
pub fn load(workspace: &WorkspaceContext, opts: &LoadOptions) -> Result<Policy, PolicyError> {
    let mut sources = Vec::new();
    for (name, text) in &opts.profile {
        sources.push(parse_profile_policy(text, name, workspace)?);
    }
    if !opts.no_user {
        let user = opts
            .user_file
            .clone()
            .unwrap_or_else(|| workspace.home.join(".config/sbx/policy.toml"));
        if user.is_file() {
            sources.push(load_policy_file(&user, SourceKind::User, workspace)?);
        }
    }
    if !opts.no_project {
        let project = workspace.root.join(".sbx/policy.toml");
        if project.is_file() {
            sources.push(load_policy_file(&project, SourceKind::Project, workspace)?);
        }
    }
    if let Some(f) = &opts.policy_file {
        sources.push(load_policy_file(f, SourceKind::File, workspace)?);
    }
    merge(sources, workspace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_examples_hold() {
        let env = WorkspaceContext::new(PathBuf::from("/work/ws"), PathBuf::from("/home/u"));
        let builtin = builtin_source(&env);
        assert!(builtin.is_ok(), "{:?}", builtin.as_ref().err());
        let Ok(builtin) = builtin else { return };
        assert!(builtin.shipped);
        let mut sources = vec![builtin.clone()];
        for name in PROFILE_POLICIES {
            let Some(text) = profile_policy(name) else {
                panic!("{name} has no shipped policy");
            };
            let s = parse_profile_policy(text, name, &env);
            assert!(s.is_ok(), "{name}: {:?}", s.as_ref().err());
            if let Ok(s) = s {
                assert!(s.shipped, "{name} is a shipped text");
                // The same name with another text is not.
                let other = parse_profile_policy(&format!("{text}\n"), name, &env);
                assert!(other.is_ok_and(|o| !o.shipped), "{name} with another text");
                sources.push(s);
            }
        }
        let examples: usize = sources.iter().map(|s| s.examples.len()).sum();
        assert!(examples > 0, "the shipped policies carry examples");
        let r = verify_examples(&sources);
        assert!(r.is_ok(), "{:?}", r.err());
    }

    /// Each shipped rule that a Bash command can reach (a `Bash(...)` rule, or a path rule that
    /// denies or asks, which Bash reads and writes meet) decides at least one of its examples.
    #[test]
    fn every_shipped_rule_carries_an_example() {
        let env = WorkspaceContext::new(
            PathBuf::from("/nonexistent-sbx-ws"),
            PathBuf::from("/nonexistent-sbx-home"),
        );
        let Ok(builtin) = builtin_source(&env) else {
            panic!("the built-in policy loads")
        };
        for name in PROFILE_POLICIES {
            let text = profile_policy(name).unwrap_or_default();
            let Ok(source) = parse_profile_policy(text, name, &env) else {
                panic!("{name} loads")
            };
            let mut rules = builtin.rules.clone();
            rules.extend(source.rules.iter().cloned());
            let policy = Policy::from_parts(rules, None, Vec::new(), env.clone());
            let deciders: Vec<String> = source
                .examples
                .iter()
                .map(|e| examples::command_decision(&policy, &e.command).1)
                .collect();
            for rule in &source.rules {
                let reachable = match &rule.pattern {
                    Pattern::Bash(_) => true,
                    Pattern::Path { .. } => rule.effect != crate::decision::Decision::Allow,
                    Pattern::Tool(_)
                    | Pattern::Family(_)
                    | Pattern::Domain(_)
                    | Pattern::Mcp { .. } => false,
                };
                if reachable {
                    assert!(
                        deciders.contains(&rule.describe()),
                        "{name}: no example is decided by {}",
                        rule.describe()
                    );
                }
            }
        }
    }
}
