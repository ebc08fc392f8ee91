//! Where a command works: the one answer to "where am I" that the profile's variables, the
//! policy's path rules, the safety floor, access extraction and the shell analysis all read.
//!
//! [`setup`](crate::setup) builds it once per command from the workspace it names; the pipeline
//! takes it from the policy and the shell analysis borrows it for each call, and each run of
//! the executor takes it from its request (`RunRequest::context`). A library caller with only
//! a workspace path derives it by [`WorkspaceContext::of`] (`RunRequest::in_workspace`), as
//! setup does.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A workspace, the home of the account working in it, and the trees besides it that the
/// profile lets a command write.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct WorkspaceContext {
    /// The workspace root, absolute: `{workspace}` in a profile; relative path rules and the
    /// floor's "inside the workspace" are anchored here.
    pub root: PathBuf,
    /// The home directory: `{home}` in a profile, `~` in a rule or a command.
    pub home: PathBuf,
    /// Other homes the command may take for its own (the account's home in the password
    /// database, the `HOME` a run passes in): `{home}` in `deny_read` and `deny_write` is
    /// expanded for each of them too. Grants use `home` alone.
    pub other_homes: Vec<PathBuf>,
    /// The trees besides the workspace the profile's capability set lets a command write. The
    /// resolution of the profile makes them and does not read them; they are set from its
    /// capability set ([`WorkspaceContext::with_writable`]).
    pub writable: Vec<PathBuf>,
    /// `{tmp}`: the temporary directory `TMPDIR` names in the sandbox, one of the writable
    /// trees; `None` when the context does not come from a resolved profile.
    pub tmp: Option<PathBuf>,
    /// The variables of this process's environment whose names say they hold secrets
    /// (`environment::named_secret`): what a command run outside the sandbox that prints the
    /// whole environment (`env`, `printenv`, `export -p`) shows. The sandbox passes none.
    pub secret_vars: Vec<String>,
    /// `CDPATH` is set (not empty) in this process's environment, which a command inherits:
    /// the shell looks `cd NAME` up there before the working directory.
    pub cdpath: bool,
}

impl WorkspaceContext {
    /// `root` with `home` and nothing else: no other homes, no writable trees yet.
    pub fn new(root: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            home: home.into(),
            other_homes: Vec::new(),
            writable: Vec::new(),
            tmp: None,
            secret_vars: Vec::new(),
            cdpath: false,
        }
    }

    /// The context of `root` for this process: its home ([`home_dir`]) and, when it is
    /// another existing directory, the account's home in the password database.
    pub fn of(root: &Path) -> Self {
        let mut context = Self::new(root, home_dir());
        // A home that does not exist holds nothing to hide (`/nonexistent` for nobody); the
        // home itself is not looked at again.
        if let Some(h) = account_home().filter(|h| *h != context.home && h.is_dir()) {
            context.add_home(&h);
        }
        context.secret_vars = secret_vars(std::env::vars_os());
        context.cdpath = std::env::var_os("CDPATH").is_some_and(|p| !p.is_empty());
        context
    }

    /// The same context with `trees` as its writable trees.
    #[must_use]
    pub fn with_writable(mut self, trees: impl IntoIterator<Item = PathBuf>) -> Self {
        self.writable = trees.into_iter().collect();
        self
    }

    /// The context with `tmp` as its [`WorkspaceContext::tmp`].
    #[must_use]
    pub fn with_tmp(mut self, tmp: PathBuf) -> Self {
        self.tmp = Some(tmp);
        self
    }

    /// Add `home` to [`WorkspaceContext::other_homes`] unless it is already one of the homes.
    pub fn add_home(&mut self, home: &Path) {
        if !home.as_os_str().is_empty()
            && self.home != home
            && !self.other_homes.iter().any(|h| h == home)
        {
            self.other_homes.push(home.to_path_buf());
        }
    }

    /// Every home a denial is expanded for, `home` first.
    pub fn homes(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.home.as_path()).chain(self.other_homes.iter().map(PathBuf::as_path))
    }
}

