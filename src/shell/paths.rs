//! Where a path lands: the workspace, the writable set, the safety floor,
//! or outside. Relative paths are joined to the working directory and walked
//! as the kernel walks them (each link followed before a later `..`, lexical
//! past the first missing name), so that a symlink in the workspace is judged
//! by its target.

use super::ShellContext;
use crate::links::{Follower, LinkError, Step};
use std::path::{Component, Path, PathBuf};

/// Where a write lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Zone {
    /// Inside the workspace or the writable set.
    Inside,
    /// Anywhere else.
    Outside,
    /// The safety floor; the string names the protected kind.
    Floor(&'static str),
    /// A path the safety floor asks about (git internals other than hooks and config).
    Guarded(&'static str),
}

/// Fold `.` and `..` without touching the file system.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(x) => out.push(x.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// The path `value` names from `cwd` as the kernel resolves it ([`canonical_prefix`]):
/// absolute, links in existing components followed, `..` applied after them.
pub(crate) fn resolve(value: &str, cwd: &Path) -> PathBuf {
    canonical_prefix(&joined(value, cwd), cwd)
}

/// What a program does with the last name of a path it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Opens what a link there leads to (`cat`, `cp`, `chmod`).
    Target,
    /// Acts on the name itself (`rm`, `mv`, `ls -l`, `stat`, `du`): a link there is removed,
    /// renamed or looked at, and what it leads to is untouched.
    Entry,
    /// The name a file is renamed to (`mv`'s destination): a link there is replaced, unless it
    /// leads to a directory, which the file then moves into.
    Rename,
}

impl Reach {
    /// Of a path's two resolutions ([`split_real`]), the one this reach lands on. A trailing
    /// `/` or `.` makes the kernel follow the last name whatever the program means.
    fn pick(self, value: &str, named: PathBuf, real: PathBuf) -> PathBuf {
        let follows = follows_last(value) || matches!(value, "." | "..");
        match self {
            Reach::Entry if !follows => named,
            Reach::Rename if !follows && !real.is_dir() => named,
            _ => real,
        }
    }
}

/// Whether the kernel follows the last name of `value` whatever the program means: a
/// trailing `/`, `/.` or `/..`.
pub(crate) fn follows_last(value: &str) -> bool {
    value.ends_with('/') || value.ends_with("/.") || value.ends_with("/..")
}

/// [`resolve`] for a program that reaches as `reach` says.
pub(crate) fn resolve_reaching(value: &str, cwd: &Path, reach: Reach) -> PathBuf {
    match reach {
        Reach::Target => resolve(value, cwd),
        Reach::Entry | Reach::Rename => {
            let (named, real) = split_real(&joined(value, cwd), cwd);
            reach.pick(value, named, real)
        }
    }
}

/// `value` made absolute against `cwd`, nothing folded.
fn joined(value: &str, cwd: &Path) -> PathBuf {
    if Path::new(value).is_absolute() {
        PathBuf::from(value)
    } else {
        cwd.join(value)
    }
}

/// Where a `/proc` link of the process that runs the command points, as the kernel resolves
/// it for that process rather than for sbx: `/proc/self/cwd` (and `thread-self`'s, and their
/// tasks') is the command's working directory and `/proc/self/root` is `/`. Another process's
/// `cwd` and `root` are that process's (a terminal in the home): they are read as the links
/// they are. `dir` is the resolved prefix, `name` the next component.
pub(crate) fn proc_link(dir: &Path, name: &std::ffi::OsStr, cwd: &Path) -> Option<PathBuf> {
    let text = name.to_str()?;
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    // A process or thread that does not exist here (yet) is still a process directory.
    let parent = dir == Path::new("/proc")
        || (dir.starts_with("/proc") && dir.ends_with("task") && dir.iter().count() == 4);
    // `self` is where the command's own process stands, not sbx's: kept as the name it is.
    if (digits && parent) || (dir == Path::new("/proc") && own_name(text)) {
        return Some(dir.join(name));
    }
    if !is_proc_process(dir) {
        return None;
    }
    match text {
        "task" => Some(dir.join(name)),
        "cwd" if own_process(dir) => Some(canon_root(cwd)),
        "root" if own_process(dir) => Some(PathBuf::from("/")),
        "cwd" | "root" => {
            THROUGH_OTHER.with(|t| t.set(true));
            None
        }
        _ => None,
    }
}

