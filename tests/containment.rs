//! Nothing a command does outlives the run outside its writable set: metadata changes, host
//! inodes, setuid files, and files that other programs run later. Each attempted from inside
//! the sandbox and paired with the same action allowed (under a wider profile, or outside the
//! sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A profile that grants much more, for the "allowed" half of a pair: no protected paths.
const WIDE: &str = r#"
requires = ["landlock", "seccomp"]
[filesystem]
read = ["/"]
execute = ["/"]
write = ["{workspace}", "{home}", "{tmp}"]
[network]
mode = "host"
[environment]
pass = ["PATH", "HOME"]
[limits]
timeout = 60
processes = 2000
"#;

const EROFS: &str = "30";

/// Python that tries each metadata change on `$1` and prints `NAME ERRNO` (0 on success).
const META: &str = r#"python3 -c '
import os, sys
p = sys.argv[1]
ops = [("chmod", lambda: os.chmod(p, 0o600)),
       ("chown", lambda: os.chown(p, os.getuid(), os.getgid())),
       ("utime", lambda: os.utime(p, (1, 1))),
       ("xattr", lambda: os.setxattr(p, "user.sbx", b"1"))]
for name, f in ops:
    try:
        f(); print(name, 0)
    except OSError as e:
        print(name, e.errno)
' "#;

fn answers(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.trim().to_string()))
        .collect()
}

#[test]
fn metadata_outside_the_writable_set_cannot_change() {
    // Landlock does not govern chmod, chown, xattrs or times: the read-only mount does.
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let target = s.home.join("meta-target");
        std::fs::write(&target, "x").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        s.chown_all();
        let script = format!("{META}{}", target.display());
        let blocked = s.run("workspace", &script);
        let got = answers(&stdout(&blocked));
        assert_eq!(got.len(), 4, "{}: {}", s.label(), text(&blocked));
        for (op, errno) in &got {
            assert_eq!(errno, EROFS, "{} {op}: {}", s.label(), text(&blocked));
        }
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o644, "{}", s.label());
        assert_ne!(meta.mtime(), 1, "{}", s.label());
        // Paired: where the profile writes, every change goes through.
        let allowed = s.run(wide.to_str().unwrap(), &script);
        let got = answers(&stdout(&allowed));
        assert_eq!(got.len(), 4, "{}: {}", s.label(), text(&allowed));
        for (op, errno) in &got {
            assert_eq!(errno, "0", "{} {op}: {}", s.label(), text(&allowed));
        }
        assert_eq!(std::fs::metadata(&target).unwrap().mtime(), 1);
    }
}

/// The sandbox's /proc is read-only: root's chmod on a kernel-wide entry such as
/// `/proc/version` would change its mode for every later proc mount on the host. Paired: the
/// entry is there and readable, and the same change on a workspace file goes through.
#[test]
fn kernel_wide_proc_entries_keep_their_mode() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.ws.join("own"), "x").unwrap();
        s.chown_all();
        let before = std::fs::metadata("/proc/version").unwrap().mode();
        for profile in ["workspace", "strict"] {
            let o = s.run(
                profile,
                &format!(
                    "head -c 5 /proc/version; echo; {META}/proc/version; {META}{}/own",
                    s.ws.display()
                ),
            );
            let out = stdout(&o);
            assert!(
                out.starts_with("Linux\n"),
                "{} {profile}: {}",
                s.label(),
                text(&o)
            );
            let got = answers(&out);
            let chmods: Vec<&str> = got
                .iter()
                .filter(|(op, _)| op == "chmod")
                .map(|(_, e)| e.as_str())
                .collect();
            assert_eq!(
                chmods,
                [EROFS, "0"],
                "{} {profile}: {}",
                s.label(),
                text(&o)
            );
            assert_eq!(std::fs::metadata("/proc/version").unwrap().mode(), before);
        }
    }
}

/// A file given on stdin is relayed, not handed over: through `/proc/self/fd/0` the command
/// cannot change the host file's mode or times, and a directory on stdin opens nothing the
/// plan hides; the command still reads the file's content. Paired: the same file passed as a
/// path the profile makes writable changes.
#[test]
fn stdin_is_no_way_to_host_files() {
    for u in users() {
        let s = Scratch::new(u);
        let target = s.home.join("stdin-target");
        std::fs::write(&target, "content\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(s.home.join(".netrc"), "SECRET\n").unwrap();
        s.chown_all();
        let script = "chmod 777 /proc/self/fd/0; touch -d @1 /proc/self/fd/0; cat; \
                      cat /proc/self/fd/0/.netrc 2>/dev/null";
        let mut c = s.command("workspace", script);
        c.stdin(std::fs::File::open(&target).unwrap());
        let o = c.output().unwrap();
        assert_eq!(stdout(&o), "content\n", "{}: {}", s.label(), text(&o));
        let meta = std::fs::metadata(&target).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o644, "{}", s.label());
        assert_ne!(meta.mtime(), 1, "{}", s.label());
        let mut c = s.command("workspace", "cat /proc/self/fd/0/.netrc");
        c.stdin(std::fs::File::open(&s.home).unwrap());
        let o = c.output().unwrap();
        assert!(
            !stdout(&o).contains("SECRET"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        // Paired: the workspace is writable, so the same change by path goes through.
        let inside = s.ws.join("stdin-target");
        std::fs::write(&inside, "x").unwrap();
        s.chown_all();
        let o = s.run(
            "workspace",
            "chmod 777 stdin-target; touch -d @1 stdin-target",
        );
        assert_eq!(o.status.code(), Some(0), "{}: {}", s.label(), text(&o));
        assert_eq!(
            std::fs::metadata(&inside).unwrap().mtime(),
            1,
            "{}",
            s.label()
        );
    }
}

#[test]
fn device_nodes_and_hidden_files_are_not_host_inodes_the_command_can_change() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.home.join(".netrc"), "SENTINEL-NETRC\n").unwrap();
        std::fs::write(s.ws.join("mine"), "x").unwrap();
        s.chown_all();
        let null_before = std::fs::metadata("/dev/null").unwrap().mode();
        let script = format!("{META}/dev/null; {META}\"$HOME/.netrc\"; {META}\"$PWD/mine\"",);
        let out = s.run("workspace", &script);
        let got = answers(&stdout(&out));
        assert_eq!(got.len(), 12, "{}: {}", s.label(), text(&out));
        // /dev/null and the file bound over the secret: read-only binds.
        for (op, errno) in &got[..8] {
            if op == "chmod" || op == "chown" || op == "utime" {
                assert_eq!(errno, EROFS, "{} {op}: {}", s.label(), text(&out));
            }
        }
        // Paired, in the same run: the workspace file's metadata changes.
        for (op, errno) in &got[8..] {
            assert_eq!(errno, "0", "{} {op}: {}", s.label(), text(&out));
        }
        assert_eq!(std::fs::metadata("/dev/null").unwrap().mode(), null_before);
        let netrc = std::fs::metadata(s.home.join(".netrc")).unwrap();
        assert_eq!(netrc.mode() & 0o777, 0o644, "{}", s.label());
    }
}

