//! The built-in secrets list, read from the profiles themselves: every entry is unreadable under
//! every built-in profile, as root and as uid 65534, paired with the same file readable outside
//! the sandbox; and the documented lists name every entry.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;
use sbx::exec::{Output, RunRequest, Sandbox};
use sbx::profile::{BUILTIN_NAMES, Profile};
use std::path::{Path, PathBuf};

/// A profile's `deny_read` patterns, as written.
fn deny_read(profile: &str) -> Vec<String> {
    let p = Profile::load(profile).unwrap();
    p.deny_read.iter().map(|e| e.pattern.clone()).collect()
}

/// A path that a pattern's glob matches: `*` as `-sbx`.
fn instance(pattern: &str) -> String {
    pattern.replace('*', "-sbx").replace('?', "x")
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// The entry is a file holding the sentinel.
    File,
    /// The entry is a directory with a file holding the sentinel.
    Dir,
}

fn sentinel(i: usize, shape: Shape) -> String {
    format!("SBX-CRED-{i}-{shape:?}-c0ffee")
}

/// Where an `{env:NAME}` entry's variable points in `s`: a directory of its own per name.
fn env_dir(s: &Scratch, name: &str) -> PathBuf {
    s.root.path().join("env").join(name)
}

/// The variables the `{env:NAME}` entries name, each set to its [`env_dir`].
fn env_vars(s: &Scratch, entries: &[String]) -> Vec<(String, PathBuf)> {
    let mut names: Vec<String> = entries
        .iter()
        .filter_map(|e| e.strip_prefix("{env:")?.split_once('}'))
        .map(|(n, _)| n.to_string())
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|n| (n.clone(), env_dir(s, &n)))
        .collect()
}

/// Where an entry lies in `s`: a `{home}` one in its home, an `{env:NAME}` one beneath the
/// directory its variable names; `None` for an absolute one.
fn planted_at(s: &Scratch, e: &str) -> Option<PathBuf> {
    if let Some(rel) = e.strip_prefix("{home}/") {
        return Some(s.home.join(instance(rel)));
    }
    let (name, rest) = e.strip_prefix("{env:")?.split_once('}')?;
    let rest = rest.trim_start_matches('/');
    let dir = env_dir(s, name);
    Some(if rest.is_empty() {
        dir
    } else {
        dir.join(instance(rest))
    })
}

/// Make every `{home}` and `{env:NAME}` entry in `s`, shaped as `shape`; return the path each
/// one's sentinel is read from.
fn plant(s: &Scratch, entries: &[String], shape: Shape) -> Vec<(usize, String, PathBuf)> {
    if matches!(shape, Shape::File) {
        // Scratch's own `~/.ssh` is a directory; an earlier call may have made it a file.
        let _ = std::fs::remove_dir_all(s.home.join(".ssh"));
    }
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(path) = planted_at(s, e) else {
            continue;
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = match shape {
            Shape::File => path.clone(),
            Shape::Dir => {
                std::fs::create_dir_all(&path).unwrap();
                path.join("secret")
            }
        };
        std::fs::write(&file, sentinel(i, shape)).unwrap();
        out.push((i, e.clone(), file));
    }
    s.chown_all();
    out
}

