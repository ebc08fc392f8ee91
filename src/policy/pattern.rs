//! Rule patterns: `Tool` or `Tool(specifier)`, compiled against a workspace and home.
#![forbid(unsafe_code)]

use super::command::CommandPattern;
use super::simple_glob::SimpleGlob;
use crate::pathset::under_clean as under;
use crate::workspace::WorkspaceContext;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Which family of file tools a path rule covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PathFamily {
    /// `Read(...)`: Read, Grep, Glob (and reads in general).
    Read,
    /// `Edit(...)`: Write, Edit, MultiEdit, NotebookEdit (and writes by Bash redirections).
    Edit,
}

/// A gitignore-style path glob made absolute.
#[derive(Clone, Debug)]
pub struct PathPattern {
    matcher: PathMatcher,
    /// The same pattern where the symbolic links in its literal directories lead, when they
    /// lead elsewhere (`~/.ssh/id_*` with `~/.ssh -> dotfiles/ssh`): the gate judges a path by
    /// the file it names, links followed, so a rule naming a link names its target too.
    through_links: Option<Box<PathMatcher>>,
    /// The absolute glob the specifier expanded to.
    pub absolute: String,
}

/// How a path pattern matches. Most rules name a path or everything beneath one, which a
/// string comparison decides; compiling a glob set costs far more and is kept for the rest.
#[derive(Clone, Debug)]
enum PathMatcher {
    /// `path`, or anything beneath it.
    Exact(PathBuf),
    /// Anything strictly beneath `path` (`path/**`).
    Beneath(PathBuf),
    /// Literal components, `*` and `**` only: matched without compiling.
    Simple(SimpleGlob),
    Glob(LazyGlobs),
}

/// Globs parsed (so that a bad one is an error when the rule loads) but compiled into a set
/// only when a path is first matched: compiling is most of a rule's cost, and most calls
/// (a plain command, say) never match a path.
#[derive(Clone, Debug)]
struct LazyGlobs {
    globs: Vec<Glob>,
    /// `None` when the set did not compile.
    set: OnceLock<Option<GlobSet>>,
}

impl LazyGlobs {
    fn set(&self) -> Option<&GlobSet> {
        self.set
            .get_or_init(|| {
                let mut builder = GlobSetBuilder::new();
                for g in &self.globs {
                    builder.add(g.clone());
                }
                builder.build().ok()
            })
            .as_ref()
    }
}

/// An absolute path other than `/` with no empty, `.` or `..` component and no trailing slash:
/// for such a path, comparing components (`Path::starts_with`) and matching the glob string
/// agree. Any other specifier keeps the glob.
fn clean(p: &str) -> bool {
    p.strip_prefix('/').is_some_and(|rest| {
        rest.split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
    })
}

/// Globs longer than this (in bytes, made absolute) are compiled when the rule loads.
const EAGER_GLOB_LEN: usize = 256;

