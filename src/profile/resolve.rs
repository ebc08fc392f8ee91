//! Resolving a profile for one workspace: variables substituted, globs expanded, paths made
//! absolute and normal, giving a capability set.
#![forbid(unsafe_code)]

use super::files::{FileKind, Files, RealFiles};
use super::limits::LimitKey;
use super::{Profile, ProfileError, ProfilePath};
use crate::capability::{CapabilitySet, FsCaps, Isolation, Limits, NetworkMode, Origin, PathEntry};
use crate::links::{Follower, Step};
use crate::pathset::under;
use crate::workspace::WorkspaceContext;
use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

/// Values substituted into path patterns: `{workspace}` and `{home}` from where the command
/// works, `{tmp}` from the run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Vars {
    /// `{workspace}` is its root, `{home}` its home; a denial's `{home}` is expanded for its
    /// other homes too. Its writable trees are what the resolution makes, not what it reads.
    pub workspace: WorkspaceContext,
    /// `{tmp}`: the sandbox's temporary directory as the command sees it.
    pub tmp: PathBuf,
}

impl Vars {
    /// Whether a resolution with `other` reads what one with these does: the same `{tmp}`,
    /// workspace root and homes. The context's writable trees and its `{tmp}` are what a
    /// resolution makes (setup fills them in after it), and its secret variables' names are
    /// the shell analysis's; none of them is read here.
    pub fn resolves_as(&self, other: &Vars) -> bool {
        let (a, b) = (&self.workspace, &other.workspace);
        self.tmp == other.tmp
            && a.root == b.root
            && a.home == b.home
            && a.other_homes == b.other_homes
    }
}

impl Profile {
    /// Where the set's network, isolation, environment and protection settings were written.
    fn setting_origins(&self) -> crate::capability::SettingOrigins {
        let owned = |m: &std::collections::BTreeMap<String, Origin>| m.clone();
        crate::capability::SettingOrigins {
            network: Some(self.network.1.clone()),
            isolation: (self.isolation_origins.iter())
                .map(|(k, o)| (k.to_string(), o.clone()))
                .collect(),
            env_inherit: self.env_inherit_origin.clone(),
            env_pass: owned(&self.env_pass_origins),
            env_deny: owned(&self.env_deny_origins),
            env_set: owned(&self.env_set_origins),
            protected_change: Some(self.protected_change.1.clone()),
            case_folding: Some(self.case_folding.1.clone()),
        }
    }

    /// The size of each private tmpfs: `tmp_size` when the profile sets it (`"unlimited"`
    /// included), else half of `memory`, so that `/tmp` and `/dev/shm` together hold at most
    /// the memory budget.
    pub fn tmp_size(&self) -> Option<u64> {
        match self.limits.get(&LimitKey::TmpSize) {
            Some((v, _)) => v.value,
            None => self.limit(LimitKey::Memory).map(|m| m / 2),
        }
    }

    /// The capability set's isolation switches: the first stage of its resolution, before the
    /// variables, since they decide `{tmp}` ([`Isolation::private_tmp_in`]). The set
    /// [`Profile::resolve_in`] makes carries this value; nothing reads `isolation` otherwise.
    pub fn resolve_isolation(&self) -> Isolation {
        self.isolation
    }

    /// Directories the profile asks to exist (`+` prefix): created by the executor before the
    /// sandbox starts.
    pub fn dirs_to_create(&self, vars: &Vars) -> Vec<PathBuf> {
        plus_paths(
            self.read.iter().chain(&self.write).chain(&self.execute),
            vars,
        )
    }

    /// The `deny_write` patterns inside the workspace, substituted but not expanded.
    fn watched(&self, vars: &Vars) -> Vec<PathEntry> {
        let values = Values::new(vars);
        let ws: &str = &values.escaped[0];
        // Always a glob, the variables escaped, so that it matches what it names.
        let escaped = [ws, &values.homes[0].1, &values.escaped[1]];
        let ws_path = Path::new(ws);
        // Only a pattern that can name a path in the workspace is substituted.
        let home_inside = under(&vars.workspace.home, &vars.workspace.root);
        self.deny_write
            .iter()
            .filter(|p| {
                let text = p.pattern.strip_prefix('?').unwrap_or(&p.pattern);
                home_inside || !text.starts_with("{home}")
            })
            .map(|p| PathEntry {
                path: normalize(Path::new(&substitute_values(
                    p.pattern.strip_prefix('?').unwrap_or(&p.pattern),
                    escaped,
                ))),
                required: false,
                origin: p.origin.clone(),
            })
            .filter(|e| e.path.as_os_str() != ws_path.as_os_str() && under(&e.path, ws_path))
            .collect()
    }

    /// Substitute variables and make every path absolute and normal, against the real file
    /// system (globs are expanded, a workspace's git files looked at).
    pub fn resolve(&self, vars: &Vars) -> Result<CapabilitySet, ProfileError> {
        self.resolve_in(vars, &RealFiles::default())
    }