thread_local! {
    /// Whether a path resolved since [`take_through_other`] last asked passed through another
    /// process's `cwd` or `root`, by any spelling or link: where it lands can change before the
    /// command runs.
    static THROUGH_OTHER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a path resolved since the last call passed through another process's `cwd` or
/// `root` ([`proc_link`]); the answer starts afresh.
pub(crate) fn take_through_other() -> bool {
    THROUGH_OTHER.with(|t| t.replace(false))
}

/// `/proc/self`, `/proc/thread-self`, `/proc/$$` or a task of theirs: the command's own
/// process.
fn own_process(dir: &Path) -> bool {
    dir.iter()
        .nth(2)
        .and_then(|c| c.to_str())
        .is_some_and(own_name)
}

/// A `/proc` entry that names the command's own process: `self`, `thread-self`, or the pid
/// the analysis gives `$$`.
fn own_name(name: &str) -> bool {
    matches!(name, "self" | "thread-self") || name == super::words::SHELL_PID
}

/// `/proc/<pid>` or `/proc/<pid>/task/<tid>`, after `self` and `thread-self` are followed.
fn is_proc_process(dir: &Path) -> bool {
    let comps: Vec<&str> = dir.iter().filter_map(|c| c.to_str()).collect();
    let pid = |s: &&str| s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty();
    match comps.as_slice() {
        ["/", "proc", p] => pid(p) || *p == "self" || *p == "thread-self",
        ["/", "proc", p, "task", t] => pid(p) && pid(t),
        _ => false,
    }
}

/// A path through an open file descriptor with more beneath it (`/dev/fd/3/x`,
/// `/proc/self/fd/3/../y`): where it lands depends on what the command has open, which is
/// only known when it runs.
pub(crate) fn through_descriptor(value: &str) -> bool {
    descriptor_at(value).is_some_and(|(i, n)| n > i + 1)
}

/// A path that names an open descriptor itself or a path beneath it (`/dev/fd/0`,
/// `/dev/stdin`, `/proc/self/fd/3`): for a tool that reads in the harness's own process,
/// one of the harness's descriptors, which nothing here can see.
pub(crate) fn names_descriptor(value: &str) -> bool {
    descriptor_at(value).is_some_and(|(i, n)| n > i)
}

/// Where the descriptor's number (or `stdin`, ...) stands among the path's components, and
/// how many components it has. Another process's `cwd` and `root` count as descriptors too,
/// the links themselves included: that process may change directory between the check and the run,
/// and a process started by the command itself (`cd ~ && sleep 9 &`) may take a pid that
/// names nothing yet.
fn descriptor_at(value: &str) -> Option<(usize, usize)> {
    let comps: Vec<&str> = value.split('/').filter(|c| !c.is_empty()).collect();
    let other = |p: &&str| !own_name(p);
    let fd_at = match comps.as_slice() {
        ["dev", "fd", ..] => Some(2),
        ["dev", "stdin" | "stdout" | "stderr", ..] => Some(1),
        ["proc", _, "fd" | "map_files", ..] => Some(3),
        ["proc", _, "task", _, "fd" | "map_files", ..] => Some(5),
        ["proc", p, "cwd" | "root", ..] if other(p) => Some(1),
        ["proc", p, "task", _, "cwd" | "root", ..] if other(p) => Some(3),
        _ => None,
    };
    fd_at.map(|i| (i, comps.len()))
}

/// `p` (absolute; `.` and `..` as written) with every symbolic link in its existing
/// components followed, as the kernel resolves it: walking down from the root, one
/// `readlink` per component up to the first that does not exist (nothing beneath it can be a
/// link), each link followed before the next `..` applies, so that `l/../x` with `l` a link
/// is `x` beside where `l` leads. A `..` past the first missing component folds lexically.
/// The walk is [`links::Follower`]'s, asked through [`ask`].
pub(crate) fn canonical_prefix(p: &Path, cwd: &Path) -> PathBuf {
    split_real(p, cwd).1
}

/// [`canonical_prefix`], with the path's last name unfollowed beside it (its directory
/// resolved): what `rm` or `mv` of a link acts on. One walk gives both.
pub(crate) fn split_real(p: &Path, cwd: &Path) -> (PathBuf, PathBuf) {
    if !p.is_absolute() {
        return (p.to_path_buf(), p.to_path_buf());
    }
    let mut follower = Follower::new(|at: &Path| ask(at, cwd));
    match follower.resolve_split(p) {
        Ok((named, real)) => (named.path, real.path),
        // A loop: the kernel answers ELOOP and reaches nothing; the path as written stands.
        Err(LinkError::TooMany | LinkError::Unreadable { .. }) => {
            let lexical = normalize(p);
            (lexical.clone(), lexical)
        }
    }
}

/// What is at `at` for the command: a `/proc/<pid>` link as the command's process sees it
/// ([`proc_link`]), else the link's text read (one `readlink`, which also tells a missing
/// name from one that is no link).
fn ask(at: &Path, cwd: &Path) -> Step {
    use std::os::unix::ffi::OsStrExt;
    // Most paths are not in /proc: no parsing of their components for it.
    let in_proc = at.as_os_str().as_bytes().starts_with(b"/proc/");
    if in_proc
        && let (Some(dir), Some(name)) = (at.parent(), at.file_name())
        && let Some(to) = proc_link(dir, name, cwd)
    {
        return if to == at {
            Step::Other
        } else {
            Step::Link(Some(to))
        };
    }
    match std::fs::read_link(at) {
        Ok(text) => Step::Link(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Step::Missing,
        Err(_) => Step::Other,
    }
}

thread_local! {
    /// Canonical forms of the context's roots, valid for one analysis.
    static ROOTS: std::cell::RefCell<Vec<(PathBuf, PathBuf)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Forget cached roots; called at the start of every analysis so that a
/// symlink changed between two calls is seen.
pub(crate) fn reset_roots() {
    ROOTS.with(|r| r.borrow_mut().clear());
}

/// `p` canonicalised, cached for the length of one analysis.
pub(crate) fn canon_root(p: &Path) -> PathBuf {
    if let Some(hit) = ROOTS.with(|r| {
        r.borrow()
            .iter()
            .find(|(k, _)| k == p)
            .map(|(_, v)| v.clone())
    }) {
        return hit;
    }
    let c = std::fs::canonicalize(p).unwrap_or_else(|_| normalize(p));
    ROOTS.with(|r| r.borrow_mut().push((p.to_path_buf(), c.clone())));
    c
}

/// Floor check on one absolute path.
pub(crate) fn floor_kind(p: &Path, ctx: &ShellContext) -> Option<&'static str> {
    let home_ssh = ctx.workspace.home.join(".ssh");
    if p.starts_with(&home_ssh) || p.starts_with(canon_root(&home_ssh)) {
        return Some("~/.ssh");
    }
    let comps: Vec<&str> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => None,
        })
        .collect();
    for (i, c) in comps.iter().enumerate() {
        if *c == ".git" {
            return Some(git_kind(comps.get(i + 1..).unwrap_or(&[])));
        }
        if (*c == ".github" || *c == ".gitea" || *c == ".forgejo")
            && comps.get(i + 1).is_some_and(|n| *n == "workflows")
        {
            return Some("CI workflow");
        }
    }
    let name = comps.last().copied().unwrap_or("");
    if name == ".gitlab-ci.yml" || name == ".gitmodules" {
        return Some("CI or git configuration");
    }
    if name == ".env" || (name.starts_with(".env.") && !is_env_template(name)) {
        return Some(".env file");
    }
    if name == ".envrc" {
        return Some(DIRENV);
    }
    if ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
        .iter()
        .any(|k| name.starts_with(k))
    {
        return Some("private key");
    }
    if name == "authorized_keys" {
        return Some("~/.ssh");
    }
    let in_home = p
        .parent()
        .is_some_and(|d| d == ctx.workspace.home || d == canon_root(&ctx.workspace.home));
    if in_home && tables::RC_FILES.contains(&name) {
        return Some("shell start-up file");
    }
    None
}