fn has_glob_syntax(s: &str) -> bool {
    s.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// A specifier made absolute: `//abs`, `~` and `~/...` under the home, `/...`, `./...` and
/// `dir/...` under the workspace, each root written by `root`. `None` for a bare name, which
/// matches at any depth.
fn anchored(
    spec: &str,
    workspace: &WorkspaceContext,
    root: impl Fn(&Path) -> String,
) -> Option<String> {
    let ws = |r: &str| format!("{}/{r}", root(&workspace.root));
    if let Some(abs) = spec.strip_prefix("//") {
        Some(format!("/{abs}"))
    } else if let Some(r) = spec.strip_prefix("~/") {
        Some(format!("{}/{r}", root(&workspace.home)))
    } else if spec == "~" {
        Some(root(&workspace.home))
    } else if let Some(r) = spec.strip_prefix('/') {
        Some(ws(r))
    } else if let Some(r) = spec.strip_prefix("./") {
        Some(ws(r))
    } else if spec.contains('/') {
        Some(ws(spec))
    } else {
        None
    }
}

/// The same path without glob escaping, when the specifier itself has no glob syntax.
fn literal(rest: &str, workspace: &WorkspaceContext) -> Option<PathBuf> {
    if has_glob_syntax(rest) {
        return None;
    }
    let joined = anchored(rest, workspace, |p| p.to_string_lossy().into_owned())?;
    clean(&joined).then(|| PathBuf::from(joined))
}

/// A matcher without a glob: an exact path, or everything beneath a directory.
fn fast_matcher(trimmed: &str, workspace: &WorkspaceContext) -> Option<PathMatcher> {
    let clean_dir = |p: &Path| clean(&p.to_string_lossy()).then(|| p.to_path_buf());
    match trimmed.strip_suffix("/**") {
        _ if trimmed == "//**" => Some(PathMatcher::Exact(PathBuf::from("/"))),
        _ if trimmed == "/**" => clean_dir(&workspace.root).map(PathMatcher::Beneath),
        _ if trimmed == "~/**" => clean_dir(&workspace.home).map(PathMatcher::Beneath),
        Some(base) => literal(base, workspace).map(PathMatcher::Beneath),
        None => literal(trimmed, workspace).map(PathMatcher::Exact),
    }
}

/// A matcher for a glob: the simple form when it has one, else the glob and everything
/// beneath it, compiled on first use (or now, when it is long).
fn glob_matcher(absolute: &str) -> Result<PathMatcher, String> {
    if let Some(simple) = SimpleGlob::new(absolute) {
        return Ok(PathMatcher::Simple(simple));
    }
    let mut globs = Vec::with_capacity(2);
    for g in [absolute.to_string(), format!("{absolute}/**")] {
        let glob = GlobBuilder::new(&g)
            .literal_separator(true)
            .build()
            .map_err(|e| e.to_string())?;
        globs.push(glob);
    }
    let lazy = LazyGlobs {
        globs,
        set: OnceLock::new(),
    };
    // Compiling fails only past the regex size limit, far beyond a short glob; a long one
    // is compiled now, so that such a failure is a load error rather than a rule that
    // silently fails closed.
    if absolute.len() > EAGER_GLOB_LEN && lazy.set().is_none() {
        return Err(format!("glob `{absolute}` is too large to compile"));
    }
    Ok(PathMatcher::Glob(lazy))
}

impl PathPattern {
    /// Compile a specifier: `//abs`, `~/home-rel`, `/ws-rel`, `./ws-rel`, `ws/rel`, or `name` (any depth).
    pub fn new(spec: &str, workspace: &WorkspaceContext) -> Result<Self, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("empty path pattern".into());
        }
        let trimmed = spec.strip_suffix('/').unwrap_or(spec);
        let escaped = |p: &Path| globset::escape(&p.to_string_lossy());
        let absolute = anchored(trimmed, workspace, escaped)
            .unwrap_or_else(|| format!("{}/**/{trimmed}", escaped(&workspace.root)))
            .replace("//", "/");
        let matcher = match fast_matcher(trimmed, workspace) {
            Some(m) => m,
            None => glob_matcher(&absolute)?,
        };
        let outside_workspace = trimmed.starts_with('~') || trimmed.starts_with("//");
        let through_links = if outside_workspace {
            linked_matcher(&matcher, &absolute)?.map(Box::new)
        } else {
            None
        };
        Ok(Self {
            matcher,
            through_links,
            absolute,
        })
    }

    /// Does the absolute path, or a directory containing it, match? `None` when the pattern's
    /// glob set could not be compiled (the caller decides which way that fails).
    pub fn matches(&self, path: &Path) -> Option<bool> {
        let own = self.matcher.matches(path);
        match (&self.through_links, own) {
            (Some(m), Some(false)) => m.matches(path),
            (Some(_) | None, _) => own,
        }
    }
}

impl PathMatcher {
    fn matches(&self, path: &Path) -> Option<bool> {
        Some(match self {
            PathMatcher::Exact(p) => under(path, p),
            // `/**` matches `/` itself, as the glob does.
            PathMatcher::Beneath(p) => under(path, p) && (path != p || p.parent().is_none()),
            PathMatcher::Simple(g) => g.matches(path),
            PathMatcher::Glob(lazy) => lazy.set()?.is_match(path),
        })
    }
}

/// `matcher` (of the glob `absolute`) with its literal directories' links followed; `None`
/// when no link is on them. Only home and absolute patterns are looked at: the workspace root
/// is canonical already.
fn linked_matcher(matcher: &PathMatcher, absolute: &str) -> Result<Option<PathMatcher>, String> {
    let literal: Vec<&str> = absolute
        .split('/')
        .take_while(|c| !has_glob_syntax(c))
        .collect();
    let prefix = literal.join("/");
    if prefix.is_empty() || !clean(&prefix) {
        return Ok(None);
    }
    let real = crate::shell::canonical_prefix(Path::new(&prefix), Path::new("/"));
    if real == Path::new(&prefix) {
        return Ok(None);
    }
    Ok(Some(match matcher {
        PathMatcher::Exact(_) => PathMatcher::Exact(real),
        PathMatcher::Beneath(_) => PathMatcher::Beneath(real),
        PathMatcher::Simple(_) | PathMatcher::Glob(_) => {
            let rest = &absolute[prefix.len()..];
            glob_matcher(&format!(
                "{}{rest}",
                globset::escape(&real.to_string_lossy())
            ))?
        }
    }))
}