    /// [`Profile::resolve`] against `files`: a fake one in tests.
    pub fn resolve_in(
        &self,
        vars: &Vars,
        files: &dyn Files,
    ) -> Result<CapabilitySet, ProfileError> {
        let read = expand_all(&self.read, vars, true, files, None)?;
        let write = expand_all(&self.write, vars, true, files, None)?;
        let execute = expand_all(&self.execute, vars, true, files, None)?;
        let writable: Vec<&Path> = write.iter().map(|e| e.path.as_path()).collect();
        let grants: Vec<&Path> = [&read, &write, &execute]
            .into_iter()
            .flatten()
            .map(|e| e.path.as_path())
            .collect();
        let mut denied = expand_all(&self.deny_read, vars, false, files, None)?;
        denied.extend(quarantines(vars, files));
        let deny_read = with_link_targets(denied, &grants, files);
        let (deny_write, hook_links) = with_gitlink(
            expand_all(&self.deny_write, vars, false, files, Some(&writable))?,
            vars,
            files,
        );
        let deny_write = with_home_link_targets(deny_write, vars, files);
        let mut watch = self.watched(vars);
        watch.extend(hook_links);
        Ok(CapabilitySet {
            fs: FsCaps {
                read,
                write,
                execute,
                deny_read,
                deny_write,
                watch,
                protected_change: self.protected_change.0,
                case_folding: self.case_folding.0,
                homes: vars.workspace.homes().map(normalize).collect(),
            },
            network: self.network.0,
            net_rules: if self.network.0 == NetworkMode::Proxy {
                self.net_rules.clone()
            } else {
                crate::capability::NetRules::default()
            },
            limits: Limits {
                timeout_ms: self
                    .limit(LimitKey::Timeout)
                    .map(|s| s.saturating_mul(1000)),
                output_bytes: self.limit(LimitKey::Output),
                memory_bytes: self.limit(LimitKey::Memory),
                processes: self.limit(LimitKey::Processes),
                file_size_bytes: self.limit(LimitKey::FileSize),
                cpu_seconds: self.limit(LimitKey::CpuTime),
                open_files: self.limit(LimitKey::OpenFiles),
                tmp_bytes: self.tmp_size(),
                origins: self.limit_origins(),
            },
            isolation: self.resolve_isolation(),
            env: self.env.clone(),
            extra_denied_syscalls: self.extra_denied_syscalls.clone(),
            requires: self.requires.clone(),
            origins: self.setting_origins(),
        })
    }
}

/// Each denied path that a symbolic link leads through is denied where the link leads as well
/// (`~/.aws -> dotfiles/aws` denies `~/dotfiles/aws`, `~/.config -> dotfiles/config` denies
/// `~/dotfiles/config/gh`): the gate judges a path by the file it names, links followed, and
/// the plan hides that file. A path whose links lead nowhere (a loop) adds nothing; the plan
/// refuses one whose link cannot be read. Nor does one whose links lead to a tree holding one
/// of `grants`: the plan covers a link on the way, or refuses the run, and never hides the tree.
fn with_link_targets(
    mut entries: Vec<PathEntry>,
    grants: &[&Path],
    files: &dyn Files,
) -> Vec<PathEntry> {
    let mut follower = Follower::new(|p: &Path| step_at(files, p));
    let mut targets: Vec<PathEntry> = Vec::new();
    // Each path once: the named entries and the targets added so far.
    let mut known: crate::pathset::PathMap<()> = entries
        .iter()
        .map(|e| (e.path.as_os_str().to_os_string(), ()))
        .collect();
    for e in &entries {
        let Ok(real) = follower.real(&e.path) else {
            continue;
        };
        let inside = links_inside(&real.path, files);
        let mut add = |path: PathBuf| {
            let holds_grant = grants.iter().any(|g| under(g, &path));
            if path != e.path
                && !holds_grant
                && known.insert(path.as_os_str().to_os_string(), ()).is_none()
            {
                targets.push(PathEntry {
                    path,
                    required: false,
                    origin: e.origin.clone(),
                });
            }
        };
        for link in inside {
            // A link in the hidden directory that leads out of it (`~/.ssh/id_ed25519 ->
            // ~/dotfiles/ssh/id_ed25519`, as GNU stow makes them in an existing directory).
            if let Ok(to) = follower.real(&link)
                && to.exists
                && !under(&to.path, &real.path)
            {
                add(to.path);
            }
        }
        add(real.path);
    }
    entries.extend(targets);
    entries
}

/// What a walk finds at `p`, as resolution's file view answers.
fn step_at(files: &dyn Files, p: &Path) -> Step {
    match files.kind(p) {
        None => Step::Missing,
        Some(FileKind::Symlink) => Step::Link(files.read_link(p)),
        Some(FileKind::Dir | FileKind::File | FileKind::Other) => Step::Other,
    }
}

/// The symbolic links directly in `dir`, when it is a directory (not in the trees mounted
/// afresh) of at most [`LINKS_INSIDE_MAX`] entries: secrets kept elsewhere and linked into a
/// hidden directory one by one, hooks kept in the project and linked into `.git/hooks`.
fn links_inside(dir: &Path, files: &dyn Files) -> Vec<PathBuf> {
    let fresh = ["/proc", "/sys", "/dev"]
        .iter()
        .any(|t| under(dir, Path::new(t)));
    if fresh || files.kind(dir) != Some(FileKind::Dir) {
        return Vec::new();
    }
    let pattern = format!("{}/*", glob::Pattern::escape(&dir.to_string_lossy()));
    let Ok(children) = files.glob(&pattern) else {
        return Vec::new();
    };
    if children.len() > LINKS_INSIDE_MAX {
        return Vec::new();
    }
    children
        .into_iter()
        .filter(|c| files.kind(c) == Some(FileKind::Symlink))
        .collect()
}

/// A hidden directory with more entries than this is not looked into for links.
const LINKS_INSIDE_MAX: usize = 256;

/// Where the workspace holds the home, the links in its protected directories that lead
/// elsewhere in the workspace (`~/.local/bin/black -> ../share/pipx/venvs/black/bin/black`):
/// the program on PATH is what the link leads to, so it is held as the link is (see
/// [`hook_links`]: the link is named, its target held and the way pinned). Nothing is looked
/// at when the workspace does not hold the home.
fn with_home_link_targets(
    mut deny_write: Vec<PathEntry>,
    vars: &Vars,
    files: &dyn Files,
) -> Vec<PathEntry> {
    let (home, root) = (&vars.workspace.home, &vars.workspace.root);
    if !under(home, root) {
        return deny_write;
    }
    let dirs: Vec<(PathBuf, Origin)> = deny_write
        .iter()
        .filter(|e| under(&e.path, home) && files.kind(&e.path) == Some(FileKind::Dir))
        .map(|e| (e.path.clone(), e.origin.clone()))
        .collect();
    let mut follower = Follower::new(|p: &Path| step_at(files, p));
    for (dir, origin) in dirs {
        for (link, to) in links_leaving(&dir, files, &mut follower) {
            let inside = to.exists && under(&to.path, root);
            if inside && !deny_write.iter().any(|e| e.path == link) {
                deny_write.push(PathEntry {
                    path: link,
                    required: false,
                    origin: origin.clone(),
                });
            }
        }
    }
    deny_write
}