/// Where sbx moves a run's protected paths (`exec::quarantine`): the state directory
/// (`$XDG_STATE_HOME/sbx/quarantine`, else `~/.local/state/sbx/quarantine`), and the one in
/// `/var/tmp` for when that lies inside a tree the sandbox writes. `state` is
/// `XDG_STATE_HOME`'s value, `home` the home; the sandbox hides both from the command.
pub fn quarantine_roots(state: Option<&std::ffi::OsStr>, home: &Path) -> [PathBuf; 2] {
    let fallback = format!("/var/tmp/sbx-quarantine-{}", nix::unistd::geteuid());
    [
        state_dir(state, home).join("quarantine"),
        PathBuf::from(fallback),
    ]
}

/// sbx's state directory, where its quarantine and the hook's audit log live:
/// `$XDG_STATE_HOME/sbx` (`state`) when that is absolute, else `~/.local/state/sbx`.
pub fn state_dir(state: Option<&std::ffi::OsStr>, home: &Path) -> PathBuf {
    state
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".local/state"))
        .join("sbx")
}

/// The names among `vars` that say they hold secrets, sorted.
pub fn secret_vars(
    vars: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<String> {
    use std::os::unix::ffi::OsStrExt;
    let mut names: Vec<String> = vars
        .into_iter()
        .filter(|(k, _)| crate::environment::named_secret(k.as_bytes()))
        .map(|(k, _)| k.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// This process's home directory: `HOME` when it is an absolute path, else the account's
/// home in the password database, else `/`.
pub fn home_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("HOME").filter(|h| Path::new(h).is_absolute()) {
        return PathBuf::from(h);
    }
    account_home().unwrap_or_else(|| PathBuf::from("/"))
}

/// The home directory of this process's user in the password database, which programs that
/// ignore `HOME` (ssh among them) take for theirs.
fn account_home() -> Option<PathBuf> {
    let uid = nix::unistd::geteuid().as_raw();
    // /etc/passwd first: the name service would read it too, after looking for nscd and
    // reading nsswitch.conf on every run. Accounts it does not list (LDAP, sssd, a container's
    // uid that no file names) are asked of the name service.
    listed_home(Path::new("/etc/passwd"), uid).or_else(|| name_service_home(uid))
}

/// The home the name service gives `uid`, asked of `getent`: sbx is linked statically, and a
/// static program cannot load the name service's modules itself (glibc then crashes loading
/// `libnss_systemd` for a uid no file lists). `None` when no service knows the uid.
fn name_service_home(uid: u32) -> Option<PathBuf> {
    let out = std::process::Command::new("getent")
        .args(["passwd", &uid.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    passwd_home(&out.stdout, uid)
}

/// What /etc/passwd was when it was last read: device, inode, size, change and modification
/// times. Every edit moves the change time (which no program can set back) and a replacement
/// (`usermod`, `vipw`) brings another inode.
type PasswdStamp = (u64, u64, u64, (i64, i64), (i64, i64));

/// The home a passwd file last gave a uid: the file, its stamp when it was read, the uid.
type Listed = (PathBuf, PasswdStamp, u32, Option<PathBuf>);

/// The last home read from a passwd file.
static LISTED: Mutex<Option<Listed>> = Mutex::new(None);

/// The home of `uid` in `passwd` (/etc/passwd). A caller that derives contexts one after
/// another (a library's runs given only a path) asks each time: the file is read again only
/// when its stamp changed. A stamp counts only once the file is older than the
/// clock tick (one second is ample): an edit within the tick it was read in might leave the
/// times as they were.
fn listed_home(passwd: &Path, uid: u32) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let stamp = std::fs::metadata(passwd).ok().map(|m| {
        let times = ((m.ctime(), m.ctime_nsec()), (m.mtime(), m.mtime_nsec()));
        (m.dev(), m.ino(), m.size(), times.0, times.1)
    });
    let mut cache = LISTED.lock().ok();
    if let (Some(s), Some(Some((p, k, u, home)))) = (stamp, cache.as_deref())
        && (p.as_path(), *k, *u) == (passwd, s, uid)
    {
        return home.clone();
    }
    let home = std::fs::read(passwd)
        .ok()
        .and_then(|text| passwd_home(&text, uid));
    let settled = |(_, _, _, c, m): &PasswdStamp| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let before = i64::try_from(now).unwrap_or(i64::MAX).saturating_sub(1);
        c.0 < before && m.0 < before
    };
    if let Some(c) = cache.as_deref_mut() {
        *c = stamp
            .filter(settled)
            .map(|s| (passwd.to_path_buf(), s, uid, home.clone()));
    }
    home
}

/// The home directory of `uid` in a passwd(5) text: the sixth field of the first line whose
/// third is `uid`.
fn passwd_home(text: &[u8], uid: u32) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let uid = uid.to_string();
    text.split(|b| *b == b'\n').find_map(|line| {
        let mut fields = line.split(|b| *b == b':');
        (fields.nth(2)? == uid.as_bytes())
            .then(|| fields.nth(2))
            .flatten()
            .map(|home| PathBuf::from(std::ffi::OsStr::from_bytes(home)))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{WorkspaceContext, listed_home, passwd_home};
    use std::path::{Path, PathBuf};

    #[test]
    fn passwd_home_is_the_first_line_with_the_uid() {
        let text = b"root:x:0:0:root:/root:/bin/bash\n+::::::\nu:x:1000:1000:A, B:/home/u:/bin/sh\nv:x:1000:1:v:/home/v:/bin/sh";
        assert_eq!(passwd_home(text, 0), Some(PathBuf::from("/root")));
        assert_eq!(passwd_home(text, 1000), Some(PathBuf::from("/home/u")));
        assert_eq!(passwd_home(text, 100), None);
        assert_eq!(passwd_home(b"short:x:7", 7), None);
    }

    #[test]
    fn passwd_home_agrees_with_the_name_service() {
        let uid = nix::unistd::geteuid();
        let nss = nix::unistd::User::from_uid(uid).unwrap().map(|u| u.dir);
        let text = std::fs::read("/etc/passwd").unwrap();
        if let Some(listed) = passwd_home(&text, uid.as_raw()) {
            assert_eq!(Some(listed), nss);
        }
    }

    /// A passwd file read again answers as it says now: when edited in place within the
    /// second it was read in (its times may not move), and when edited once it had settled.
    #[test]
    fn a_kept_passwd_home_follows_every_edit() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("passwd");
        let line = |home: &str| format!("u:x:4242:4242::{home}:/bin/sh\n");
        std::fs::write(&p, line("/home/a")).unwrap();
        assert_eq!(listed_home(&p, 4242), Some(PathBuf::from("/home/a")));
        std::fs::write(&p, line("/home/b")).unwrap();
        assert_eq!(listed_home(&p, 4242), Some(PathBuf::from("/home/b")));
        std::thread::sleep(std::time::Duration::from_millis(2100));
        assert_eq!(listed_home(&p, 4242), Some(PathBuf::from("/home/b")));
        std::fs::write(&p, line("/home/c")).unwrap();
        assert_eq!(listed_home(&p, 4242), Some(PathBuf::from("/home/c")));
        assert_eq!(listed_home(&p, 4243), None);
        std::fs::remove_file(&p).unwrap();
        assert_eq!(listed_home(&p, 4242), None);
    }

    #[test]
    fn a_home_is_added_once_and_never_as_the_home_itself() {
        let mut c = WorkspaceContext::new("/w", "/h1");
        c.add_home(Path::new("/h2"));
        c.add_home(Path::new("/h1"));
        c.add_home(Path::new("/h2"));
        c.add_home(Path::new(""));
        assert_eq!(
            c.homes().collect::<Vec<_>>(),
            [Path::new("/h1"), Path::new("/h2")]
        );
    }
}
