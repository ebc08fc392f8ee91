//! Glob expansion as the shell performs it, so that `cat ~/.cod*/auth.json` is judged by the
//! files it names. Brace lists are expanded first; `*`, `?` and `[...]` never match a leading
//! dot unless the pattern writes it, as in sh. What cannot be expanded here with certainty (a
//! `**`, a sequence brace, too many wildcards or matches) reads its whole literal directory.

use super::glob_match::{after_dot, fold_case, is_wild, meet, witness};
use super::{paths, tables};
use std::cell::Cell;
use std::path::{Path, PathBuf};

thread_local! {
    /// Set for an analysis in which a command may turn on `dotglob`, `nocaseglob` or
    /// `globstar` (see [`set_wide`]).
    static WIDE: Cell<bool> = const { Cell::new(false) };
}

/// Judge the globs of this analysis as if `dotglob`, `nocaseglob` and `globstar` were on:
/// wildcards take a leading dot, letters match either case, `**` spans directories. Set by
/// the walk when a command on the line may turn one on (`shopt -s`, `bash -O`, `GLOBIGNORE`).
pub(crate) fn set_wide(on: bool) {
    WIDE.with(|w| w.set(on));
}

fn wide() -> bool {
    WIDE.with(Cell::get)
}

/// Forms kept per alternative once widened.
const MAX_WIDE_FORMS: usize = 64;