/// `python3 -c OPENAT2 PATH MODE` creates PATH with `openat2(2)` and exits with its errno
/// (0 when made). The umask is cleared so that the mode is the one asked for.
const OPENAT2: &str = "import ctypes,os,sys,struct
libc=ctypes.CDLL(None,use_errno=True)
os.umask(0)
how=struct.pack(\"QQQ\",os.O_CREAT|os.O_WRONLY,int(sys.argv[2],8),0)
r=libc.syscall(437,-100,sys.argv[1].encode(),how,len(how))
sys.exit(0 if r>=0 else ctypes.get_errno())";

#[test]
fn setuid_files_cannot_be_made_and_writable_mounts_are_nosuid() {
    // openat2 carries its mode in a structure seccomp cannot read: it is not there at all.
    let script = format!(
        "cp /bin/true ./t && chmod 4755 ./t; echo chmod=$?; \
         python3 -c 'import os; os.open(\"c\", os.O_CREAT | os.O_WRONLY, 0o2755)' 2>/dev/null; echo creat=$?; \
         python3 -c '{OPENAT2}' o2 0o4755; echo openat2=$?; \
         chmod 0755 ./t; echo plain=$?; \
         grep \" $PWD \" /proc/self/mountinfo"
    );
    for u in users() {
        let s = Scratch::new(u);
        let out = s.run("workspace", &script);
        let o = stdout(&out);
        assert!(o.contains("chmod=1"), "{}: {}", s.label(), text(&out));
        assert!(o.contains("creat=1"), "{}: {}", s.label(), text(&out));
        assert!(o.contains("openat2=38"), "{}: {}", s.label(), text(&out));
        assert!(!s.ws.join("o2").exists(), "{}", s.label());
        // Paired, in the same run: a plain mode is fine.
        assert!(o.contains("plain=0"), "{}: {}", s.label(), text(&out));
        let mount = o.lines().find(|l| l.contains(" - ")).unwrap_or_default();
        assert!(
            mount.contains("nosuid") && mount.contains("nodev"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(
            std::fs::metadata(s.ws.join("t")).unwrap().mode() & 0o7000,
            0,
            "{}",
            s.label()
        );
        // Paired: outside the sandbox the same user makes the same files setuid.
        let outside = s.outside(&format!(
            "chmod 4755 ./t && python3 -c '{OPENAT2}' o2 0o4755 && echo done"
        ));
        assert!(stdout(&outside).contains("done"), "{}", text(&outside));
        let o2 = std::fs::metadata(s.ws.join("o2")).unwrap().mode();
        assert_eq!(o2 & 0o7000, 0o4000, "{}", s.label());
        assert_eq!(
            std::fs::metadata(s.ws.join("t")).unwrap().mode() & 0o7000,
            0o4000
        );
    }
}

#[test]
fn device_nodes_outside_the_sandboxs_dev_open_nothing() {
    // A chroot's or container root's `dev`, or a node made by `mknod`: the read-only host
    // tree is `nodev` where the sandbox has a /dev of its own.
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: making a device node needs root");
        return;
    }
    for u in users() {
        let s = Scratch::new(u);
        let node = s.root.path().join("null-node");
        let made = std::process::Command::new("mknod")
            .args(["-m", "666"])
            .arg(&node)
            .args(["c", "1", "3"])
            .status()
            .unwrap();
        assert!(made.success());
        let host_dev = s.write_profile(
            "host-dev",
            "extends = \"workspace\"\n[isolation]\nminimal_dev = false\n",
        );
        let script = format!(
            "head -c1 {} >/dev/null; echo node=$?; head -c1 /dev/zero >/dev/null; echo own=$?",
            node.display()
        );
        let out = s.run("workspace", &script);
        assert!(
            stdout(&out).contains("node=1"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired, in the same run: the sandbox's own /dev works.
        assert!(
            stdout(&out).contains("own=0"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired: with the host's /dev, device files on the host tree open.
        let wide = s.run(host_dev.to_str().unwrap(), &script);
        assert!(
            stdout(&wide).contains("node=0"),
            "{}: {}",
            s.label(),
            text(&wide)
        );
    }
}

/// The one quarantine directory of a run under `home`, if any.
fn quarantine(home: &Path) -> Option<PathBuf> {
    let root = home.join(".local/state/sbx/quarantine");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.pop()
}

/// Where `rel` (a path relative to the workspace) went in the run directory `q`, by its
/// MANIFEST: numbered entries, each the outermost path moved.
fn in_quarantine(q: &Path, rel: &str) -> Option<PathBuf> {
    let manifest = std::fs::read_to_string(q.join("MANIFEST")).ok()?;
    manifest.lines().skip(1).find_map(|line| {
        let (n, moved) = line.split_once('\t')?;
        let rest = Path::new(rel).strip_prefix(moved).ok()?;
        let name = Path::new(moved).file_name()?.to_string_lossy().into_owned();
        let entry = q.join(format!("{n}-{name}"));
        Some(if rest.as_os_str().is_empty() {
            entry
        } else {
            entry.join(rest)
        })
    })
}

const PLANTED: &[&str] = &[
    ".git/hooks/pre-commit",
    ".github/workflows/ci.yml",
    ".gitlab-ci.yml",
    ".envrc",
    ".env.local",
    ".claude/settings.json",
    ".mcp.json",
    ".vscode/tasks.json",
    ".git/commondir",
    "Jenkinsfile",
    ".continue/config.json",
    "lefthook.yml",
    "lefthook-local.yaml",
    ".config/lefthook.yml",
    ".devcontainer.json",
    ".woodpecker.yaml",
    ".nvimrc",
    "opencode.json",
    ".opencode/plugin/x.js",
    ".qwen/settings.json",
    "crush.json",
    ".amazonq/mcp.json",
    ".junie/mcp/mcp.json",
    ".cirrus.yml",
    ".semaphore/semaphore.yml",
    "appveyor.yml",
    "buildspec.yml",
    "cloudbuild.yaml",
    ".builds/ci.yml",
    ".tekton/pipeline.yaml",
    "zuul.d/jobs.yaml",
    "netlify.toml",
    "vercel.json",
    ".readthedocs.yaml",
    ".gitpod.yml",
    ".huskyrc.json",
    "mise.toml",
    ".kilocode/mcp.json",
    ".clinerules/hooks/x",
    ".hg/hgrc",
    ".jj/repo/config.toml",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    ".npmrc",
    ".rvmrc",
];

fn plant_script() -> String {
    PLANTED
        .iter()
        .map(|p| format!("mkdir -p \"$(dirname {p})\" && echo planted > {p} && cat {p} >/dev/null && echo MADE {p}"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn protected_paths_made_in_the_run_are_moved_to_quarantine() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
        let script = plant_script();
        let out = s.json_command("workspace", &script).output().unwrap();
        // Not a placeholder and not refused: the kernel cannot refuse a name that does not
        // exist, so each was made, and is undone after the run.
        for p in PLANTED {
            assert!(
                stdout(&out).contains(&format!("MADE {p}")),
                "{} {p}: {}",
                s.label(),
                text(&out)
            );
            assert!(
                s.ws.join(p).symlink_metadata().is_err(),
                "{} {p} is still in the workspace",
                s.label()
            );
        }
        let q = quarantine(&s.home).expect("a quarantine directory");
        for p in PLANTED {
            let kept = in_quarantine(&q, p).expect("listed in the MANIFEST");
            assert_eq!(
                std::fs::read_to_string(&kept).unwrap_or_default(),
                "planted\n",
                "{} {p} not at {}",
                s.label(),
                kept.display()
            );
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(".envrc") && err.contains("quarantine"),
            "{err}"
        );
        let report = stdout(&out);
        let json: serde_json::Value =
            serde_json::from_str(report.lines().last().unwrap_or_default()).unwrap();
        assert_eq!(
            json["protected"].as_array().map(Vec::len),
            Some(PLANTED.len()),
            "{}",
            report
        );
        assert_eq!(json["code"], 0, "{}", s.label());
        // Paired: a profile without protected paths keeps them all.
        let allowed = s.run(wide.to_str().unwrap(), &plant_script());
        for p in PLANTED {
            assert!(
                s.ws.join(p).exists(),
                "{} {p}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

#[test]
fn a_profile_can_make_a_protected_change_fail_the_run() {
    let strict_changes = "extends = \"workspace\"\n[filesystem]\nprotected_change = \"fail\"\n";
    for u in users() {
        let s = Scratch::new(u);
        let p = s.write_profile("fail", strict_changes);
        let out = s.run(p.to_str().unwrap(), "echo x > .envrc");
        assert_eq!(
            out.status.code(),
            Some(122),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join(".envrc").exists());
        // Paired: the same profile with nothing protected touched succeeds.
        let ok = s.run(p.to_str().unwrap(), "echo x > notes.txt");
        assert_eq!(ok.status.code(), Some(0), "{}: {}", s.label(), text(&ok));
        assert!(s.ws.join("notes.txt").exists());
    }
}

#[test]
fn sbx_leaves_nothing_in_the_workspace() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
        let before = listing(&s.ws);
        for profile in ["workspace", "strict", "ci"] {
            let out = s.run(profile, "true");
            assert_eq!(out.status.code(), Some(0), "{profile}: {}", text(&out));
        }
        assert_eq!(listing(&s.ws), before, "{}", s.label());
        // Paired: a command that makes a file does change the listing.
        s.run("workspace", "touch made");
        assert_ne!(listing(&s.ws), before, "{}", s.label());
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn repositories_made_in_the_run_lose_hooks_and_program_config_but_keep_plain_ones() {
    let script = "export GIT_CONFIG_NOSYSTEM=1; \
                  git init -q evil && echo 'echo pwned' > evil/.git/hooks/pre-commit \
                  && git -C evil config core.fsmonitor ./x && echo EVIL; \
                  git init -q plain && git -C plain config user.email t@e && echo PLAIN; \
                  mkdir -p deep/er && git init -q deep/er/x && echo DEEP";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("EVIL") && stdout(&out).contains("PLAIN"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("evil/.git/hooks/pre-commit").exists());
        assert!(!s.ws.join("evil/.git/config").exists());
        // A plain repository stays whole, and git works in it afterwards.
        assert!(s.ws.join("plain/.git/config").exists());
        let status = s.outside("git -C plain status --porcelain && echo OK");
        assert!(stdout(&status).contains("OK"), "{}", text(&status));
        assert!(s.ws.join("deep/er/x/.git/HEAD").exists());
        // Paired: without protection the hook and config stay.
        std::fs::remove_dir_all(s.ws.join("evil")).unwrap();
        std::fs::remove_dir_all(s.ws.join("plain")).unwrap();
        s.run(wide.to_str().unwrap(), script);
        assert!(s.ws.join("evil/.git/hooks/pre-commit").exists());
        assert!(s.ws.join("evil/.git/config").exists());
    }
}

#[test]
fn a_hooks_link_is_never_followed_to_a_writable_place_and_is_put_back() {
    // `.git/hooks` is a link to a directory in the workspace (as hook managers set up).
    let swap = "echo x > hookdir/pre-commit; echo direct=$?; \
                rm .git/hooks && mkdir .git/hooks && echo planted > .git/hooks/pre-commit && echo SWAPPED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
        std::fs::create_dir(s.ws.join("hookdir")).unwrap();
        std::os::unix::fs::symlink("../hookdir", s.ws.join(".git/hooks")).unwrap();
        s.chown_all();
        let out = s.run("workspace", swap);
        // The link's target is read-only in the sandbox.
        assert!(
            !stdout(&out).contains("direct=0") && text(&out).contains("Read-only file system"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("hookdir/pre-commit").exists());
        // The link itself could be replaced during the run; after it, it is back.
        assert_eq!(
            std::fs::read_link(s.ws.join(".git/hooks")).unwrap(),
            PathBuf::from("../hookdir"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Paired: without protection the replacement stays.
        s.run(wide.to_str().unwrap(), swap);
        assert!(s.ws.join(".git/hooks/pre-commit").is_file());
        assert!(s.ws.join("hookdir/pre-commit").is_file());
    }
}

#[test]
fn a_linked_worktrees_git_file_stays_read_only() {
    let point =
        "echo 'gitdir: /var/tmp/elsewhere' > .git && echo POINTED; mv .git .g && echo MOVED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::remove_dir_all(s.ws.join(".git")).unwrap();
        std::fs::write(
            s.ws.join(".git"),
            "gitdir: /var/tmp/main/.git/worktrees/ws\n",
        )
        .unwrap();
        s.chown_all();
        let out = s.run("workspace", point);
        assert!(
            !stdout(&out).contains("POINTED") && !stdout(&out).contains("MOVED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            std::fs::read_to_string(s.ws.join(".git"))
                .unwrap()
                .contains("/var/tmp/main/")
        );
        // Paired: without protection the file can be pointed elsewhere.
        let allowed = s.run(wide.to_str().unwrap(), point);
        assert!(stdout(&allowed).contains("POINTED"), "{}", text(&allowed));
    }
}

#[test]
fn without_a_mount_namespace_the_report_says_metadata_is_partial_and_protected_paths_hold() {
    for u in users() {
        let s = Scratch::new(u);
        let run = |ns_off: bool| {
            let mut c = s.json_command("workspace", "echo x > .envrc");
            if ns_off {
                c.env("SBX_DISABLE_USERNS", "1");
            }
            c.output().unwrap()
        };
        let layer = |o: &std::process::Output| {
            let last = stdout(o).lines().last().unwrap_or_default().to_string();
            let v: serde_json::Value = serde_json::from_str(&last).unwrap();
            v["enforcement"]["layers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["name"] == "metadata")
                .map(|l| l["status"].as_str().unwrap_or_default().to_string())
        };
        let fallback = run(true);
        assert_eq!(
            layer(&fallback).as_deref(),
            Some("partial"),
            "{}",
            text(&fallback)
        );
        assert!(
            !s.ws.join(".envrc").exists(),
            "{}: {}",
            s.label(),
            text(&fallback)
        );
        // Paired: with namespaces the same layer is enforced.
        let full = run(false);
        assert_eq!(layer(&full).as_deref(), Some("enforced"), "{}", text(&full));
    }
}

#[test]
fn the_directory_core_hooks_path_names_stays_read_only() {
    // git runs the scripts in core.hooksPath instead of .git/hooks (hook managers set it).
    let plant = "echo planted > scripts/hooks/pre-commit && echo PLANTED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join("scripts/hooks")).unwrap();
        std::fs::write(
            s.ws.join(".git/config"),
            "[core]\n\thooksPath = scripts/hooks\n",
        )
        .unwrap();
        s.chown_all();
        let out = s.run("workspace", plant);
        assert!(
            !stdout(&out).contains("PLANTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("scripts/hooks/pre-commit").exists());
        // Paired: without protection the hook is planted.
        let allowed = s.run(wide.to_str().unwrap(), plant);
        assert!(stdout(&allowed).contains("PLANTED"), "{}", text(&allowed));
    }
}

#[test]
fn a_git_file_pointing_at_a_git_directory_made_in_the_run_is_judged_by_its_content() {
    // A checkout whose `.git` file names a git directory elsewhere in the workspace: its
    // hooks are what git runs in that checkout.
    let script = "mkdir -p gd/hooks co && echo 'echo pwned' > gd/hooks/pre-commit \
                  && echo ref: refs/heads/main > gd/HEAD && echo 'gitdir: ../gd' > co/.git && echo MADE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("MADE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(!s.ws.join("gd/hooks/pre-commit").exists(), "{}", s.label());
        assert!(s.ws.join("co/.git").exists(), "{}", s.label());
        // Paired: without protection the hook stays.
        std::fs::remove_dir_all(s.ws.join("gd")).unwrap();
        std::fs::remove_dir_all(s.ws.join("co")).unwrap();
        s.run(wide.to_str().unwrap(), script);
        assert!(s.ws.join("gd/hooks/pre-commit").exists());
    }
}

#[test]
fn a_git_directory_prepared_in_one_run_and_moved_into_place_in_the_next_is_judged_whole() {
    // The files of a git directory keep the change times of the run that wrote them; moved
    // into place later (as a nested `.git`, or named by a new `.git` file), all of it counts.
    // Without its `HEAD` until it is placed: with one, git's discovery takes it for a git
    // directory where it lies, and the first run judges it then.
    let prepare = "export GIT_CONFIG_NOSYSTEM=1; git init -q stash && mv stash/.git stashgit && rm -r stash \
                   && echo 'echo pwned' > stashgit/hooks/pre-commit && mv stashgit/HEAD stashgit/HEAD.off \
                   && mkdir -p deep/x/y && cp -a stashgit deep/x/y/stash.git && echo READY";
    let place = "mv stashgit/HEAD.off stashgit/HEAD && mv deep/x/y/stash.git/HEAD.off deep/x/y/stash.git/HEAD \
                 && mkdir sub2 && mv stashgit sub2/.git && mkdir co && echo 'gitdir: ../deep/x/y/stash.git' > co/.git && echo PLACED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", prepare);
        assert!(
            stdout(&out).contains("READY"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Not a git directory by its name yet: nothing to take away.
        assert!(
            s.ws.join("stashgit/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
        // Change times are coarse: the next run starts a tick of them later than this one ended.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = s.run("workspace", place);
        assert!(
            stdout(&out).contains("PLACED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join("sub2/.git/hooks/pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join("deep/x/y/stash.git/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
        // Paired: without protection the moved hooks stay.
        for d in ["sub2", "co", "deep"] {
            std::fs::remove_dir_all(s.ws.join(d)).unwrap();
        }
        s.run(wide.to_str().unwrap(), prepare);
        s.run(wide.to_str().unwrap(), place);
        assert!(
            s.ws.join("sub2/.git/hooks/pre-commit").exists(),
            "{}",
            s.label()
        );
    }
}

#[test]
fn a_nested_repository_that_was_there_before_keeps_its_hooks_when_git_works_in_it() {
    // The user's own nested repository with a hook: git committing in it during the run
    // changes its `.git`, but nothing was moved into place, so its hook stays.
    for u in users() {
        let s = Scratch::new(u);
        let made = s.outside(
            "export GIT_CONFIG_NOSYSTEM=1; git init -q lib && echo 'exit 0' > lib/.git/hooks/pre-commit \
             && chmod +x lib/.git/hooks/pre-commit && echo MADE",
        );
        assert!(stdout(&made).contains("MADE"), "{}", text(&made));
        s.chown_all();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = s.run(
            "workspace",
            "export GIT_CONFIG_NOSYSTEM=1; cd lib && echo x > f && git add f \
             && git -c user.email=t@e -c user.name=t commit -qm x && echo COMMITTED",
        );
        assert!(
            stdout(&out).contains("COMMITTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            s.ws.join("lib/.git/hooks/pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
    }
}

#[test]
fn hooks_in_a_nested_repository_s_hooks_path_are_moved_out() {
    // A nested repository that runs its hooks from `core.hooksPath` (husky's `.husky/_`): a
    // hook written there runs at the next commit in it, as one in `.git/hooks` would.
    let script = "printf '#!/bin/sh\\necho pwned\\n' > lib/.husky/_/pre-commit \
                  && echo 'echo pwned' >> lib/.husky/_/post-checkout \
                  && echo more >> lib/.husky/notes.txt && echo PLANTED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let made = s.outside(
            "export GIT_CONFIG_NOSYSTEM=1; git init -q lib && git -C lib config core.hooksPath .husky/_ \
             && mkdir -p lib/.husky/_ && echo 'exit 0' > lib/.husky/_/post-checkout \
             && echo notes > lib/.husky/notes.txt && echo MADE",
        );
        assert!(stdout(&made).contains("MADE"), "{}", text(&made));
        s.chown_all();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("PLANTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let hooks = s.ws.join("lib/.husky/_");
        assert!(
            !hooks.join("pre-commit").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !hooks.join("post-checkout").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            text(&out).contains("quarantine"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        // Beside the hooks directory nothing is taken away.
        let notes = std::fs::read_to_string(s.ws.join("lib/.husky/notes.txt")).unwrap();
        assert_eq!(notes, "notes\nmore\n", "{}", s.label());
        // Swapped for a link to a directory of prepared hooks, it goes too.
        let swap = "mkdir -p lib/.husky/x && printf '#!/bin/sh\\necho pwned\\n' > lib/.husky/x/pre-commit \
                    && rm -rf lib/.husky/_ && ln -s x lib/.husky/_ && echo SWAPPED";
        let out = s.run("workspace", swap);
        assert!(
            stdout(&out).contains("SWAPPED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            std::fs::symlink_metadata(&hooks).is_err(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        std::fs::create_dir_all(&hooks).unwrap();
        // Paired: without protection the hooks stay.
        std::fs::write(hooks.join("post-checkout"), "exit 0\n").unwrap();
        s.chown_all();
        s.run(wide.to_str().unwrap(), script);
        assert!(hooks.join("pre-commit").exists(), "{}", s.label());
    }
}

/// A JSON report's last line.
fn report(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(stdout(o).lines().last().unwrap_or_default()).unwrap_or_default()
}

#[test]
fn a_quarantine_the_command_could_reach_is_not_used() {
    // The home lies inside the workspace: the command plants a link where the quarantine
    // would go. sbx goes to /var/tmp instead and follows no link.
    let plant = "mkdir -p h/.local/state/sbx && ln -s \"$OUT\" h/.local/state/sbx/quarantine \
                 && echo x > .envrc && echo PLANTED";
    for u in users() {
        let s = Scratch::new(u);
        let outside = s.root.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        s.chown_all();
        if let Some(uid) = u {
            std::os::unix::fs::chown(&outside, Some(uid), Some(uid)).unwrap();
        }
        let script = plant.replace("$OUT", &outside.display().to_string());
        let uid = u.unwrap_or_else(|| nix::unistd::geteuid().as_raw());
        let fallback = PathBuf::from(format!("/var/tmp/sbx-quarantine-{uid}"));
        let existed = fallback.exists();
        let out = s
            .json_command("workspace", &script)
            .env("HOME", s.ws.join("h"))
            .output()
            .unwrap();
        assert!(
            stdout(&out).contains("PLANTED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "{}",
            s.label()
        );
        assert!(!s.ws.join(".envrc").exists(), "{}", s.label());
        let went = report(&out)["protected"][0]["quarantined"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            went.starts_with("/var/tmp/sbx-quarantine-"),
            "{}: {went}",
            s.label()
        );
        assert_eq!(std::fs::read_to_string(&went).unwrap(), "x\n");
        std::fs::remove_file(&went).unwrap();
        // Nothing of the test left in /var/tmp: the quarantine it made goes too (one that was
        // there before the test is someone's, and stays).
        if !existed {
            std::fs::remove_dir_all(&fallback).unwrap();
        }
        // Paired: with the home outside the workspace the quarantine is in the home.
        let out = s
            .json_command("workspace", "echo y > .envrc")
            .output()
            .unwrap();
        let went = report(&out)["protected"][0]["quarantined"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            went.starts_with(s.home.to_str().unwrap()),
            "{}: {went}",
            s.label()
        );
    }
}

#[test]
fn a_protected_path_replaced_while_a_run_beside_it_ends_is_caught() {
    // Run A makes .envrc and waits; run B starts while it exists (so B sees it as there
    // before), A ends and its .envrc goes to quarantine, then B writes a new one.
    let a = "echo a > .envrc && touch a-ready && i=0; \
             while [ ! -e b-started ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done";
    let b = "touch b-started; i=0; while [ -e .envrc ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; \
             echo evil > .envrc && echo WROTE";
    for u in users() {
        let s = Scratch::new(u);
        let mut run_a = s.command("workspace", a).spawn().unwrap();
        let mut waited = 0;
        while !s.ws.join("a-ready").exists() && waited < 600 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            waited += 1;
        }
        let out_b = s.run("workspace", b);
        assert!(run_a.wait().unwrap().success(), "{}", s.label());
        assert!(
            stdout(&out_b).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out_b)
        );
        assert!(
            !s.ws.join(".envrc").exists(),
            "{}: {}",
            s.label(),
            text(&out_b)
        );
        assert!(
            text(&out_b).contains("replaced"),
            "{}: {}",
            s.label(),
            text(&out_b)
        );
    }
}

/// A real repository in the scratch workspace, made outside the sandbox.
fn git_repo(s: &Scratch) {
    std::fs::remove_dir_all(s.ws.join(".git")).unwrap();
    let out = s.outside(
        "git init -q . && git -c user.email=t@e -c user.name=t commit -q --allow-empty -m init && echo OK",
    );
    assert!(stdout(&out).contains("OK"), "{}", text(&out));
}

#[test]
fn a_repository_registered_as_a_submodule_anywhere_is_judged() {
    // git status at the top recurses into submodules in the index, wherever they lie.
    let script = "export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e; \
                  mkdir -p node_modules/a/b/c/evil && cd node_modules/a/b/c/evil && git init -q \
                  && git commit -q --allow-empty -m x && git config core.fsmonitor 'touch pwned; false' \
                  && cd \"$OLDPWD\" && git update-index --add --cacheinfo \
                  160000,$(git -C node_modules/a/b/c/evil rev-parse HEAD),node_modules/a/b/c/evil && echo REGISTERED";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        git_repo(&s);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("REGISTERED"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let cfg = s.ws.join("node_modules/a/b/c/evil/.git/config");
        assert!(!cfg.exists(), "{}: {}", s.label(), text(&out));
        // Paired: without protection the config stays.
        std::fs::remove_dir_all(s.ws.join("node_modules")).unwrap();
        s.outside("git rm -q --cached node_modules/a/b/c/evil");
        s.run(wide.to_str().unwrap(), script);
        assert!(cfg.exists(), "{}", s.label());
    }
}

#[test]
fn hooks_path_from_the_global_config_and_included_config_files_stay_read_only() {
    let plant = "echo planted > .githooks/pre-commit && echo HOOK; echo '[core] fsmonitor = x' > .gitconfig-project && echo INCLUDE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir_all(s.ws.join(".githooks")).unwrap();
        std::fs::write(s.ws.join(".gitconfig-project"), "").unwrap();
        std::fs::write(
            s.home.join(".gitconfig"),
            "[core]\n\thooksPath = .githooks\n",
        )
        .unwrap();
        std::fs::write(
            s.ws.join(".git/config"),
            "[include]\n\tpath = ../.gitconfig-project\n",
        )
        .unwrap();
        s.chown_all();
        let out = s.run("workspace", plant);
        for word in ["HOOK", "INCLUDE"] {
            assert!(
                !stdout(&out).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&out)
            );
        }
        // Paired: without protection both are written.
        let allowed = s.run(wide.to_str().unwrap(), plant);
        for word in ["HOOK", "INCLUDE"] {
            assert!(
                stdout(&allowed).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

#[test]
fn a_workspace_whose_name_looks_like_a_glob_is_still_writable_and_protected() {
    for u in users() {
        let s = Scratch::new(u);
        let odd = s.ws.join("w[1]");
        std::fs::create_dir(&odd).unwrap();
        s.chown_all();
        let out = s
            .sbx(&[
                "run",
                "--no-policy",
                "--profile",
                "workspace",
                "--workspace",
                odd.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "cd \"$0\" && echo x > f && echo y > .envrc && echo OK",
                odd.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(stdout(&out).contains("OK"), "{}: {}", s.label(), text(&out));
        assert!(odd.join("f").exists(), "{}", s.label());
        assert!(
            !odd.join(".envrc").exists(),
            "{}: {}",
            s.label(),
            text(&out)
        );
    }
}

/// Wait (up to a minute) for `path` to appear.
fn wait_for(path: &Path) {
    let mut waited = 0;
    while !path.exists() && waited < 600 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
    }
}

fn piped(mut c: std::process::Command) -> std::process::Child {
    use std::process::Stdio;
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The command waits for `host-done`, then writes into `.github`: what the host did between
/// decides whether the write lands.
const WRITE_AFTER_HOST: &str = "touch ready; i=0; \
     while [ ! -e host-done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; \
     echo evil > .github/x && echo WROTE";

#[test]
fn a_protected_directory_the_host_removes_and_makes_again_during_a_run_is_caught() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::create_dir(s.ws.join(".github")).unwrap();
        s.chown_all();
        // The host removes the directory and makes it again: the read-only mount in the
        // sandbox is detached, and the new directory often gets the old inode number.
        let run = piped(s.command("workspace", WRITE_AFTER_HOST));
        wait_for(&s.ws.join("ready"));
        let host = s.outside("rmdir .github && mkdir .github && touch host-done && echo HOST");
        assert!(stdout(&host).contains("HOST"), "{}", text(&host));
        let out = run.wait_with_output().unwrap();
        assert!(
            stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(
            !s.ws.join(".github").exists(),
            "{}: the directory written after the host made it stayed: {}",
            s.label(),
            text(&out)
        );
        assert!(text(&out).contains("replaced"), "{}", text(&out));
        let q = quarantine(&s.home).expect("a quarantine directory");
        let kept = in_quarantine(&q, ".github/x").expect("listed in the MANIFEST");
        assert_eq!(std::fs::read_to_string(kept).unwrap(), "evil\n");
        // Paired: with the same directory left alone, the mount holds, the write fails and
        // the directory stays.
        std::fs::create_dir(s.ws.join(".github")).unwrap();
        s.chown_all();
        std::fs::remove_file(s.ws.join("ready")).unwrap();
        let run = piped(s.command("workspace", WRITE_AFTER_HOST));
        wait_for(&s.ws.join("ready"));
        s.outside("touch host-done");
        let held = run.wait_with_output().unwrap();
        assert!(!stdout(&held).contains("WROTE"), "{}", text(&held));
        assert!(s.ws.join(".github").is_dir() && !s.ws.join(".github/x").exists());
    }
}

/// The directory above a protected link's target is pinned: it cannot be moved away and
/// made again with a writable target (the check after the run would catch that too, and move
/// the new target to quarantine).
#[test]
fn a_protected_links_target_cannot_be_moved_away_and_made_again() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::create_dir_all(s.ws.join("config/vscode")).unwrap();
        std::os::unix::fs::symlink("config/vscode", s.ws.join(".vscode")).unwrap();
        s.chown_all();
        let moved = "mv config config.old && mkdir -p config/vscode \
                     && echo evil > .vscode/tasks.json && echo WROTE";
        let out = s.run("workspace", moved);
        assert!(
            !stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert!(text(&out).contains("busy"), "{}: {}", s.label(), text(&out));
        assert!(s.ws.join("config/vscode").is_dir() && !s.ws.join("config.old").exists());
        assert_eq!(
            std::fs::read_link(s.ws.join(".vscode")).unwrap(),
            Path::new("config/vscode")
        );
        // The target where it was stays read-only through the link.
        let held = s.run("workspace", "echo evil > .vscode/tasks.json && echo WROTE");
        assert!(!stdout(&held).contains("WROTE"), "{}", text(&held));
        assert!(!s.ws.join("config/vscode/tasks.json").exists());
        // Paired: under a profile that protects nothing, the same move and write work.
        let wide = s.write_profile("wide", sandbox_common::WIDE);
        let out = s.run(wide.to_str().unwrap(), moved);
        assert!(
            stdout(&out).contains("WROTE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
    }
}

/// Names that programs load from the directory they start in, made one level below the root.
const PLANTED_BELOW: &[&str] = &[
    "app/.envrc",
    "app/.env",
    "app/.env.local",
    "app/.claude/settings.json",
    "app/.mcp.json",
    "app/.vscode/tasks.json",
    "web/.cursor/mcp.json",
    "web/opencode.json",
];

#[test]
fn protected_names_made_one_level_below_the_root_are_moved_to_quarantine() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        // One was there before: the user's, it stays.
        std::fs::create_dir_all(s.ws.join("lib/.claude")).unwrap();
        std::fs::write(s.ws.join("lib/.claude/settings.json"), "{}\n").unwrap();
        s.chown_all();
        let plant = |p: &&str| {
            format!("mkdir -p \"$(dirname {p})\" && echo planted > {p} && echo MADE {p}")
        };
        let mut script: Vec<String> = PLANTED_BELOW.iter().map(plant).collect();
        script.push("echo ordinary > app/notes.txt".into());
        let out = s.run("workspace", &script.join("; "));
        for p in PLANTED_BELOW {
            assert!(
                stdout(&out).contains(&format!("MADE {p}")),
                "{}",
                text(&out)
            );
            assert!(
                s.ws.join(p).symlink_metadata().is_err(),
                "{} {p} is still in the workspace: {}",
                s.label(),
                text(&out)
            );
        }
        let q = quarantine(&s.home).expect("a quarantine directory");
        for p in PLANTED_BELOW {
            let kept = in_quarantine(&q, p).expect("listed in the MANIFEST");
            assert_eq!(std::fs::read_to_string(kept).unwrap(), "planted\n", "{p}");
        }
        assert!(s.ws.join("app/notes.txt").exists(), "{}", text(&out));
        assert!(s.ws.join("lib/.claude/settings.json").exists());
        // Paired: a profile without protected paths keeps them all.
        let allowed = s.run(wide.to_str().unwrap(), &script.join("; "));
        for p in PLANTED_BELOW {
            assert!(
                s.ws.join(p).exists(),
                "{} {p}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

/// A hard link made before the run to a held protected file (`app/envrc-link` for
/// `app/.envrc`, `envrc-link` for `.envrc`) is another name for it outside its read-only
/// mount: a write through it lands, and the check after the run, seeing the file changed,
/// moves it to quarantine. Paired: a hard-linked `app/notes.txt` written the same way stays,
/// and under a profile without protected paths so do the protected ones.
#[test]
fn a_protected_file_written_through_a_hard_link_made_before_the_run_is_moved_out() {
    let script = "echo evil >> app/envrc-link; echo evil >> envrc-link; \
                  echo more >> app/notes-link; echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let setup = || {
            std::fs::create_dir_all(s.ws.join("app")).unwrap();
            for (file, link) in [
                ("app/.envrc", "app/envrc-link"),
                (".envrc", "envrc-link"),
                ("app/notes.txt", "app/notes-link"),
            ] {
                std::fs::write(s.ws.join(file), "legit\n").unwrap();
                let _ = std::fs::remove_file(s.ws.join(link));
                std::fs::hard_link(s.ws.join(file), s.ws.join(link)).unwrap();
            }
            s.chown_all();
        };
        setup();
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let q = quarantine(&s.home).expect("a quarantine directory");
        for p in ["app/.envrc", ".envrc"] {
            assert!(
                s.ws.join(p).symlink_metadata().is_err(),
                "{} {p} stayed: {}",
                s.label(),
                text(&out)
            );
            let kept = in_quarantine(&q, p).expect("listed in the MANIFEST");
            assert_eq!(std::fs::read_to_string(kept).unwrap(), "legit\nevil\n");
        }
        let notes = std::fs::read_to_string(s.ws.join("app/notes.txt")).unwrap();
        assert_eq!(notes, "legit\nmore\n", "{}", s.label());
        // Paired: without protected paths the same writes stay.
        setup();
        let allowed = s.run(wide.to_str().unwrap(), script);
        for p in ["app/.envrc", ".envrc"] {
            let kept = std::fs::read_to_string(s.ws.join(p)).unwrap();
            assert_eq!(
                kept,
                "legit\nevil\n",
                "{} {p}: {}",
                s.label(),
                text(&allowed)
            );
        }
    }
}

#[test]
fn a_directory_made_unlistable_hides_nothing_from_the_check() {
    // The owner's read (and search) taken off: programs still find the names, a listing
    // does not. Root reads through modes; the check must not depend on that.
    let script = "mkdir -p sub c/d && echo EVIL > sub/.envrc && chmod 311 sub; \
                  echo EVIL > .env.local; \
                  git -C c/d init -q && printf '#!/bin/sh\\necho PWNED\\n' > c/d/.git/hooks/pre-commit \
                  && chmod +x c/d/.git/hooks/pre-commit && chmod 600 c/d/.git && chmod 111 c; \
                  chmod 311 . && echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let _ = s.outside("chmod 755 . c sub c/d/.git 2>/dev/null");
        assert_absent(
            &s,
            &out,
            &["sub/.envrc", ".env.local", "c/d/.git/hooks/pre-commit"],
        );
        // Paired: without protected paths the same script keeps them.
        let _ = s.outside("rm -rf sub c");
        let kept = s.run(wide.to_str().unwrap(), script);
        let _ = s.outside("chmod 755 . c sub c/d/.git 2>/dev/null");
        assert_kept(
            &s,
            &kept,
            &["sub/.envrc", ".env.local", "c/d/.git/hooks/pre-commit"],
        );
    }
}

/// The links and directories on a protected link's way through the workspace are pinned:
/// re-pointing one (`.github -> link2 -> real`, `ln -sfn evil link2`) or replacing a
/// directory on it by a link fails in the kernel. (The check after the run also compares
/// that way, for a pin that could not be made.)
#[test]
fn the_way_to_a_protected_links_target_cannot_be_changed() {
    let script = "mkdir -p evil/vscode evil/github && echo EVIL > evil/ci.yml \
                  && echo EVIL > evil/vscode/tasks.json && echo EVIL > evil/github/ci.yml; \
                  ln -sfn evil link2; ln -sfn evil shared; mv config config.old && ln -s evil config; \
                  cat .github/ci.yml .vscode/tasks.json .gitlab/ci.yml";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let common = s.root.path().join("common/vscode");
        std::fs::create_dir_all(&common).unwrap();
        std::fs::write(common.join("tasks.json"), "legit\n").unwrap();
        std::fs::create_dir(s.ws.join("real")).unwrap();
        std::fs::write(s.ws.join("real/ci.yml"), "legit\n").unwrap();
        std::fs::create_dir_all(s.ws.join("config/github")).unwrap();
        std::fs::write(s.ws.join("config/github/ci.yml"), "legit\n").unwrap();
        std::os::unix::fs::symlink("real", s.ws.join("link2")).unwrap();
        std::os::unix::fs::symlink("link2", s.ws.join(".github")).unwrap();
        std::os::unix::fs::symlink(s.root.path().join("common"), s.ws.join("shared")).unwrap();
        std::os::unix::fs::symlink("shared/vscode", s.ws.join(".vscode")).unwrap();
        std::os::unix::fs::symlink("config/github", s.ws.join(".gitlab")).unwrap();
        s.chown_all();
        let _ = std::os::unix::fs::lchown(s.root.path().join("common"), u, u);
        let _ = std::os::unix::fs::lchown(&common, u, u);
        let out = s.run("workspace", script);
        assert!(
            !stdout(&out).contains("EVIL"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(
            std::fs::read_link(s.ws.join("link2")).unwrap(),
            Path::new("real")
        );
        assert_eq!(
            std::fs::read_link(s.ws.join("shared")).unwrap(),
            s.root.path().join("common")
        );
        for p in [".github/ci.yml", ".vscode/tasks.json", ".gitlab/ci.yml"] {
            assert_eq!(
                std::fs::read_to_string(s.ws.join(p)).unwrap(),
                "legit\n",
                "{} {p}: {}",
                s.label(),
                text(&out)
            );
        }
        // Paired: under a profile that protects nothing, each change lands.
        let changed = s.run(wide.to_str().unwrap(), script);
        assert!(
            stdout(&changed).contains("EVIL\nEVIL\nEVIL"),
            "{}: {}",
            s.label(),
            text(&changed)
        );
    }
}

#[test]
fn a_link_in_the_workspace_root_to_a_deeper_directory_is_looked_through() {
    let script = "mkdir -p deep/a/b z/y/app && echo EVIL > deep/a/b/.envrc && ln -s deep/a/b lnk \
                  && echo EVIL > z/y/app/.envrc && mv app app.old && ln -s z/y/app app && echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        std::fs::create_dir(s.ws.join("app")).unwrap();
        s.chown_all();
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_unreachable(&s, &out, &["lnk/.envrc", "app/.envrc"]);
        // Paired: without protected paths both stay.
        let _ = s.outside("rm -rf deep z lnk app && mv app.old app");
        let kept = s.run(wide.to_str().unwrap(), script);
        assert_kept(&s, &kept, &["lnk/.envrc", "app/.envrc"]);
    }
}

#[test]
fn the_checks_give_permissions_back_only_inside_the_workspace_and_never_through_a_link() {
    for u in users() {
        let s = Scratch::new(u);
        git_repo(&s);
        // A directory of the user's outside the workspace, locked.
        let victim = s.root.path().join("victim/x");
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("key"), "locked\n").unwrap();
        s.chown_all();
        let _ = std::os::unix::fs::lchown(s.root.path().join("victim"), u, u);
        let _ = std::os::unix::fs::lchown(&victim, u, u);
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o000)).unwrap();
        let inside = format!("lnk{}/y/z", victim.display());
        let script = format!(
            "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),{inside} && ln -s / lnk \
             && mkdir -p locked && echo EVIL > locked/.envrc && chmod 555 locked && echo DONE"
        );
        let out = s.run("workspace", &script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        let mode = std::fs::symlink_metadata(&victim)
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(
            mode,
            0,
            "{}: a directory outside the workspace was opened: {}",
            s.label(),
            text(&out)
        );
        // Paired: what the command locked inside the workspace is checked and moved.
        assert!(
            s.ws.join("locked/.envrc").symlink_metadata().is_err(),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_link_in_the_workspace_root_into_node_modules_or_git_is_looked_through() {
    let script = "mkdir -p node_modules/x .git/y && echo EVIL > node_modules/x/.envrc \
                  && echo EVIL > .git/y/.env && ln -s node_modules/x app && ln -s .git/y web && echo DONE";
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s.run("workspace", script);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        assert_unreachable(&s, &out, &["app/.envrc", "web/.env"]);
        // Paired: without protected paths both stay.
        let _ = s.outside("rm -rf node_modules .git/y app web");
        let kept = s.run(wide.to_str().unwrap(), script);
        assert_kept(&s, &kept, &["app/.envrc", "web/.env"]);
    }
}

/// Each of `paths` (relative to the workspace) can no longer be read there.
fn assert_unreachable(s: &Scratch, out: &std::process::Output, paths: &[&str]) {
    for p in paths {
        assert!(
            std::fs::read_to_string(s.ws.join(p)).is_err(),
            "{} {p} is still reachable: {}",
            s.label(),
            text(out)
        );
    }
}

/// Nothing is at any of `paths` (relative to the workspace, links not followed).
fn assert_absent(s: &Scratch, out: &std::process::Output, paths: &[&str]) {
    for p in paths {
        assert!(
            s.ws.join(p).symlink_metadata().is_err(),
            "{} {p} is still in the workspace: {}",
            s.label(),
            text(out)
        );
    }
}

/// Each of `paths` (relative to the workspace) is still there.
fn assert_kept(s: &Scratch, out: &std::process::Output, paths: &[&str]) {
    for p in paths {
        assert!(s.ws.join(p).exists(), "{} {p}: {}", s.label(), text(out));
    }
}

/// What an earlier run put in quarantine (an `.env.local` with the keys its command wrote) is
/// hidden from later runs under every profile (sbx hides its own quarantine itself); so is
/// the audit log beside it, under the built-ins. Paired: the quarantined file is there and
/// readable outside the sandbox, and a profile without base's denial reads the audit log.
#[test]
fn the_quarantine_is_hidden_from_later_runs() {
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        let out = s
            .json_command("workspace", "echo SECRET-KEY-9q > .env.local")
            .output()
            .unwrap();
        let went = report(&out)["protected"][0]["quarantined"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            went.starts_with(s.home.to_str().unwrap()),
            "{}: {went}: {}",
            s.label(),
            text(&out)
        );
        let state = s.home.join(".local/state/sbx");
        std::fs::write(state.join("audit.jsonl"), "AUDIT-LINE-4w\n").unwrap();
        s.chown_all();
        let read = format!(
            "cat {went} {}/audit.jsonl; grep -r SECRET-KEY-9q {} ; echo DONE",
            state.display(),
            state.display()
        );
        let out = s.run("workspace", &read);
        assert!(
            stdout(&out).contains("DONE"),
            "{}: {}",
            s.label(),
            text(&out)
        );
        for word in ["SECRET-KEY-9q", "AUDIT-LINE-4w"] {
            assert!(
                !stdout(&out).contains(word),
                "{} {word}: {}",
                s.label(),
                text(&out)
            );
        }
        let allowed = s.run(wide.to_str().unwrap(), &read);
        let said = stdout(&allowed);
        assert!(
            said.contains("AUDIT-LINE-4w"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        assert!(
            !said.contains("SECRET-KEY-9q"),
            "{}: {}",
            s.label(),
            text(&allowed)
        );
        let kept = std::fs::read_to_string(&went).unwrap();
        assert_eq!(kept, "SECRET-KEY-9q\n", "{}", s.label());
    }
}