/// sbx's quarantine in the state directory, when it exists, denied like a secret: it holds what
/// earlier runs made in other workspaces (an `.env.local` with the keys a command wrote there),
/// which no run should read. The one in `/var/tmp` (for a workspace that holds the state
/// directory) is not: asking about it would tie every kept plan of a session to `/var/tmp`,
/// which changes all the time.
fn quarantines(vars: &Vars, files: &dyn Files) -> Vec<PathEntry> {
    let state = files.var("XDG_STATE_HOME");
    let [root, _] = crate::workspace::quarantine_roots(state.as_deref(), &vars.workspace.home);
    Some(root)
        .into_iter()
        .filter(|r| files.kind(r) == Some(FileKind::Dir))
        .map(|path| PathEntry {
            path: normalize(&path),
            required: false,
            origin: Origin::builtin("sbx quarantine"),
        })
        .collect()
}

/// When the profile keeps paths under `{workspace}/.git` read-only, more paths that steer git
/// stay read-only: `.git` itself when it is a file (a linked worktree's or a submodule's,
/// naming its git directory elsewhere), so that it cannot be pointed at a copy with other
/// hooks; the directories `core.hooksPath` names inside the workspace (`.husky`, say), from the
/// repository's config, the files it includes and its `config.worktree`, and from the user's
/// global config (every value: git uses them for every other repository too), whose scripts
/// git runs instead of `.git/hooks`; and the config files either includes from the workspace,
/// and those they include. The user's configuration counts when the workspace is no
/// repository too: it may hold the home, or a dotfiles directory the home's files lead to.
/// Each is also given as a pattern to watch.
fn with_gitlink(
    deny_write: Vec<PathEntry>,
    vars: &Vars,
    files: &dyn Files,
) -> (Vec<PathEntry>, Vec<PathEntry>) {
    let dot_git = vars.workspace.root.join(".git");
    let Some(origin) = deny_write
        .iter()
        .find(|e| under(&e.path, &dot_git) && e.path != dot_git)
        .map(|e| e.origin.clone())
    else {
        return (deny_write, Vec::new());
    };
    let kind = files.kind(&dot_git);
    let mut extra = Vec::new();
    if kind == Some(FileKind::File) {
        extra.push(dot_git.clone());
    }
    let repo = (kind == Some(FileKind::Dir)).then_some(dot_git.as_path());
    extra.extend(git_config_paths(repo, vars, files));
    let hooks: Vec<PathBuf> = repo
        .map(|d| d.join("hooks"))
        .into_iter()
        .chain(extra.iter().cloned())
        .collect();
    extra.extend(hook_links(&hooks, files));
    add_inside(deny_write, extra, vars, &origin)
}

/// `extra` added to `deny_write` where it lies inside the workspace and is not there yet, and
/// watched there too (escaped as a pattern): one made during the run goes to quarantine.
fn add_inside(
    mut deny_write: Vec<PathEntry>,
    extra: Vec<PathBuf>,
    vars: &Vars,
    origin: &Origin,
) -> (Vec<PathEntry>, Vec<PathEntry>) {
    let mut watch = Vec::new();
    for path in extra {
        let path = normalize(&path);
        let inside = under(&path, &vars.workspace.root) && path != vars.workspace.root;
        if inside && !deny_write.iter().any(|e| e.path == path) {
            watch.push(PathEntry {
                path: PathBuf::from(glob::Pattern::escape(&path.to_string_lossy())),
                required: false,
                origin: origin.clone(),
            });
            deny_write.push(PathEntry {
                path,
                required: false,
                origin: origin.clone(),
            });
        }
    }
    (deny_write, watch)
}

/// The links in the hooks directories whose targets lie outside them (`.git/hooks/pre-commit
/// -> ../../scripts/pre-commit`, a common way to install a project's hooks): git runs the
/// target, so it stays read-only as the hook would. Each link is named, not its target, so that
/// planning holds the target and pins every link on the way to it (`scripts -> tools/hooks`),
/// which could otherwise be pointed at another file; a target that does not exist yet is left
/// to the check after the run, which follows the way again (see `exec::protected_link`).
fn hook_links(dirs: &[PathBuf], files: &dyn Files) -> Vec<PathBuf> {
    let mut follower = Follower::new(|p: &Path| step_at(files, p));
    dirs.iter()
        .flat_map(|dir| links_leaving(&normalize(dir), files, &mut follower))
        .map(|(link, _)| link)
        .collect()
}

/// The links directly in `dir` that lead out of it, each with where it leads.
fn links_leaving<F: FnMut(&Path) -> Step>(
    dir: &Path,
    files: &dyn Files,
    follower: &mut Follower<F>,
) -> Vec<(PathBuf, crate::links::Real)> {
    links_inside(dir, files)
        .into_iter()
        .filter_map(|link| {
            let to = follower.real(&link).ok()?;
            (!under(&to.path, dir)).then_some((link, to))
        })
        .collect()
}