/// `domain:example.com` (that host) or `domain:*.example.com` (its subdomains).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainPattern {
    host: String,
    subdomains: bool,
}

impl DomainPattern {
    /// A pattern from `domain:HOST` or `domain:*.HOST` (subdomains only).
    pub fn new(spec: &str) -> Result<Self, String> {
        let host = spec
            .strip_prefix("domain:")
            .ok_or_else(|| format!("expected `domain:HOST`, got `{spec}`"))?
            .trim()
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let (host, subdomains) = match host.strip_prefix("*.") {
            Some(rest) => (rest.to_string(), true),
            None => (host, false),
        };
        if host.is_empty() || host.contains('*') || host.contains('/') {
            return Err(format!("invalid domain `{spec}`"));
        }
        Ok(Self { host, subdomains })
    }

    /// `host` is already lower-cased without a trailing dot.
    pub fn matches(&self, host: &str) -> bool {
        if self.subdomains {
            host.len() > self.host.len() + 1
                && host.ends_with(self.host.as_str())
                && host.as_bytes()[host.len() - self.host.len() - 1] == b'.'
        } else {
            host == self.host
        }
    }
}

/// What a rule's pattern matches.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// A bare tool name (or `Tool(*)`): every use of that tool.
    Tool(String),
    /// `Read(...)`/`Edit(...)` family with no specifier: every use of the family.
    Family(PathFamily),
    /// `Bash(pattern)`, matched per segment.
    Bash(CommandPattern),
    /// `Read(glob)`/`Edit(glob)`, or a specific file tool such as `Write(glob)`.
    Path {
        /// The tool family (`Read`, `Edit`).
        family: PathFamily,
        /// Set when the rule names one tool (`Write(...)`) rather than the family.
        tool: Option<String>,
        /// The glob.
        pattern: PathPattern,
    },
    /// `WebFetch(domain:...)`.
    Domain(DomainPattern),
    /// `mcp__server`, `mcp__server__*` (tool `None`) or `mcp__server__tool`.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name; `None` for every tool of the server.
        tool: Option<String>,
    },
}

/// The file tools that read.
pub const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS"];
/// The file tools that write.
pub const EDIT_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Pattern {
    /// Parse and compile `Tool` or `Tool(specifier)`.
    pub fn parse(text: &str, workspace: &WorkspaceContext) -> Result<Self, String> {
        let text = text.trim();
        let (tool, spec) = match text.find('(') {
            Some(open) => {
                let inner = text[open + 1..]
                    .strip_suffix(')')
                    .ok_or("missing closing `)`")?;
                (&text[..open], Some(inner))
            }
            None => (text, None),
        };
        if let Some(rest) = tool.strip_prefix("mcp__") {
            if spec.is_some() {
                return Err("MCP rules take no specifier".into());
            }
            return parse_mcp(rest);
        }
        if !valid_tool_name(tool) {
            return Err(format!("invalid tool name `{tool}`"));
        }
        let spec = spec.map(str::trim).filter(|s| !s.is_empty() && *s != "*");
        let family = match tool {
            "Read" => Some(PathFamily::Read),
            "Edit" => Some(PathFamily::Edit),
            _ => None,
        };
        match (tool, spec) {
            (_, None) => Ok(match family {
                Some(f) => Pattern::Family(f),
                None => Pattern::Tool(tool.to_string()),
            }),
            ("Bash", Some(s)) => Ok(Pattern::Bash(CommandPattern::new(s))),
            ("WebFetch", Some(s)) => Ok(Pattern::Domain(DomainPattern::new(s)?)),
            (t, Some(s)) => {
                let (family, one) = match family {
                    Some(f) => (f, None),
                    None if READ_TOOLS.contains(&t) => (PathFamily::Read, Some(t.to_string())),
                    None if EDIT_TOOLS.contains(&t) => (PathFamily::Edit, Some(t.to_string())),
                    None => return Err(format!("tool `{t}` takes no specifier")),
                };
                Ok(Pattern::Path {
                    family,
                    tool: one,
                    pattern: PathPattern::new(s, workspace)?,
                })
            }
        }
    }
}

fn parse_mcp(rest: &str) -> Result<Pattern, String> {
    let (server, tool) = match rest.split_once("__") {
        Some((s, "*")) => (s, None),
        Some((s, t)) => (s, Some(t.to_string())),
        None => (rest, None),
    };
    if server.is_empty()
        || tool
            .as_deref()
            .is_some_and(|t| t.is_empty() || t.contains('*'))
    {
        return Err("expected mcp__server, mcp__server__* or mcp__server__tool".into());
    }
    Ok(Pattern::Mcp {
        server: server.to_string(),
        tool,
    })
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