/// With the options on, each alternative as patterns that match what it matches then, read
/// as bash reads them without the options: a wildcard component also as the dot-names it
/// takes (`*etrc` and `.*etrc`, `.etrc`), letters as classes of both cases, and for
/// `spans`, a `**` component as none, one or two directories. `None` past the limit.
fn widen(alternatives: Vec<String>, spans: bool) -> Option<Vec<String>> {
    if !wide() {
        return Some(alternatives);
    }
    let mut out: Vec<String> = Vec::new();
    for alt in alternatives {
        let mut forms: Vec<Vec<String>> = vec![Vec::new()];
        for comp in alt.split('/') {
            let options: Vec<Vec<String>> = if comp == "**" && spans {
                let one = component_forms("*");
                let mut o = vec![Vec::new()];
                o.extend(one.iter().map(|a| vec![a.clone()]));
                for a in &one {
                    o.extend(one.iter().map(|b| vec![a.clone(), b.clone()]));
                }
                o
            } else if is_wild(comp) && comp != "**" {
                component_forms(comp).into_iter().map(|c| vec![c]).collect()
            } else {
                vec![vec![comp.to_string()]]
            };
            let mut next = Vec::new();
            for f in &forms {
                for o in &options {
                    let mut n = f.clone();
                    n.extend(o.iter().cloned());
                    next.push(n);
                }
            }
            if next.len() > MAX_WIDE_FORMS {
                return None;
            }
            forms = next;
        }
        for f in forms {
            let p = f.join("/");
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Some(out)
}

/// One wildcard component with the options on: folded, and the dot-names it takes.
fn component_forms(comp: &str) -> Vec<String> {
    let folded = fold_case(comp);
    let mut out = vec![folded.clone()];
    if !folded.starts_with('.') {
        out.extend(after_dot(&folded).into_iter().map(|r| format!(".{r}")));
    }
    out
}

/// The pattern's brace alternatives, widened; every alternative of a pattern whose braces
/// cannot be expanded here is the pattern itself.
fn alternatives_or_whole(pattern: &str, spans: bool) -> Vec<String> {
    let alts = braces(pattern).unwrap_or_else(|| vec![pattern.to_string()]);
    widen(alts.clone(), spans).unwrap_or(alts)
}

/// Matches kept per word before the pattern counts as a directory read.
const MAX_MATCHES: usize = 256;
/// Brace alternatives expanded per word.
const MAX_ALTERNATIVES: usize = 64;
/// Components with a wildcard expanded per pattern (each lists a directory).
const MAX_WILD_COMPONENTS: usize = 4;

/// The paths `pattern` expands to from `cwd`, as written (absolute, not resolved), or the
/// literal directory it would have to read when it cannot be expanded here.
pub(crate) fn expand(pattern: &str, cwd: &Path) -> Result<Vec<PathBuf>, PathBuf> {
    let broad = || literal_dir(pattern, cwd);
    let alternatives = braces(pattern)
        .and_then(|a| widen(a, false))
        .ok_or_else(broad)?;
    let mut out = Vec::new();
    for alt in alternatives {
        for m in one(&alt, cwd).ok_or_else(broad)? {
            if out.len() >= MAX_MATCHES {
                return Err(broad());
            }
            if !out.contains(&m) {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// One brace-free pattern; `None` when it cannot be expanded with certainty.
fn one(pattern: &str, cwd: &Path) -> Option<Vec<PathBuf>> {
    let wild = pattern
        .split('/')
        .filter(|c| c.contains(['*', '?', '[']))
        .count();
    if pattern.contains("**") || wild > MAX_WILD_COMPONENTS {
        return None;
    }
    // A word without wildcards (a brace alternative) stays the word, made or not.
    if !is_wild(pattern) {
        return Some(vec![PathBuf::from(absolute(pattern, cwd))]);
    }
    // bash accepts `[^...]` for a negated class; the glob crate spells it `[!...]`.
    let pattern = pattern.replace("[^", "[!");
    let full = if pattern.starts_with('/') {
        pattern
    } else {
        format!(
            "{}/{pattern}",
            glob::Pattern::escape(&cwd.to_string_lossy())
        )
    };
    // The crate's own `require_literal_leading_dot` drops every dotfile from a listing, even
    // for `.cod*`; the rule is applied per component below instead.
    let opts = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    // `s*/` matches the directories `s*` matches, links to them included, and names each
    // with its `/`, which makes the kernel follow a link there.
    let dirs_only = full.ends_with('/');
    let full = full.trim_end_matches('/');
    let paths = glob::glob_with(full, opts).ok()?;
    let comps: Vec<&str> = full.split('/').collect();
    let mut out = Vec::new();
    // Unreadable directories are skipped, as the shell skips them.
    for p in paths.flatten().filter(|p| as_sh(&comps, p)) {
        if out.len() > MAX_MATCHES {
            return None;
        }
        if !dirs_only {
            out.push(p);
        } else if p.is_dir() {
            let mut named = p.into_os_string();
            named.push("/");
            out.push(PathBuf::from(named));
        }
    }
    Some(out)
}

/// sh's rule for one match: a component that starts with a dot is matched only by a pattern
/// component that starts with a literal dot, and `.` and `..` never match a wildcard.
fn as_sh(pattern: &[&str], p: &Path) -> bool {
    let text = p.to_string_lossy();
    let names: Vec<&str> = text.split('/').collect();
    names.len() == pattern.len()
        && names.iter().zip(pattern).all(|(n, pat)| {
            let wild = pat.contains(['*', '?', '[']);
            !wild || !(n.starts_with('.') && (!pat.starts_with('.') || *n == "." || *n == ".."))
        })
}

/// Names the floor protects wherever they appear, tried against each wildcard component of a
/// target that may not exist yet. Dot-names are only reached by a pattern with a leading dot;
/// the others matter only beneath the dot-names (`.git/hooks`, `.github/workflows`).
const FLOOR_NAMES: &[&str] = &[
    ".git",
    ".github",
    ".gitea",
    ".forgejo",
    ".gitlab-ci.yml",
    ".gitmodules",
    ".env",
    ".env.*",
    ".ssh",
    ".sbx",
    ".config",
    "hooks",
    "workflows",
    "config",
    "sbx",
    "fish",
    "config.fish",
];
/// Key names, tried only inside a `.ssh` directory: anywhere else every bare `*` would meet
/// them; existing keys elsewhere are found by the expansion itself.
const KEY_NAMES: &[&str] = &[
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "authorized_keys",
    "authorized_keys2",
];
/// Paths kept per pattern when candidates are multiplied out.
const MAX_CANDIDATES: usize = 128;

/// Paths a pattern could expand to when it runs, whether they exist now or not: for each
/// wildcard component, every protected name of the floor it could match and one plain name
/// it could match. Absolute, not resolved.
pub(crate) fn candidates(pattern: &str, cwd: &Path) -> Vec<PathBuf> {
    let alternatives = alternatives_or_whole(pattern, true);
    let mut out = Vec::new();
    for alt in alternatives {
        let full = absolute(&alt, cwd);
        let mut partial = vec![PathBuf::from("/")];
        for comp in full.split('/').filter(|c| !c.is_empty()) {
            partial = extend(partial, comp);
        }
        for p in partial {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Every partial path followed by each name `comp` could be.
fn extend(partial: Vec<PathBuf>, comp: &str) -> Vec<PathBuf> {
    if !is_wild(comp) {
        return partial.into_iter().map(|p| p.join(comp)).collect();
    }
    let mut next = Vec::new();
    for p in partial {
        for name in names(comp, p.ends_with(".ssh")) {
            if next.len() < MAX_CANDIDATES {
                next.push(p.join(name));
            }
        }
    }
    next
}

/// The protected names one wildcard component could be, then one plain name.
fn names(comp: &str, in_ssh: bool) -> Vec<String> {
    let keys = if in_ssh { KEY_NAMES } else { &[] };
    let rc = tables::RC_FILES;
    let mut out: Vec<String> = Vec::new();
    for n in FLOOR_NAMES.iter().chain(keys).chain(rc) {
        if let Some(m) = meet(comp, n).filter(|m| !out.contains(m)) {
            out.push(m);
        }
    }
    out.extend(witness(comp).filter(|w| !out.contains(w)));
    out
}

/// The pattern's alternatives as absolute patterns, their literal directories resolved
/// (`~`, `..`, symbolic links) as the kernel will see them: what the plan's entries are
/// compared with.
pub(crate) fn absolute_patterns(pattern: &str, cwd: &Path) -> Vec<PathBuf> {
    let alternatives = alternatives_or_whole(pattern, false);
    let mut out = Vec::new();
    for alt in alternatives {
        let full = absolute(&alt, cwd);
        let comps: Vec<&str> = full.split('/').filter(|c| !c.is_empty()).collect();
        let cut = comps.iter().position(|c| is_wild(c)).unwrap_or(comps.len());
        let (literal, wild) = comps.split_at(cut);
        let mut p = paths::resolve(&format!("/{}", literal.join("/")), cwd);
        p.extend(wild);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn absolute(pattern: &str, cwd: &Path) -> String {
    if pattern.starts_with('/') {
        pattern.to_string()
    } else {
        format!("{}/{pattern}", cwd.to_string_lossy())
    }
}

/// Brace expansion of comma lists, nested; `None` for a sequence (`{1..9}`) or too many
/// alternatives.
fn braces(pattern: &str) -> Option<Vec<String>> {
    let Some((open, close)) = brace_span(pattern) else {
        return Some(vec![pattern.to_string()]);
    };
    let head = pattern.get(..open)?;
    let body = pattern.get(open + 1..close)?;
    let tail = pattern.get(close + 1..)?;
    let parts = split_top(body);
    if parts.len() < 2 {
        if body.contains("..") {
            return None;
        }
        // `{x}` is literal in bash; its tail may still hold a list.
        let rest = braces(tail)?;
        return Some(
            rest.into_iter()
                .map(|r| format!("{head}{{{body}}}{r}"))
                .collect(),
        );
    }
    let mut out = Vec::new();
    for p in parts {
        for e in braces(&format!("{head}{p}{tail}"))? {
            out.push(e);
            if out.len() > MAX_ALTERNATIVES {
                return None;
            }
        }
    }
    Some(out)
}

/// The first `{` and its matching `}`.
fn brace_span(s: &str) -> Option<(usize, usize)> {
    let open = s.find('{')?;
    let mut depth = 0usize;
    for (i, c) in s.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, i));
                }
            }
            _ => {}
        }
    }
    None
}

/// `body` split at the commas outside nested braces.
fn split_top(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.extend(body.get(start..i));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.extend(body.get(start..));
    out
}

/// The directory a pattern's literal part names, resolved: what an expansion would list.
pub(crate) fn literal_dir(pattern: &str, cwd: &Path) -> PathBuf {
    let cut = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let prefix = pattern.get(..cut).unwrap_or("");
    let dir = match prefix.rfind('/') {
        Some(0) => "/",
        Some(i) => prefix.get(..i).unwrap_or("."),
        None => ".",
    };
    paths::resolve(dir, cwd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_like_sh() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let h = d.path();
        std::fs::create_dir_all(h.join(".codex"))?;
        std::fs::create_dir_all(h.join("src"))?;
        for f in [
            ".codex/auth.json",
            ".netrc",
            "src/a.rs",
            "src/b.rs",
            "notes",
        ] {
            std::fs::write(h.join(f), "x")?;
        }
        let got = |p: &str| {
            let mut v: Vec<String> = expand(p, h)
                .unwrap_or_else(|d| panic!("{p}: {}", d.display()))
                .iter()
                .map(|m| {
                    m.strip_prefix(h)
                        .unwrap_or(m)
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(got(".cod*/auth.json"), [".codex/auth.json"]);
        assert_eq!(got(".n*rc"), [".netrc"]);
        assert_eq!(got(".*/auth.jso?"), [".codex/auth.json"]);
        assert_eq!(
            got("*"),
            ["notes", "src"],
            "no dotfile without a leading dot"
        );
        assert_eq!(got("src/{a,b}.rs"), ["src/a.rs", "src/b.rs"]);
        assert_eq!(got("{.codex,src}/[^b]*"), [".codex/auth.json", "src/a.rs"]);
        let abs = format!("{}/.c*/auth.json", h.display());
        assert_eq!(expand(&abs, Path::new("/")).map(|v| v.len()), Ok(1));
        assert_eq!(expand("**/auth.json", h), Err(h.to_path_buf()));
        assert_eq!(expand("src/{1..3}", h), Err(h.join("src")));
        assert_eq!(expand("s*/a*/b*/c*/d*", h), Err(h.to_path_buf()));
        Ok(())
    }

    #[test]
    fn candidates_name_the_protected_paths_a_pattern_could_become() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let ws = d.path().canonicalize()?;
        let has = |pattern: &str, want: &str| candidates(pattern, &ws).contains(&ws.join(want));
        // Nothing exists: the names come from the floor's list.
        assert!(has(".git/hoo*/pre-commit", ".git/hooks/pre-commit"));
        assert!(has(".en?", ".env"));
        assert!(has(".env.l*", ".env.l"));
        assert!(has(".{a,g}it/config", ".git/config"));
        assert!(has(".ssh/*", ".ssh/id_rsa"));
        assert!(has(".gith*/work*/ci.yml", ".github/workflows/ci.yml"));
        // bash without dotglob: a wildcard never starts a dot-name; keys only inside .ssh.
        for harmless in ["*env", "src/*.rs", "*", "?git"] {
            let c = candidates(harmless, &ws);
            assert!(
                c.iter().all(|p| {
                    let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    name.is_some_and(|n| !n.starts_with('.') && !n.starts_with("id_"))
                }),
                "{harmless}: {c:?}"
            );
            assert!(!c.is_empty(), "{harmless}: one plain name at least");
        }
        Ok(())
    }

    #[test]
    fn absolute_patterns_resolve_their_literal_directory() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let root = d.path().canonicalize()?;
        std::fs::create_dir_all(root.join("real/.git"))?;
        std::os::unix::fs::symlink(root.join("real"), root.join("link"))?;
        assert_eq!(
            absolute_patterns("link/.git/hoo*/x", &root),
            [root.join("real/.git/hoo*/x")]
        );
        assert_eq!(
            absolute_patterns("{a,b}*", &root),
            [root.join("a*"), root.join("b*")]
        );
        Ok(())
    }

    #[test]
    fn too_many_matches_read_the_directory() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        for i in 0..=MAX_MATCHES {
            std::fs::write(d.path().join(format!("f{i}")), "")?;
        }
        assert_eq!(expand("f*", d.path()), Err(d.path().to_path_buf()));
        assert!(expand("f1?", d.path()).is_ok_and(|v| v.len() == 10));
        Ok(())
    }
}