/// What a path inside a `.git` directory is: hooks and the repository's configuration run
/// programs (`core.hooksPath`, `core.pager`, aliases), so writing them is persistence; the
/// rest (`HEAD`, `info/exclude`, `description`, refs) is ordinary repository state.
fn git_kind(below: &[&str]) -> &'static str {
    let hooks = below.contains(&"hooks");
    // The directory itself holds the hooks and the configuration.
    if below.is_empty() {
        return GIT_PROGRAMS;
    }
    let config = below.last().is_some_and(|n| *n == "config")
        && (below.len() == 1 || below.first().is_some_and(|m| *m == "modules"));
    if hooks || config {
        GIT_PROGRAMS
    } else {
        GIT_STATE
    }
}

/// Floor kinds for `.git`: the parts that run programs (denied) and the rest (asked).
pub(crate) const GIT_PROGRAMS: &str = ".git hooks or config";
pub(crate) const GIT_STATE: &str = ".git internals";

/// `.envrc`, which direnv loads into every later shell in the directory: asked about, so that
/// a profile that keeps it read-only refuses it with its own line (`plan:deny-write`).
pub(crate) const DIRENV: &str = "direnv file";

/// A name (lower case) of source code or documentation, or of a template: a component
/// `example`, `sample`, `template` or `dist` after its first dot (`.env.example`).
fn is_code_or_template(name: &str) -> bool {
    const CODE: &[&str] = &[
        "rs", "py", "go", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "kt", "c", "h", "cc",
        "cpp", "hpp", "rb", "php", "cs", "swift", "scala", "ex", "exs", "md", "rst", "adoc",
    ];
    let mut parts = name.trim_start_matches('.').split('.').skip(1);
    let ext = name.rsplit_once('.').map(|(_, e)| e);
    ext.is_some_and(|e| CODE.contains(&e))
        || parts.any(|p| matches!(p, "example" | "sample" | "template" | "dist" | "tmpl"))
}