/// A script that prints what it can read of each file.
fn reader(files: &[(usize, String, PathBuf)]) -> String {
    files
        .iter()
        .map(|(_, _, f)| format!("cat '{}' 2>/dev/null; echo", f.display()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_secrets_list_is_the_same_in_every_builtin_and_has_no_nested_entries() {
    let base = deny_read("base");
    assert!(base.len() > 100, "only {} entries", base.len());
    for name in BUILTIN_NAMES {
        let list = deny_read(name);
        for e in &base {
            assert!(list.contains(e), "{name} lacks {e}");
        }
    }
    // Nested entries would cost a mount for nothing, and could not be planted one by one.
    for a in &base {
        for b in &base {
            assert!(
                a == b || !b.starts_with(&format!("{a}/")),
                "{b} lies inside {a}"
            );
        }
        assert!(
            a.starts_with("{home}/") || a.starts_with("{env:") || a.starts_with('/'),
            "{a}: the test plants only {{home}} and {{env:...}} entries and checks absolute ones"
        );
    }
}

/// Under every built-in, in the sandbox's mount namespace (hidden by mounts) and without one
/// (`SBX_DISABLE_USERNS=1`: kept out by Landlock rules granted around them).
#[test]
fn every_home_secret_is_unreadable_under_every_builtin() {
    for u in users() {
        for (shape, no_userns) in [
            (Shape::File, false),
            (Shape::Dir, false),
            (Shape::File, true),
            (Shape::Dir, true),
        ] {
            let s = Scratch::new(u);
            let how = format!("{} {shape:?} (no user namespace: {no_userns})", s.label());
            for name in BUILTIN_NAMES {
                let entries = deny_read(name);
                let files = plant(&s, &entries, shape);
                assert!(
                    files.len() > 80,
                    "{name}: only {} home entries",
                    files.len()
                );
                let script = reader(&files);
                // Paired: outside the sandbox the same user reads every one of them.
                let outside = stdout(&s.outside(&script));
                let mut c = s.command(name, &script);
                if no_userns {
                    c.env("SBX_DISABLE_USERNS", "1");
                }
                c.envs(env_vars(&s, &entries));
                let inside = c.output().unwrap();
                assert!(
                    stdout(&inside).lines().count() >= files.len(),
                    "{how} {name}: the reader did not run: {}",
                    text(&inside)
                );
                for (i, entry, _) in &files {
                    let mark = sentinel(*i, shape);
                    assert!(
                        outside.contains(&mark),
                        "{how}: {entry} not readable outside"
                    );
                    assert!(
                        !text(&inside).contains(&mark),
                        "{how} {name}: {entry} was read inside"
                    );
                }
            }
        }
    }
}

/// `dev:inode` of each path, one per line (`-` when it cannot be seen).
fn identities(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| format!("stat -c %d:%i '{}' 2>/dev/null || echo -", p.display()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_host_secret_that_exists_is_hidden_under_every_builtin() {
    // Only root reads the host's secrets outside the sandbox, which is the other half of the
    // pair; for any other user they are unreadable either way.
    if users().is_empty() || !nix::unistd::geteuid().is_root() {
        eprintln!("SKIP: host secrets are checked as root");
        return;
    }
    let s = Scratch::new(None);
    for name in BUILTIN_NAMES {
        let mut paths = Vec::new();
        for e in deny_read(name).iter().filter(|e| e.starts_with('/')) {
            let found: Vec<PathBuf> = glob::glob(e).unwrap().filter_map(Result::ok).collect();
            if found.is_empty() {
                eprintln!("{e}: not on this host, not checked");
            }
            paths.extend(found);
        }
        assert!(!paths.is_empty(), "no host secret to check (/etc/shadow?)");
        let script = identities(&paths);
        let outside = stdout(&s.outside(&script));
        let inside = s.run(name, &script);
        let (outside, inside_out): (Vec<&str>, Vec<String>) = (
            outside.lines().collect(),
            stdout(&inside).lines().map(str::to_string).collect(),
        );
        assert_eq!(inside_out.len(), paths.len(), "{name}: {}", text(&inside));
        for ((p, o), i) in paths.iter().zip(&outside).zip(&inside_out) {
            assert_ne!(*o, "-", "{}: not visible outside", p.display());
            assert_ne!(o, i, "{name}: {} is the host's own inside", p.display());
        }
    }
}

#[test]
fn home_secrets_are_hidden_in_the_home_the_command_is_given() {
    if !kernel_ready() {
        return;
    }
    // This process's HOME is another directory: only the request's HOME names this one.
    let s = Scratch::new(None);
    assert_ne!(
        std::env::var_os("HOME").as_deref(),
        Some(s.home.as_os_str())
    );
    std::fs::write(s.home.join(".netrc"), "SENTINEL-NETRC-a41c\n").unwrap();
    let wide = s.write_profile(
        "wide",
        "[filesystem]\nread = [\"/\"]\nexecute = [\"/\"]\nwrite = [\"{workspace}\"]\n",
    );
    let run = |profile: &str| {
        let sandbox = Sandbox::new(Profile::load(profile).unwrap());
        let argv = ["sh", "-c", "cat \"$HOME/.netrc\" \"$HOME/.ssh/id_rsa\""];
        let mut req = RunRequest::in_workspace(argv, &s.ws);
        req.cwd = s.ws.clone();
        req.env = vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("HOME".into(), s.home.clone().into()),
        ];
        req.output = Output::Collect;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = rt.block_on(sandbox.run(req, None)).unwrap();
        String::from_utf8_lossy(&r.stdout).into_owned()
    };
    let blocked = run("workspace");
    assert!(
        !blocked.contains("SENTINEL-NETRC") && !blocked.contains("SENTINEL-SSH"),
        "read in the given home: {blocked}"
    );
    // Paired: a profile without the list reads both.
    let allowed = run(wide.to_str().unwrap());
    assert!(
        allowed.contains("SENTINEL-NETRC") && allowed.contains("SENTINEL-SSH"),
        "{allowed}"
    );
}

/// The documented lists name every entry the code has.
#[test]
fn the_documented_lists_name_every_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let creds = std::fs::read_to_string(root.join("docs/credentials.md")).unwrap();
    for e in deny_read("base") {
        let shown = e.replace("{home}", "~");
        assert!(
            creds.contains(&format!("`{shown}`")),
            "docs/credentials.md lacks `{shown}`"
        );
    }
    let env = std::fs::read_to_string(root.join("docs/environment.md")).unwrap();
    for (pattern, _) in sbx::environment::SECRET_NAMES {
        assert!(
            env.contains(&format!("`{pattern}`")),
            "docs/environment.md lacks `{pattern}`"
        );
    }
}

/// Host programs save a home's secrets by writing a new file and renaming it over the old one
/// (agents' state and token files, credential stores, shell history); a rename over a file
/// detaches the mount that hides it in another namespace. Replaced that way during the run,
/// a file or a directory of secrets stays unreadable under every built-in, as root and as uid
/// 65534. Paired: a profile that does not hide them sees the new content the same way.
#[test]
fn secrets_the_host_replaces_by_rename_during_the_run_stay_hidden() {
    const OPEN: &str =
        "[filesystem]\nread = [\"/\"]\nexecute = [\"/\"]\nwrite = [\"{workspace}\"]\n";
    for u in users() {
        let s = Scratch::new(u);
        std::fs::create_dir_all(s.home.join(".claude")).unwrap();
        std::fs::write(s.home.join(".claude.json"), "OLD").unwrap();
        std::fs::write(s.home.join(".claude/.credentials.json"), "OLD").unwrap();
        s.chown_all();
        let open = s.write_profile("open", OPEN);
        let mut profiles: Vec<String> = BUILTIN_NAMES.iter().map(|p| p.to_string()).collect();
        profiles.push(open.display().to_string());
        for (i, profile) in profiles.iter().enumerate() {
            let go = s.ws.join(format!("go{i}"));
            let script = format!(
                "echo started; while [ ! -e {go} ]; do sleep 0.02; done; \
                 cat ~/.claude.json ~/.claude/.credentials.json ~/.ssh/id_rsa ~/notes.txt",
                go = go.display()
            );
            let mut child = s
                .command(profile, &script)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The command is running once it says so (a line, whatever the profile writes).
            let mut started = [0u8; 8];
            std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut started).unwrap();
            assert_eq!(&started, b"started\n", "{} {profile}", s.label());
            let replace = |path: &Path, text: &str| {
                let tmp = path.with_extension("sbx-new");
                std::fs::write(&tmp, text).unwrap();
                std::fs::rename(&tmp, path).unwrap();
            };
            let new = format!("NEW-{i}-c0ffee");
            replace(&s.home.join(".claude.json"), &new);
            replace(&s.home.join(".claude/.credentials.json"), &new);
            let ssh_new = s.home.join("ssh-new");
            std::fs::create_dir_all(&ssh_new).unwrap();
            std::fs::write(ssh_new.join("id_rsa"), &new).unwrap();
            std::fs::remove_dir_all(s.home.join(".ssh")).unwrap();
            std::fs::rename(&ssh_new, s.home.join(".ssh")).unwrap();
            s.chown_all();
            std::fs::write(&go, "").unwrap();
            let o = child.wait_with_output().unwrap();
            let out = stdout(&o);
            if *profile == open.display().to_string() {
                assert!(
                    out.contains("SENTINEL-NOTES-91b2"),
                    "{}: {}",
                    s.label(),
                    text(&o)
                );
                assert_eq!(
                    out.matches(&new).count(),
                    3,
                    "{} {profile}: {}",
                    s.label(),
                    text(&o)
                );
            } else {
                assert!(!out.contains(&new), "{} {profile}: {}", s.label(), text(&o));
            }
        }
    }
}
