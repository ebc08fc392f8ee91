//! Loading policy sources from TOML, with errors naming the file, line and rule.
//!
//! Shape (the same in a policy file and in a profile's `[policy]` table):
//!
//! ```toml
//! [policy]
//! mode = "default"
//! allow = ["Bash(git diff *)", { rule = "Bash(cargo test *)", reason = "tests" }]
//! ask = ["Bash(git push *)"]
//! deny = [{ rule = "Bash(git push --force *)", reason = "no force push" }]
//! [policy.examples]
//! must_allow = ["git diff"]
//! must_ask = ["git push origin main"]
//! must_deny = ["git push --force origin main"]
//! [[policy.hooks]]
//! command = ["/usr/local/bin/policy-hook"]
//! timeout_ms = 2000
//! ```
#![forbid(unsafe_code)]

use super::error::{Location, PolicyError};
use super::hook::{DEFAULT_POLICY_HOOK_TIMEOUT_MS, PolicyHookSpec};
use super::pattern::Pattern;
use super::rule::{Rule, RuleSource, SourceKind};
use crate::decision::{Decision, Mode};
use crate::lines::LineIndex;
use crate::workspace::WorkspaceContext;
use std::path::{Path, PathBuf};
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

/// One example command with the decision its policy must give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Example {
    /// The command.
    pub command: String,
    /// The decision the source's rules must give it.
    pub expected: Decision,
    /// Where it is written.
    pub line: usize,
}

/// Everything one source contributes, before merging.
#[derive(Clone, Debug)]
pub struct PolicySource {
    /// What kind of source it is.
    pub kind: SourceKind,
    /// Its file, or the built-in's name.
    pub file: String,
    /// Its rules.
    pub rules: Vec<Rule>,
    /// The mode it sets, and where.
    pub mode: Option<(Mode, RuleSource)>,
    /// The policy hooks it configures.
    pub hooks: Vec<PolicyHookSpec>,
    /// Its examples.
    pub examples: Vec<Example>,
    /// The text it was parsed from: its examples are judged with it parsed again for a
    /// workspace of their own.
    pub(crate) text: SourceText,
    /// The text is one compiled into sbx (the built-in policy or a built-in profile's
    /// default policy), whose examples the test suite checks.
    pub shipped: bool,
}

/// A source's text, and whether only a `[policy]` table may stand at its top level. Not
/// shown in its `Debug`: two texts that parse the same are the same source.
#[derive(Clone)]
pub(crate) struct SourceText {
    text: std::sync::Arc<str>,
    strict_top: bool,
}

impl std::fmt::Debug for SourceText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SourceText(..)")
    }
}

impl PolicySource {
    /// A source with nothing in it.
    pub fn empty(kind: SourceKind, file: &str) -> Self {
        Self {
            kind,
            file: file.to_string(),
            rules: Vec::new(),
            mode: None,
            hooks: Vec::new(),
            examples: Vec::new(),
            text: SourceText {
                text: std::sync::Arc::from(""),
                strict_top: true,
            },
            shipped: false,
        }
    }

    /// The same text parsed for `workspace`.
    pub(crate) fn reparsed(&self, workspace: &WorkspaceContext) -> Result<Self, PolicyError> {
        parse(
            &self.text.text,
            self.kind,
            &self.file,
            workspace,
            self.text.strict_top,
        )
    }
}

struct Cx<'a> {
    lines: LineIndex,
    kind: SourceKind,
    file: &'a str,
    workspace: &'a WorkspaceContext,
}

impl Cx<'_> {
    fn line(&self, offset: usize) -> usize {
        self.lines.line(offset)
    }

    fn at(&self, offset: usize) -> Location {
        Location {
            file: PathBuf::from(self.file),
            line: self.line(offset),
        }
    }

    fn source(&self, offset: usize) -> RuleSource {
        RuleSource {
            kind: self.kind,
            file: self.file.to_string(),
            line: self.line(offset),
        }
    }

    fn wrong(&self, offset: usize, key: &str, expected: &'static str) -> PolicyError {
        PolicyError::WrongType {
            at: self.at(offset),
            key: key.to_string(),
            expected,
        }
    }
}

/// Parse a standalone policy file's text. Only a `[policy]` table is allowed at the top level.
pub fn parse_policy_file(
    text: &str,
    kind: SourceKind,
    file: &str,
    workspace: &WorkspaceContext,
) -> Result<PolicySource, PolicyError> {
    parse(text, kind, file, workspace, true)
}

/// Parse the `[policy]` table of a profile's text; the profile's other tables are not ours.
pub fn parse_profile_policy(
    text: &str,
    file: &str,
    workspace: &WorkspaceContext,
) -> Result<PolicySource, PolicyError> {
    parse(text, SourceKind::Profile, file, workspace, false)
}

