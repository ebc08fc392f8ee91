//! The symbolic links in a tree that lead out of it. A walker that does not follow links
//! (`find`, `git ls-files`, `fd`) lists such a link as a name inside the tree, and the tree
//! was judged as a whole; the program it hands the names to (`find -exec cat {} +`,
//! `find . | xargs cat`, `cat $(find .)`) opens what the link leads to, which the tree's
//! judgement did not cover.

use super::paths;
use super::walk::Cwd;
use std::path::{Path, PathBuf};

/// What a walk found under a tree: the links leading out of it, or why they are not known.
type Walked = Result<Vec<PathBuf>, TooLarge>;

thread_local! {
    /// The trees walked during one analysis, and what each walk found: one command line may
    /// ask about the same tree several times (a find with two `-exec`s, `find -L` whose
    /// listing a consumer takes).
    static WALKS: std::cell::RefCell<Vec<(PathBuf, Walked)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Forget the walks of the previous analysis: the file system may have changed since.
pub(crate) fn reset() {
    WALKS.with(|w| w.borrow_mut().clear());
}

/// Entries a tree may hold for its links to be looked at; a larger tree is not walked.
const MAX_ENTRIES: usize = 200_000;
/// Links leading out of one tree that are judged one by one; more are not.
const MAX_LINKS: usize = 64;

/// Which links a listing (`find`, `git ls-files`, `rg --files`) may name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Listed {
    /// None (`find -type f`), or the command lists nothing.
    #[default]
    Nothing,
    /// Those under the trees it walks whose names pass every test (no test: all).
    Named(Vec<NameTest>),
    /// Those the repository's index tracks (`git ls-files`).
    Tracked,
}

/// A `find -name` (or, folding case, `-iname`) pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NameTest {
    pattern: String,
    fold: bool,
}

impl NameTest {
    pub(crate) fn new(pattern: &str, fold: bool) -> NameTest {
        NameTest {
            pattern: pattern.to_string(),
            fold,
        }
    }

    /// find matches names as fnmatch(3) does without flags: `*` matches a leading dot. A
    /// pattern the matcher here may read otherwise than fnmatch (a bracket expression, which
    /// takes `^`, classes and collating elements there; a backslash escape), or does not take
    /// at all, passes every name.
    fn passes(&self, name: &std::ffi::OsStr) -> bool {
        if self.pattern.contains(['[', '\\']) {
            return true;
        }
        let opts = glob::MatchOptions {
            case_sensitive: !self.fold,
            require_literal_separator: false,
            require_literal_leading_dot: false,
        };
        glob::Pattern::new(&self.pattern)
            .map_or(true, |p| p.matches_with(&name.to_string_lossy(), opts))
    }
}

/// The links a listing may name that lead out of where it looked: under `trees` (else the
/// working directory), or tracked by the repository there.
pub(crate) fn listed(
    what: &Listed,
    trees: &[PathBuf],
    cwd: &Cwd,
) -> Result<Vec<PathBuf>, TooLarge> {
    let roots = listing_trees(trees, cwd);
    match what {
        Listed::Nothing => Ok(Vec::new()),
        Listed::Named(tests) => Ok(leaving_any(&roots)?
            .into_iter()
            .filter(|l| {
                l.file_name()
                    .is_some_and(|n| tests.iter().all(|t| t.passes(n)))
            })
            .collect()),
        Listed::Tracked => {
            let mut out = Vec::new();
            for r in &roots {
                let Some(links) = tracked(r) else {
                    return leaving_any(&roots);
                };
                for l in links {
                    if !paths::resolve(&l.to_string_lossy(), r).starts_with(r) && !out.contains(&l)
                    {
                        out.push(l);
                    }
                }
            }
            Ok(out)
        }
    }
}

/// The links tracked under `dir` by the repository there; `None` when that is not known.
fn tracked(dir: &Path) -> Option<Vec<PathBuf>> {
    let repo = match super::git_refs::Repo::find(dir) {
        None => return Some(Vec::new()),
        Some(r) => r.ok()?,
    };
    let (tree, index) = repo.index()?;
    let links = super::git_index::tracked_links(tree, &index)?;
    Some(links.into_iter().filter(|l| l.starts_with(dir)).collect())
}

/// Why the links of a tree are not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TooLarge {
    /// More than [`MAX_ENTRIES`] entries.
    Entries,
    /// More than [`MAX_LINKS`] links leading out of it.
    Links,
}

/// The links under `root` (absolute, links in it resolved) whose target, as the kernel
/// resolves it, lies outside `root`, each as the name it has in the tree. Unreadable
/// directories are skipped, as a walker skips them. `root` itself is not looked at: whether
/// a walker follows a link given as its root is the caller's to judge.
pub(crate) fn leaving(root: &Path) -> Walked {
    let known = WALKS.with(|w| {
        w.borrow()
            .iter()
            .find(|(r, _)| r == root)
            .map(|(_, found)| found.clone())
    });
    if let Some(found) = known {
        return found;
    }
    let found = walk(root);
    WALKS.with(|w| w.borrow_mut().push((root.to_path_buf(), found.clone())));
    found
}

/// The walk behind [`leaving`].
fn walk(root: &Path) -> Walked {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(TooLarge::Entries);
            }
            let Ok(kind) = e.file_type() else { continue };
            let path = e.path();
            if kind.is_dir() {
                dirs.push(path);
            } else if kind.is_symlink()
                && !paths::resolve(&path.to_string_lossy(), &dir).starts_with(root)
            {
                if out.len() == MAX_LINKS {
                    return Err(TooLarge::Links);
                }
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The trees a listing walked: those it was judged for, else (`git ls-files`) the working
/// directory.
fn listing_trees(trees: &[PathBuf], cwd: &Cwd) -> Vec<PathBuf> {
    if trees.is_empty() {
        cwd.clone().unwrap_or_default()
    } else {
        trees.to_vec()
    }
}

/// The links leading out of any of `trees` (see [`leaving`]), each once.
fn leaving_any(trees: &[PathBuf]) -> Result<Vec<PathBuf>, TooLarge> {
    let mut out: Vec<PathBuf> = Vec::new();
    for t in trees {
        for l in leaving(t)? {
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    Ok(out)
}

/// What makes a tree too large, in words.
pub(crate) fn size(why: &TooLarge) -> String {
    match why {
        TooLarge::Entries => format!("the tree has more than {MAX_ENTRIES} entries"),
        TooLarge::Links => format!("the tree has more than {MAX_LINKS} links leading out of it"),
    }
}

/// The finding for a tree whose links were not looked at.
pub(crate) fn unknown(why: &TooLarge, what: &str) -> String {
    format!(
        "[shell.tree.links] {what} opens what the links in the tree lead to, and {}: where they lead is not checked",
        size(why)
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_links_that_leave_the_tree() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let tree = root.join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/file"), "x").unwrap();
        std::fs::write(root.join("outside"), "x").unwrap();
        let link = |to: &str, at: &str| std::os::unix::fs::symlink(to, tree.join(at)).unwrap();
        link("../file", "a/b/inside");
        link("../../../outside", "a/b/out");
        link("/etc/hostname", "abs");
        link("a", "dir-inside");
        link("missing", "dangling");
        assert_eq!(
            leaving(&tree),
            Ok(vec![tree.join("a/b/out"), tree.join("abs")])
        );
    }

    #[test]
    fn too_many_links_out_is_not_known() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for i in 0..=MAX_LINKS {
            std::os::unix::fs::symlink("/etc", root.join(format!("l{i}"))).unwrap();
        }
        assert_eq!(leaving(&root), Err(TooLarge::Links));
    }
}