fn is_env_template(name: &str) -> bool {
    matches!(
        name,
        ".env.example" | ".env.sample" | ".env.template" | ".env.dist"
    )
}

use super::tables;

/// Judge a write to `value` (a word's best-effort value) from `cwd`.
pub(crate) fn judge_write(value: &str, cwd: &Path, ctx: &ShellContext) -> (Zone, PathBuf) {
    judge_write_reaching(value, cwd, ctx, Reach::Target)
}

/// [`judge_write`] for a program that reaches as `reach` says: one that removes or renames
/// a link (`Reach::Entry`) writes where the link is, not where it leads.
pub(crate) fn judge_write_reaching(
    value: &str,
    cwd: &Path,
    ctx: &ShellContext,
    reach: Reach,
) -> (Zone, PathBuf) {
    // The floor judges both the file a write reaches and the name itself, unfollowed (what
    // `rm` or `mv` of a link acts on), each as the kernel resolves it: a `..` after a link
    // climbs from the link's target, not from the link.
    let (named, target) = split_real(&joined(value, cwd), cwd);
    // The floor is judged at both whatever the program means: a link into `.git/hooks` may
    // lead there by the time the command reaches it (an earlier command of the line made it).
    let kinds = [floor_kind(&target, ctx), floor_kind(&named, ctx)];
    let real = reach.pick(value, named, target);
    if let Some(k) = kinds
        .iter()
        .flatten()
        .find(|k| **k != GIT_STATE && **k != DIRENV)
    {
        return (Zone::Floor(k), real);
    }
    if let Some(k) = kinds.iter().flatten().next() {
        return (Zone::Guarded(k), real);
    }
    if inside(&real, ctx) {
        (Zone::Inside, real)
    } else {
        (Zone::Outside, real)
    }
}

pub(crate) fn inside(real: &Path, ctx: &ShellContext) -> bool {
    std::iter::once(&ctx.workspace.root)
        .chain(ctx.workspace.writable.iter())
        .filter(|r| !r.as_os_str().is_empty())
        .any(|r| real.starts_with(canon_root(r)))
}