/// Read and parse a policy file.
pub fn load_policy_file(
    path: &Path,
    kind: SourceKind,
    workspace: &WorkspaceContext,
) -> Result<PolicySource, PolicyError> {
    let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_policy_file(&text, kind, &path.to_string_lossy(), workspace)
}

fn parse(
    text: &str,
    kind: SourceKind,
    file: &str,
    workspace: &WorkspaceContext,
    strict_top: bool,
) -> Result<PolicySource, PolicyError> {
    let cx = Cx {
        lines: LineIndex::new(text),
        kind,
        file,
        workspace,
    };
    let doc = DeTable::parse(text).map_err(|e| PolicyError::Toml {
        at: cx.at(e.span().map(|s| s.start).unwrap_or(0)),
        message: e.message().to_string(),
    })?;
    let mut out = PolicySource::empty(kind, file);
    out.text = SourceText {
        text: std::sync::Arc::from(text),
        strict_top,
    };
    // By text, not name: a caller may hand any text under a built-in's name.
    out.shipped = match kind {
        SourceKind::Builtin => text == super::BUILTIN_POLICY,
        SourceKind::Profile => super::profile_policy(file) == Some(text),
        SourceKind::Managed | SourceKind::Project | SourceKind::User | SourceKind::File => false,
    };
    for (key, value) in doc.get_ref().iter() {
        if key.get_ref() == "policy" {
            let DeValue::Table(t) = value.get_ref() else {
                return Err(cx.wrong(value.span().start, "policy", "a table"));
            };
            policy_table(&cx, t, &mut out)?;
        } else if strict_top {
            return Err(PolicyError::UnknownKey {
                at: cx.at(key.span().start),
                key: key.get_ref().to_string(),
            });
        }
    }
    Ok(out)
}

fn policy_table(cx: &Cx<'_>, t: &DeTable<'_>, out: &mut PolicySource) -> Result<(), PolicyError> {
    for (key, value) in t.iter() {
        let off = value.span().start;
        match key.get_ref().as_ref() {
            "mode" => {
                let s = value
                    .get_ref()
                    .as_str()
                    .ok_or_else(|| cx.wrong(off, "mode", "a string"))?;
                let mode = Mode::parse(s).ok_or_else(|| PolicyError::UnknownMode {
                    at: cx.at(off),
                    mode: s.to_string(),
                })?;
                if cx.kind == SourceKind::Project && !mode.project_may_set() {
                    return Err(PolicyError::NotPermitted {
                        at: cx.at(off),
                        source_kind: "project",
                        what: format!("set mode `{s}` (only default and plan)"),
                    });
                }
                out.mode = Some((mode, cx.source(off)));
            }
            "allow" => rules(cx, key, value, Decision::Allow, out)?,
            "ask" => rules(cx, key, value, Decision::Ask, out)?,
            "deny" => rules(cx, key, value, Decision::Deny, out)?,
            "examples" => {
                let DeValue::Table(ex) = value.get_ref() else {
                    return Err(cx.wrong(off, "policy.examples", "a table"));
                };
                examples(cx, ex, out)?;
            }
            "hooks" => {
                if cx.kind == SourceKind::Project {
                    return Err(PolicyError::NotPermitted {
                        at: cx.at(off),
                        source_kind: "project",
                        what: "configure hooks (they would run programs from the repository)"
                            .into(),
                    });
                }
                let arr = array(cx, value, "policy.hooks")?;
                for h in arr.iter() {
                    out.hooks.push(hook(cx, h)?);
                }
            }
            other => {
                return Err(PolicyError::UnknownKey {
                    at: cx.at(key.span().start),
                    key: format!("policy.{other}"),
                });
            }
        }
    }
    Ok(())
}

fn array<'a, 'i>(
    cx: &Cx<'_>,
    value: &'a Spanned<DeValue<'i>>,
    key: &str,
) -> Result<&'a DeArray<'i>, PolicyError> {
    match value.get_ref() {
        DeValue::Array(a) => Ok(a),
        DeValue::String(_)
        | DeValue::Integer(_)
        | DeValue::Float(_)
        | DeValue::Boolean(_)
        | DeValue::Datetime(_)
        | DeValue::Table(_) => Err(cx.wrong(value.span().start, key, "an array")),
    }
}

fn rules(
    cx: &Cx<'_>,
    key: &Spanned<std::borrow::Cow<'_, str>>,
    value: &Spanned<DeValue<'_>>,
    effect: Decision,
    out: &mut PolicySource,
) -> Result<(), PolicyError> {
    let name = format!("policy.{}", key.get_ref());
    for item in array(cx, value, &name)?.iter() {
        let off = item.span().start;
        let (text, reason, modes) = match item.get_ref() {
            DeValue::String(s) => (s.to_string(), None, None),
            DeValue::Table(t) => rule_table(cx, &name, t, off)?,
            DeValue::Integer(_)
            | DeValue::Float(_)
            | DeValue::Boolean(_)
            | DeValue::Datetime(_)
            | DeValue::Array(_) => {
                return Err(cx.wrong(
                    off,
                    &name,
                    "a list of rule strings or {rule, reason, modes} tables",
                ));
            }
        };
        let pattern = Pattern::parse(&text, cx.workspace).map_err(|reason| PolicyError::Rule {
            at: cx.at(off),
            rule: text.clone(),
            reason,
        })?;
        out.rules.push(Rule {
            effect,
            text,
            pattern,
            reason,
            source: cx.source(off),
            modes,
        });
    }
    Ok(())
}