/// The hooks directories and included config files that the user's git configuration names,
/// and a repository's (`dot_git`, when the workspace is one; see [`with_gitlink`]), not yet
/// normalised. The user's apply to every repository, this one or not, so each of its
/// `core.hooksPath` values counts. `.git/config.worktree` itself stays writable: `git
/// sparse-checkout` writes it, and the check after the run judges it by content.
fn git_config_paths(dot_git: Option<&Path>, vars: &Vars, files: &dyn Files) -> Vec<PathBuf> {
    let home = &vars.workspace.home;
    let read = |p: &Path| files.read(p);
    let repo = dot_git
        .map(|d| {
            let start = [d.join("config"), d.join("config.worktree")];
            crate::gitconfig::chain(&start, Some(home), read)
        })
        .unwrap_or_default();
    let xdg = files
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let global = crate::gitconfig::chain(
        &[xdg.join("git/config"), home.join(".gitconfig")],
        Some(home),
        read,
    );
    let hooks = global.hooks_paths.iter().chain(&repo.hooks_paths);
    // A relative hooksPath is the worktree's; `~/` is the home, which the workspace may hold
    // (or hold the directory it names: a dotfiles repository). `~user/` is left out.
    let worktree = &vars.workspace.root;
    let mut out: Vec<PathBuf> = hooks
        .filter_map(|h| match h.strip_prefix("~/") {
            Some(rest) => Some(home.join(rest)),
            None if h == "~" => Some(home.clone()),
            None if h.starts_with('~') => None,
            None => Some(worktree.join(h)),
        })
        .collect();
    // Both chains' includes: git reads `~/.gitconfig.local` for every repository, and a
    // workspace may hold it.
    out.extend(repo.included);
    out.extend(global.included);
    out
}

/// Lexically normalise an absolute path: drop `.`, apply `..`.
pub fn normalize(path: &Path) -> PathBuf {
    if is_normal(path.as_os_str().as_encoded_bytes()) {
        return path.to_path_buf();
    }
    normalize_components(path)
}

/// [`normalize`], keeping the buffer when the path is normal already.
fn normalize_owned(path: PathBuf) -> PathBuf {
    if is_normal(path.as_os_str().as_encoded_bytes()) {
        return path;
    }
    normalize_components(&path)
}

fn normalize_components(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// Absolute, without empty, `.` or `..` components or a trailing `/`: what [`normalize`] makes.
fn is_normal(b: &[u8]) -> bool {
    b == b"/"
        || (b.starts_with(b"/")
            && !b.ends_with(b"/")
            && b.split(|c| *c == b'/')
                .skip(1)
                .all(|c| !matches!(c, b"" | b"." | b"..")))
}

/// `s` with `{workspace}`, `{home}` (as `home`) and `{tmp}` replaced, in one pass.
fn substitute(s: &str, vars: &Vars, home: &Path) -> String {
    let values = [
        vars.workspace.root.to_string_lossy(),
        home.to_string_lossy(),
        vars.tmp.to_string_lossy(),
    ];
    substitute_values(s, [&values[0], &values[1], &values[2]])
}

/// A path as glob text matching only itself; borrowed when it holds no glob syntax.
fn escaped(p: &Path) -> Cow<'_, str> {
    match p.to_string_lossy() {
        t if t.contains(['*', '?', '[', ']']) => Cow::Owned(glob::Pattern::escape(&t)),
        t => t,
    }
}