/// Whether the tree at `real` holds the home directory.
pub(crate) fn holds_home(real: &Path, ctx: &ShellContext) -> bool {
    let home = &ctx.workspace.home;
    !home.as_os_str().is_empty() && (home.starts_with(real) || canon_root(home).starts_with(real))
}

/// Inside the workspace itself, the writable set aside.
pub(crate) fn in_workspace(real: &Path, ctx: &ShellContext) -> bool {
    !ctx.workspace.root.as_os_str().is_empty() && real.starts_with(canon_root(&ctx.workspace.root))
}

/// Paths whose recursive removal or wiping is plainly malicious: `/`, the
/// home directory and its ancestors, top-level system directories, the
/// workspace root's ancestors.
pub(crate) fn is_critical(real: &Path, ctx: &ShellContext) -> bool {
    if real == Path::new("/") {
        return true;
    }
    let home = canon_root(&ctx.workspace.home);
    if !ctx.workspace.home.as_os_str().is_empty()
        && (home.starts_with(real) || ctx.workspace.home.starts_with(real))
    {
        return true;
    }
    let ws = canon_root(&ctx.workspace.root);
    if !ctx.workspace.root.as_os_str().is_empty() && ws.starts_with(real) && ws != real {
        return true;
    }
    let mut comps = real.components();
    comps.next();
    let first = comps.next();
    let depth_one = comps.next().is_none();
    depth_one
        && first.is_some_and(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|n| tables::SYSTEM_DIRS.contains(&n))
        })
}

/// The home directory of `user` from the password database, as `~user` expands.
pub(crate) fn user_home(user: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == user).then(|| f.nth(4).map(PathBuf::from))?
    })
}