/// A rule, its reason and its modes.
type RuleParts = (String, Option<String>, Option<Vec<Mode>>);

/// A `{rule, reason, modes}` table.
fn rule_table(
    cx: &Cx<'_>,
    name: &str,
    t: &DeTable<'_>,
    off: usize,
) -> Result<RuleParts, PolicyError> {
    let (mut text, mut reason, mut modes) = (None, None, None);
    for (k, v) in t.iter() {
        let s = v.get_ref().as_str();
        match (k.get_ref().as_ref(), s) {
            ("rule", Some(s)) => text = Some(s.to_string()),
            ("reason", Some(s)) => reason = Some(s.to_string()),
            ("modes", _) => modes = Some(rule_modes(cx, v)?),
            ("rule" | "reason", None) => {
                return Err(cx.wrong(v.span().start, k.get_ref(), "a string"));
            }
            (other, _) => {
                return Err(PolicyError::UnknownKey {
                    at: cx.at(k.span().start),
                    key: format!("{name}.{other}"),
                });
            }
        }
    }
    let text = text.ok_or_else(|| cx.wrong(off, "rule", "present in a rule table"))?;
    Ok((text, reason, modes))
}

/// A rule's `modes`: a non-empty list of mode names.
fn rule_modes(cx: &Cx<'_>, v: &Spanned<DeValue<'_>>) -> Result<Vec<Mode>, PolicyError> {
    let off = v.span().start;
    let list = array(cx, v, "modes")?;
    if list.is_empty() {
        return Err(cx.wrong(off, "modes", "a non-empty list of modes"));
    }
    list.iter()
        .map(|m| {
            let s = m
                .get_ref()
                .as_str()
                .ok_or_else(|| cx.wrong(m.span().start, "modes", "a list of mode names"))?;
            Mode::parse(s).ok_or_else(|| PolicyError::UnknownMode {
                at: cx.at(m.span().start),
                mode: s.to_string(),
            })
        })
        .collect()
}

fn examples(cx: &Cx<'_>, t: &DeTable<'_>, out: &mut PolicySource) -> Result<(), PolicyError> {
    for (key, value) in t.iter() {
        let expected = match key.get_ref().as_ref() {
            "must_allow" => Decision::Allow,
            "must_ask" => Decision::Ask,
            "must_deny" => Decision::Deny,
            other => {
                return Err(PolicyError::UnknownKey {
                    at: cx.at(key.span().start),
                    key: format!("policy.examples.{other}"),
                });
            }
        };
        let name = format!("policy.examples.{}", key.get_ref());
        for item in array(cx, value, &name)?.iter() {
            let command = item
                .get_ref()
                .as_str()
                .ok_or_else(|| cx.wrong(item.span().start, &name, "a list of command strings"))?;
            out.examples.push(Example {
                command: command.to_string(),
                expected,
                line: cx.line(item.span().start),
            });
        }
    }
    Ok(())
}

fn hook(cx: &Cx<'_>, h: &Spanned<DeValue<'_>>) -> Result<PolicyHookSpec, PolicyError> {
    let off = h.span().start;
    let DeValue::Table(t) = h.get_ref() else {
        return Err(cx.wrong(off, "policy.hooks", "an array of tables"));
    };
    let mut command = Vec::new();
    let mut timeout_ms = DEFAULT_POLICY_HOOK_TIMEOUT_MS;
    for (k, v) in t.iter() {
        let voff = v.span().start;
        match k.get_ref().as_ref() {
            "command" => {
                for w in array(cx, v, "policy.hooks.command")?.iter() {
                    let s = w.get_ref().as_str().ok_or_else(|| {
                        cx.wrong(voff, "policy.hooks.command", "a list of strings")
                    })?;
                    command.push(s.to_string());
                }
            }
            "timeout_ms" => {
                let n = v
                    .get_ref()
                    .as_integer()
                    .and_then(|i| i.as_str().parse::<u64>().ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        cx.wrong(voff, "policy.hooks.timeout_ms", "a positive integer")
                    })?;
                timeout_ms = n;
            }
            other => {
                return Err(PolicyError::UnknownKey {
                    at: cx.at(k.span().start),
                    key: format!("policy.hooks.{other}"),
                });
            }
        }
    }
    if command.is_empty() {
        return Err(cx.wrong(off, "policy.hooks.command", "a non-empty list of strings"));
    }
    Ok(PolicyHookSpec {
        command,
        timeout_ms,
        source: cx.source(off),
    })
}