/// `s` with `{workspace}`, `{home}` and `{tmp}` replaced by `values`, in that order.
fn substitute_values(s: &str, values: [&str; 3]) -> String {
    let keys = ["{workspace}", "{home}", "{tmp}"];
    let mut out = String::with_capacity(s.len() + 64);
    let mut rest = s;
    while let Some(i) = crate::lines::find_byte(b'{', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match keys.iter().zip(&values).find(|(k, _)| tail.starts_with(*k)) {
            Some((k, v)) => {
                out.push_str(v);
                rest = &tail[k.len()..];
            }
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The paths a glob matches, as `glob::glob` finds them, without its walk from the root: the
/// literal directory before the first wildcard is looked up once (a missing one matches
/// nothing), and a wildcard in the last component only is one directory listing.
pub(crate) fn expand_glob(pattern: &str) -> Result<Vec<PathBuf>, glob::PatternError> {
    expand_glob_in(pattern, &RealFiles::default())
}

/// [`expand_glob`], with the directory listings `files` remembers: several globs of one
/// directory (`{workspace}/.env*`, `{workspace}/lefthook*`) read it once.
pub(crate) fn expand_glob_in(
    pattern: &str,
    files: &RealFiles,
) -> Result<Vec<PathBuf>, glob::PatternError> {
    let wild = |c: &str| c.contains(['*', '?', '[']);
    let comps: Vec<&str> = pattern.split('/').collect();
    let Some(first) = comps.iter().position(|c| wild(c)) else {
        return Ok(vec![PathBuf::from(pattern)]);
    };
    let prefix = unescape(&comps[..first].join("/"));
    let dir = if prefix.is_empty() {
        "/".to_string()
    } else {
        prefix
    };
    if first + 1 < comps.len() {
        if std::fs::symlink_metadata(&dir).is_err() {
            glob::Pattern::new(pattern)?;
            return Ok(Vec::new());
        }
        return Ok(glob::glob(pattern)?.filter_map(Result::ok).collect());
    }
    let name = compiled(comps[first])?;
    let dir = Path::new(&dir);
    let mut out: Vec<PathBuf> = files
        .entries(dir)
        .iter()
        .map(|(n, _)| n)
        .filter(|n| n.to_str().is_some_and(|n| name.matches(n)))
        .map(|n| dir.join(n))
        .collect();
    out.sort();
    Ok(out)
}

/// `pattern` compiled, remembered for the patterns this thread compiled last: a session's
/// every call matches the same few dozen names of its workspace and home.
pub(crate) fn compiled(pattern: &str) -> Result<std::rc::Rc<glob::Pattern>, glob::PatternError> {
    const KEPT: usize = 256;
    type Kept = std::collections::HashMap<String, std::rc::Rc<glob::Pattern>>;
    thread_local! {
        static COMPILED: std::cell::RefCell<Kept> = std::cell::RefCell::default();
    }
    if let Some(p) = COMPILED.with_borrow(|c| c.get(pattern).cloned()) {
        return Ok(p);
    }
    let p = std::rc::Rc::new(glob::Pattern::new(pattern)?);
    COMPILED.with_borrow_mut(|c| {
        if c.len() < KEPT {
            c.insert(pattern.to_string(), std::rc::Rc::clone(&p));
        }
    });
    Ok(p)
}

/// A literal path written as a glob (`[[]` for `[`) back as it is.
fn unescape(s: &str) -> String {
    s.replace("[[]", "[")
        .replace("[]]", "]")
        .replace("[*]", "*")
        .replace("[?]", "?")
}

fn plus_paths<'a>(pats: impl Iterator<Item = &'a ProfilePath>, vars: &Vars) -> Vec<PathBuf> {
    pats.filter_map(|p| p.pattern.strip_prefix('+'))
        .filter(|s| !s.contains(['*', '?', '[']))
        .map(|s| normalize(Path::new(&substitute(s, vars, &vars.workspace.home))))
        .collect()
}

/// The variables' values as text, plain and escaped for a glob, made once per resolution
/// rather than once per pattern.
struct Values<'v> {
    /// `[workspace, tmp]`.
    plain: [Cow<'v, str>; 2],
    escaped: [Cow<'v, str>; 2],
    /// Every home, plain and escaped; the first is `vars.workspace.home`.
    homes: Vec<(Cow<'v, str>, Cow<'v, str>)>,
}

impl<'v> Values<'v> {
    fn new(vars: &'v Vars) -> Self {
        Self {
            plain: [
                vars.workspace.root.to_string_lossy(),
                vars.tmp.to_string_lossy(),
            ],
            escaped: [escaped(&vars.workspace.root), escaped(&vars.tmp)],
            homes: vars
                .workspace
                .homes()
                .map(|h| (h.to_string_lossy(), escaped(h)))
                .collect(),
        }
    }

    /// Which variables' values lie beneath one of `roots` or above one: `[workspace, tmp,
    /// any home]`.
    fn reaching(&self, roots: &[&Path]) -> [bool; 3] {
        let related = |v: &str| {
            let v = Path::new(v);
            roots.iter().any(|r| under(r, v) || under(v, r))
        };
        [
            related(&self.plain[0]),
            related(&self.plain[1]),
            self.homes.iter().any(|(h, _)| related(h)),
        ]
    }

    /// The pattern's text with variables substituted (escaped in a glob): a denial's `{home}`
    /// once per home.
    fn substituted(&self, s: &str, grant: bool) -> impl Iterator<Item = String> {
        let glob = s.contains(['*', '?', '[']);
        let n = if grant || !s.contains("{home}") {
            1
        } else {
            self.homes.len()
        };
        self.homes.iter().take(n).map(move |(plain, esc)| {
            let (v, h) = if glob {
                (&self.escaped, esc)
            } else {
                (&self.plain, plain)
            };
            substitute_values(s, [&v[0], h, &v[1]])
        })
    }
}

/// `pats` substituted and expanded. With `within`, a path is kept only inside one of those
/// trees, and a glob expanded only where its matches could lie in or above one: a denied write
/// elsewhere is read-only anyway, and the home's many entries cost nothing when the workspace
/// does not hold the home.
fn expand_all(
    pats: &[ProfilePath],
    vars: &Vars,
    grant: bool,
    files: &dyn Files,
    within: Option<&[&Path]>,
) -> Result<Vec<PathEntry>, ProfileError> {
    let mut out = Entries::with_capacity(pats.len());
    let values = Values::new(vars);
    let reach = within.map(|roots| values.reaching(roots));
    for p in pats {
        let (optional, s) = match (p.pattern.strip_prefix('?'), p.pattern.strip_prefix('+')) {
            (Some(rest), _) => (true, rest),
            // Created before the sandbox starts; optional so that planning without creating
            // (`sbx explain`) does not fail.
            (None, Some(rest)) => (true, rest),
            (None, None) => (!grant, p.pattern.as_str()),
        };
        if reach.is_some_and(|r| !may_reach(s, r)) {
            continue;
        }
        if let Some(paths) = from_env(s, files) {
            let is_glob = s.contains(['*', '?', '[']);
            for path in paths {
                let one = Pattern {
                    text: &path,
                    is_glob,
                    required: false,
                    origin: &p.origin,
                };
                one.add_to(&mut out, files, within)?;
            }
            continue;
        }
        // Whether it is a glob is the profile's say, not the variables' (a workspace named
        // `w[1]`): their values are escaped inside a glob.
        let is_glob = s.contains(['*', '?', '[']);
        for s in values.substituted(s, grant) {
            let one = Pattern {
                text: &s,
                is_glob,
                required: !optional,
                origin: &p.origin,
            };
            one.add_to(&mut out, files, within)?;
        }
    }
    Ok(out.entries)
}

/// One pattern with its variables substituted, about to be added.
struct Pattern<'a> {
    text: &'a str,
    /// Whether the profile wrote a glob (values substituted in it are escaped).
    is_glob: bool,
    required: bool,
    origin: &'a Origin,
}

impl Pattern<'_> {
    /// A literal path added as it is (inside `within` when given), a glob by what it matches
    /// (where its matches could lie in or above `within`).
    fn add_to(
        &self,
        out: &mut Entries,
        files: &dyn Files,
        within: Option<&[&Path]>,
    ) -> Result<(), ProfileError> {
        let s = self.text;
        if !self.is_glob {
            let writable = |roots: &[&Path]| roots.iter().any(|r| under(Path::new(s), r));
            if within.is_none_or(writable) {
                out.add(PathBuf::from(s), self.required, self.origin);
            }
            return Ok(());
        }
        if within.is_some_and(|roots| !glob_may_reach(s, roots)) {
            return Ok(());
        }
        let found = files.glob(s).map_err(|e| ProfileError::Invalid {
            at: self.origin.clone(),
            message: format!("bad glob `{s}`: {e}"),
        })?;
        for path in found {
            out.add(path, self.required, self.origin);
        }
        Ok(())
    }
}

/// The patterns a `{env:NAME}/rest` pattern stands for: one per absolute path the caller's
/// `NAME` holds (a `:`-separated list, as `KUBECONFIG` is), its value escaped where the rest
/// is a glob; none when it is unset. `None` for a pattern without `{env:`.
fn from_env(s: &str, files: &dyn Files) -> Option<Vec<String>> {
    let rest = s.strip_prefix("{env:")?;
    let end = crate::lines::find_byte(b'}', rest.as_bytes())?;
    let (name, tail) = (&rest[..end], &rest[end + 1..]);
    let value = files.var(name).unwrap_or_default();
    let glob = tail.contains(['*', '?', '[']);
    let paths = value
        .to_string_lossy()
        .split(':')
        .filter(|v| v.starts_with('/'))
        .map(|v| {
            let v = if glob {
                glob::Pattern::escape(v)
            } else {
                v.to_string()
            };
            format!("{}{tail}", v.trim_end_matches('/'))
        })
        .collect();
    Some(paths)
}

/// Whether a pattern that starts with a variable can name a path in or above a writable
/// tree, by [`Values::reaching`]: asked before substituting, so that the home's many denials
/// cost a prefix comparison each.
fn may_reach(s: &str, [workspace, tmp, home]: [bool; 3]) -> bool {
    if s.starts_with("{home}") {
        home
    } else if s.starts_with("{workspace}") {
        workspace
    } else if s.starts_with("{tmp}") {
        tmp
    } else {
        true
    }
}

/// Whether a glob's matches can lie in or above one of `roots`: the part before its first
/// wildcard names a directory beneath one of them, or above one. An escaped variable (`[[]`)
/// ends that part early, which only widens the answer.
fn glob_may_reach(glob: &str, roots: &[&Path]) -> bool {
    let wild = |c: &&str| c.contains(['*', '?', '[']);
    let fixed: Vec<&str> = glob.split('/').take_while(|c| !wild(c)).collect();
    let fixed = fixed.join("/");
    let fixed = Path::new(if fixed.is_empty() { "/" } else { &fixed });
    roots.iter().any(|r| under(r, fixed) || under(fixed, r))
}

/// Entries in the order first named, each path once. Normalised paths are equal when their
/// bytes are: a set of their hashes keeps this linear without copying each path (the
/// built-in secrets list has hundreds of entries, each expanded once per home).
struct Entries {
    entries: Vec<PathEntry>,
    /// Hash of a path's bytes -> index of the first entry with that hash.
    seen: std::collections::HashMap<u64, usize, std::hash::BuildHasherDefault<NoHash>>,
}

impl Entries {
    fn with_capacity(n: usize) -> Self {
        Self {
            entries: Vec::with_capacity(n),
            seen: std::collections::HashMap::with_capacity_and_hasher(n, Default::default()),
        }
    }

    fn add(&mut self, path: PathBuf, required: bool, origin: &Origin) {
        use std::hash::Hasher;
        let path = normalize_owned(path);
        let mut h = crate::pathset::WordHash::default();
        h.write(path.as_os_str().as_encoded_bytes());
        let hash = h.finish();
        let dup = match self.seen.get(&hash) {
            // Equal hashes of different paths are rare; then compare with every entry.
            Some(&i) => self.entries[i].path == path || self.entries.iter().any(|e| e.path == path),
            None => false,
        };
        if dup {
            return;
        }
        self.seen.entry(hash).or_insert(self.entries.len());
        self.entries.push(PathEntry {
            path,
            required,
            origin: origin.clone(),
        });
    }
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct NoHash(u64);

impl std::hash::Hasher for NoHash {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The gate's resolution is reused by the run that follows whatever setup filled into the
    /// context after it (its writable trees, its `{tmp}`); another root or home is another
    /// resolution.
    #[test]
    fn a_resolution_is_the_same_for_what_it_does_not_read() {
        let vars = |ws: WorkspaceContext| Vars {
            workspace: ws,
            tmp: PathBuf::from("/tmp"),
        };
        let gate = vars(WorkspaceContext::new("/ws", "/h"));
        let run = vars(
            WorkspaceContext::new("/ws", "/h")
                .with_writable([PathBuf::from("/ws"), PathBuf::from("/tmp")])
                .with_tmp(PathBuf::from("/tmp")),
        );
        assert!(gate.resolves_as(&run) && run.resolves_as(&gate));
        assert!(!gate.resolves_as(&vars(WorkspaceContext::new("/other", "/h"))));
        assert!(!gate.resolves_as(&vars(WorkspaceContext::new("/ws", "/h2"))));
        let mut elsewhere = vars(WorkspaceContext::new("/ws", "/h"));
        elsewhere.tmp = PathBuf::from("/var/tmp/sbx-1");
        assert!(!gate.resolves_as(&elsewhere));
    }

    #[test]
    fn normalising_and_substituting() {
        for (p, n) in [
            ("/a/b", "/a/b"),
            ("/", "/"),
            ("/a//b/", "/a/b"),
            ("/a/./b", "/a/b"),
            ("/a/../b", "/b"),
            ("/a/.b/..c", "/a/.b/..c"),
        ] {
            assert_eq!(normalize(Path::new(p)), PathBuf::from(n), "{p}");
        }
        let vars = Vars {
            workspace: WorkspaceContext::new("/ws", "/h"),
            tmp: "/t".into(),
        };
        assert_eq!(
            substitute("{home}/x{tmp}{workspace}/{y}", &vars, Path::new("/h2")),
            "/h2/x/t/ws/{y}"
        );
    }

    /// A home written `/h/.` or `//h` (as `HOME` may be) is the set's `/h`: planning compares
    /// homes with paths by their bytes.
    #[test]
    fn homes_are_normal() {
        let p = Profile::parse("t", "[filesystem]\ndeny_read = [\"{home}/.s\"]\n").unwrap();
        for home in ["/h/.", "//h", "/h/"] {
            let vars = Vars {
                workspace: WorkspaceContext::new("/ws", home),
                tmp: "/tmp".into(),
            };
            let caps = p.resolve(&vars).unwrap();
            assert_eq!(caps.fs.homes, [PathBuf::from("/h")], "{home}");
            assert_eq!(caps.fs.deny_read[0].path, PathBuf::from("/h/.s"), "{home}");
        }
    }

    #[test]
    fn denials_cover_every_home_and_grants_only_the_first() {
        let p = Profile::parse(
            "t",
            "[filesystem]\nwrite = [\"?{home}/w\"]\ndeny_read = [\"{home}/.s\", \"/etc/x\"]\n",
        )
        .unwrap();
        let mut vars = Vars {
            workspace: WorkspaceContext::new("/ws", "/h1"),
            tmp: "/tmp".into(),
        };
        vars.workspace.add_home(Path::new("/h2"));
        vars.workspace.add_home(Path::new("/h1"));
        vars.workspace.add_home(Path::new("/h2"));
        assert_eq!(vars.workspace.other_homes, [PathBuf::from("/h2")]);
        let caps = p.resolve_in(&vars, &crate::plan::FakeFs::new()).unwrap();
        let paths = |v: &[crate::capability::PathEntry]| -> Vec<PathBuf> {
            v.iter().map(|e| e.path.clone()).collect()
        };
        assert_eq!(
            paths(&caps.fs.deny_read),
            ["/h1/.s", "/h2/.s", "/etc/x"].map(PathBuf::from)
        );
        assert_eq!(paths(&caps.fs.write), [PathBuf::from("/h1/w")]);
    }

    fn fake_vars(workspace: &str) -> Vars {
        Vars {
            workspace: WorkspaceContext::new(workspace, "/h"),
            tmp: "/tmp".into(),
        }
    }

    fn resolve(text: &str, vars: &Vars, fs: &crate::plan::FakeFs) -> CapabilitySet {
        Profile::parse("p.toml", text)
            .and_then(|p| p.resolve_in(vars, fs))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn listed(v: &[PathEntry]) -> Vec<(String, bool)> {
        v.iter()
            .map(|e| (e.path.display().to_string(), e.required))
            .collect()
    }

    #[test]
    fn globs_match_what_exists_and_grants_are_required_unless_marked() {
        let fs = crate::plan::FakeFs::new()
            .file("/etc/ssh/ssh_host_rsa_key", "")
            .file("/etc/ssh/ssh_host_rsa_key.pub", "")
            .file("/ws/.env.local", "")
            .dir("/h/.cache");
        let caps = resolve(
            "[filesystem]\n\
             read = [\"/usr\", \"?/opt\", \"+{home}/.cache\", \"/usr/./lib/../share\"]\n\
             deny_read = [\"/etc/ssh/ssh_host_*_key\", \"/nothing/*\", \"{home}/.ssh\"]\n\
             write = [\"{workspace}\"]\n\
             deny_write = [\"{workspace}/.env*\", \"/etc/ssh/*_key\"]\n",
            &fake_vars("/ws"),
            &fs,
        );
        let s = |p: &str, r: bool| (p.to_string(), r);
        assert_eq!(
            listed(&caps.fs.read),
            [
                s("/usr", true),
                s("/opt", false),
                s("/h/.cache", false),
                s("/usr/share", true)
            ]
        );
        // A denial is optional: a path that does not exist costs nothing.
        assert_eq!(
            listed(&caps.fs.deny_read),
            [s("/etc/ssh/ssh_host_rsa_key", false), s("/h/.ssh", false)]
        );
        // A protected glob outside every writable tree is not expanded: it is read-only anyway.
        assert_eq!(listed(&caps.fs.deny_write), [s("/ws/.env.local", false)]);
        // Protected patterns in the workspace are also watched, unexpanded.
        assert_eq!(listed(&caps.fs.watch), [s("/ws/.env*", false)]);
        let p = Profile::parse("p.toml", "[filesystem]\nwrite = [\"+{home}/.cache\"]\n");
        let dirs = p.map(|p| p.dirs_to_create(&fake_vars("/ws")));
        assert_eq!(dirs.ok(), Some(vec![PathBuf::from("/h/.cache")]));
    }

    /// An `{env:NAME}` denial names each absolute path the caller's variable holds, nothing
    /// when it is unset; a grant or a bad name is an error at load.
    #[test]
    fn an_env_denial_names_what_the_variable_holds() {
        let text = "[filesystem]\ndeny_read = [\"{env:KUBECONFIG}\", \"{env:CARGO_HOME}/cred*\"]\n";
        let fs = crate::plan::FakeFs::new()
            .var("KUBECONFIG", "/k/a:rel/b::/k/c/")
            .var("CARGO_HOME", "/c[1]")
            .file("/c[1]/credentials.toml", "");
        let s = |p: &str| (p.to_string(), false);
        assert_eq!(
            listed(&resolve(text, &fake_vars("/ws"), &fs).fs.deny_read),
            [s("/k/a"), s("/k/c"), s("/c[1]/credentials.toml")]
        );
        let unset = crate::plan::FakeFs::new();
        assert!(listed(&resolve(text, &fake_vars("/ws"), &unset).fs.deny_read).is_empty());
        for bad in [
            "[filesystem]\nread = [\"{env:HOME}/x\"]\n",
            "[filesystem]\ndeny_read = [\"{env:home}/x\"]\n",
            "[filesystem]\ndeny_read = [\"{env:X}x\"]\n",
            "[filesystem]\ndeny_read = [\"{env:X}/{home}\"]\n",
        ] {
            assert!(Profile::parse("p.toml", bad).is_err(), "{bad}");
        }
    }

    /// sbx's quarantine in the state directory (`XDG_STATE_HOME` when set), when it exists, is
    /// denied whatever the profile; the one in `/var/tmp` is not looked at.
    #[test]
    fn the_quarantine_that_exists_is_denied() {
        let fallback = format!("/var/tmp/sbx-quarantine-{}", nix::unistd::geteuid());
        let fs = crate::plan::FakeFs::new()
            .dir("/h/.local/state/sbx/quarantine")
            .dir(&fallback);
        let denied =
            |fs: &crate::plan::FakeFs| listed(&resolve("", &fake_vars("/ws"), fs).fs.deny_read);
        let s = |p: &str| (p.to_string(), false);
        assert_eq!(denied(&fs), [s("/h/.local/state/sbx/quarantine")]);
        let xdg = fs
            .clone()
            .var("XDG_STATE_HOME", "/st")
            .dir("/st/sbx/quarantine");
        assert_eq!(denied(&xdg), [s("/st/sbx/quarantine")]);
        assert!(denied(&crate::plan::FakeFs::new()).is_empty());
    }

    /// A protected glob is expanded where its matches can be written: beneath a writable tree,
    /// or above one; elsewhere it is skipped.
    #[test]
    fn a_protected_glob_is_expanded_only_where_it_can_be_written() {
        let fs = crate::plan::FakeFs::new()
            .file("/h/.local/lib/py3/x.pth", "")
            .file("/h/ws/a.pth", "");
        let protect = "deny_write = [\"{home}/.local/lib/*/*.pth\", \"/h/*/a.pth\"]\n";
        let with = |write: &str| {
            let text = format!("[filesystem]\nwrite = [\"{write}\"]\n{protect}");
            listed(&resolve(&text, &fake_vars("/h/ws"), &fs).fs.deny_write)
        };
        let s = |p: &str| (p.to_string(), false);
        assert_eq!(with("{workspace}"), [s("/h/ws/a.pth")]);
        assert_eq!(
            with("{home}"),
            [s("/h/.local/lib/py3/x.pth"), s("/h/ws/a.pth")]
        );
        // `/h/*` lies above the writable tree: expanded, matches outside it included.
        assert_eq!(
            with("/h/.local/lib/py3"),
            [s("/h/.local/lib/py3/x.pth"), s("/h/ws/a.pth")]
        );
        assert_eq!(with("/other"), Vec::<(String, bool)>::new());
    }

    #[test]
    fn a_variable_s_value_is_never_a_wildcard() {
        let fs = crate::plan::FakeFs::new()
            .file("/w[1]/.env", "")
            .file("/w1/.env", "");
        let caps = resolve(
            "[filesystem]\nwrite = [\"{workspace}\"]\ndeny_write = [\"{workspace}/.env*\"]\n",
            &fake_vars("/w[1]"),
            &fs,
        );
        assert_eq!(listed(&caps.fs.deny_write), [("/w[1]/.env".into(), false)]);
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_its_line() {
        let p = Profile::parse("p.toml", "[filesystem]\nread = [\"/a\",\n  \"/b/[*\"]\n");
        let e = p.and_then(|p| p.resolve_in(&fake_vars("/ws"), &crate::plan::FakeFs::new()));
        let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("p.toml") && msg.contains(":3") && msg.contains("bad glob"),
            "{msg}"
        );
    }

    const PROTECT_GIT: &str =
        "[filesystem]\nwrite = [\"{workspace}\"]\ndeny_write = [\"{workspace}/.git/hooks\"]\n";

    #[test]
    fn the_files_that_steer_git_are_protected_with_the_git_directory() {
        let deny = |fs: &crate::plan::FakeFs| {
            let caps = resolve(PROTECT_GIT, &fake_vars("/ws"), fs);
            caps.fs
                .deny_write
                .iter()
                .map(|e| e.path.display().to_string())
                .collect::<Vec<_>>()
        };
        // A `.git` file names a git directory elsewhere: the file itself stays.
        let linked = crate::plan::FakeFs::new().file("/ws/.git", "gitdir: /x\n");
        assert_eq!(deny(&linked), ["/ws/.git/hooks", "/ws/.git"]);
        // The repository's hooksPath and includes inside the workspace; not a home-relative one.
        let repo = crate::plan::FakeFs::new().file(
            "/ws/.git/config",
            "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../extra.cfg\n\tpath = ~/x\n",
        );
        assert_eq!(
            deny(&repo),
            ["/ws/.git/hooks", "/ws/.githooks", "/ws/extra.cfg"]
        );
        // A hooksPath an included file or `config.worktree` sets, and what an included
        // file includes in turn.
        let chained = crate::plan::FakeFs::new()
            .file("/ws/.git/config", "[include]\n\tpath = /ws/conf/a.cfg\n")
            .file(
                "/ws/conf/a.cfg",
                "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = b.cfg\n",
            )
            .file(
                "/ws/.git/config.worktree",
                "[core]\n\thooksPath = wt-hooks\n",
            );
        assert_eq!(
            deny(&chained),
            [
                "/ws/.git/hooks",
                "/ws/.husky/_",
                "/ws/wt-hooks",
                "/ws/conf/a.cfg",
                "/ws/conf/b.cfg"
            ]
        );
        // The user's global hooksPath values, each of them: git uses the last one it reads
        // (~/.gitconfig after the XDG file) in every repository that sets none.
        let global = crate::plan::FakeFs::new()
            .file("/ws/.git/config", "")
            .file("/xdg/git/config", "[core]\n\thooksPath = from-xdg\n")
            .var("XDG_CONFIG_HOME", "/xdg");
        assert_eq!(deny(&global), ["/ws/.git/hooks", "/ws/from-xdg"]);
        let both = global.file("/h/.gitconfig", "[core]\n\thooksPath = from-home\n");
        assert_eq!(
            deny(&both),
            ["/ws/.git/hooks", "/ws/from-xdg", "/ws/from-home"]
        );
        // Whether or not the workspace is a repository, and `~/` as the home.
        let no_repo = crate::plan::FakeFs::new()
            .file("/h/.gitconfig", "[core]\n\thooksPath = ~/../ws/hooks\n");
        assert_eq!(deny(&no_repo), ["/ws/.git/hooks", "/ws/hooks"]);
        // A profile that does not protect `.git` adds nothing.
        let caps = resolve("", &fake_vars("/ws"), &both);
        assert!(caps.fs.deny_write.is_empty());
    }
}