/// Credentials and keys whose reading is asked about, and whose sending over
/// the network is denied.
pub(crate) fn is_secret(value: &str, ctx: &ShellContext) -> bool {
    let p = Path::new(value);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let lowered = value.to_ascii_lowercase();
    if floor_kind(&normalize(p), ctx).is_some_and(|k| {
        k != "CI workflow"
            && k != GIT_STATE
            && k != GIT_PROGRAMS
            && k != "shell start-up file"
            && k != "CI or git configuration"
    }) {
        return true;
    }
    // Names compare without case, as the parts do: on a case-sensitive file system
    // `~/.Netrc` is another file, but one named to pass for a secret is asked about (the plan
    // denies it only where the directory folds case, see `pipeline::fold`).
    let name_lowered = name.to_ascii_lowercase();
    // Source code and documentation about secrets (`src/secrets.rs`), and the templates a
    // project commits for its secrets (`.env.example`, `credentials.sample.yml`), hold none:
    // only their directories can mark them.
    if is_code_or_template(&name_lowered) {
        let dir = &lowered[..lowered.len() - name_lowered.len()];
        return tables::SECRET_PARTS.iter().any(|s| dir.contains(s));
    }
    tables::SECRET_NAMES.contains(&name_lowered.as_str())
        // `credentials.toml` (cargo), `credentials.db` (gcloud), `credentials.tfrc.json`
        // (terraform), `application_default_credentials.json`.
        || name_lowered.starts_with("credentials.")
        || name_lowered.ends_with("_credentials.json")
        || tables::SECRET_PARTS.iter().any(|s| lowered.contains(s))
        || name.ends_with(".pem")
        || name.ends_with(".key")
        // A process's environment: the tokens it was started with; and its memory, which
        // holds what it read since (an agent's keys, a token it was sent).
        || (matches!(name, "environ" | "mem") && value.starts_with("/proc/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::WorkspaceContext;

    fn ctx(workspace: &WorkspaceContext) -> ShellContext<'_> {
        ShellContext {
            cwd: workspace.root.clone(),
            workspace,
        }
    }

    /// Source about secrets and committed templates are not secrets; the real files, and
    /// anything in a secret directory, are.
    #[test]
    fn code_and_templates_about_secrets_are_not_secrets() {
        let w = WorkspaceContext::new(Path::new("/ws"), PathBuf::from("/home/u"));
        let c = ctx(&w);
        for plain in [
            "src/secrets.rs",
            "lib/secret_manager.py",
            "docs/secrets.md",
            ".env.example",
            ".env.sample",
            "config/credentials.example.yml",
            "secrets.yml.template",
        ] {
            assert!(!is_secret(plain, &c), "{plain}");
        }
        for secret in [
            ".env",
            ".env.local",
            "config/secrets.yml",
            "credentials.json",
            "/home/u/.ssh/config.md",
            "/home/u/.aws/notes.md",
            "deploy/private_key",
            "server.key",
        ] {
            assert!(is_secret(secret, &c), "{secret}");
        }
    }

    #[test]
    fn symlink_pointing_out_is_outside() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let ws = root.path().join("ws");
        let out = root.path().join("elsewhere");
        std::fs::create_dir_all(&ws)?;
        std::fs::create_dir_all(&out)?;
        std::os::unix::fs::symlink(&out, ws.join("link"))?;
        let w = WorkspaceContext::new(&ws, root.path().join("home"));
        let c = ctx(&w);
        assert_eq!(judge_write("link/f", &ws, &c).0, Zone::Outside);
        assert_eq!(judge_write("plain/f", &ws, &c).0, Zone::Inside);
        Ok(())
    }

    #[test]
    fn symlink_into_git_is_floor() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks"))?;
        std::os::unix::fs::symlink(ws.join(".git/hooks"), ws.join("h"))?;
        let w = WorkspaceContext::new(&ws, root.path().join("home"));
        let c = ctx(&w);
        assert!(matches!(
            judge_write("h/pre-commit", &ws, &c).0,
            Zone::Floor(_)
        ));
        assert_eq!(judge_write("hooks/pre-commit", &ws, &c).0, Zone::Inside);
        Ok(())
    }

    /// A `..` after a link climbs from the link's target: a workspace link into the home
    /// reaches the home's start-up file, and one into `.git/hooks` climbs back into the
    /// workspace (lexically, the first is a workspace file and the second outside it).
    #[test]
    fn a_dotdot_after_a_link_climbs_from_its_target() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let base = root.path().canonicalize()?;
        let (ws, home) = (base.join("ws"), base.join("home"));
        std::fs::create_dir_all(ws.join(".git/hooks"))?;
        std::fs::create_dir_all(home.join("proj"))?;
        std::os::unix::fs::symlink(home.join("proj"), ws.join("into-home"))?;
        std::os::unix::fs::symlink(ws.join(".git/hooks"), ws.join("hooks-link"))?;
        let w = WorkspaceContext::new(&ws, &home);
        let c = ctx(&w);
        assert_eq!(
            judge_write("into-home/../.bashrc", &ws, &c),
            (Zone::Floor("shell start-up file"), home.join(".bashrc"))
        );
        assert_eq!(
            judge_write("hooks-link/../../src/x.rs", &ws, &c),
            (Zone::Inside, ws.join("src/x.rs"))
        );
        assert_eq!(resolve("into-home/../x", &ws), home.join("x"));
        // The name itself, unfollowed, is judged too: removing the link touches the
        // workspace, its target's files are the home's.
        assert_eq!(
            split_real(&ws.join("into-home"), &ws),
            (ws.join("into-home"), home.join("proj"))
        );
        Ok(())
    }

    #[test]
    fn dotdot_escapes() {
        let w = WorkspaceContext::new("/nonexistent-ws/a", "/nonexistent-home");
        let c = ctx(&w);
        let cwd = Path::new("/nonexistent-ws/a");
        assert_eq!(judge_write("../../etc/x", cwd, &c).0, Zone::Outside);
        assert_eq!(judge_write("b/../c", cwd, &c).0, Zone::Inside);
        assert!(is_critical(Path::new("/"), &c));
        assert!(is_critical(Path::new("/nonexistent-home"), &c));
        assert!(is_critical(Path::new("/etc"), &c));
        assert!(!is_critical(Path::new("/etc/x"), &c));
    }
}
