//! Protected paths a command makes in its run (git hooks, CI files, the names agents and tools
//! load, at the workspace root and one level below it) are moved to a quarantine in the home
//! after the run, each listed in the run's MANIFEST and in the report; a profile can make such a
//! change fail the run instead. The quarantine is never one the command could reach, and later
//! runs cannot read it; sbx leaves nothing of its own in the workspace, and a workspace whose name
//! looks like a glob is still writable and protected. Each paired with the same action allowed
//! (under a profile without protected paths, or outside the sandbox), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod containment_common;
use common::*;
use containment_common::*;
use std::path::{Path, PathBuf};

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
    ".yarnrc",
    ".Rprofile",
    ".pdbrc",
    ".irbrc",
    ".pryrc",
    ".iex.exs",
    ".erlang",
    ".Renviron",
    ".ghci",
    ".octaverc",
    ".vimrc",
    ".gvimrc",
    ".dir-locals.el",
    "project.code-workspace",
    ".ruby-env",
    ".versions.conf",
    "rust-toolchain.toml",
    "rust-toolchain",
    ".cargo/config.toml",
    ".cargo/config",
    ".config/mise.toml",
    "mise/config.toml",
    "mise.dev.toml",
    ".mise.dev.toml",
    ".fleet/run.json",
    ".theia/tasks.json",
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
    "web/.Rprofile",
    "app/.pdbrc",
    "app/.irbrc",
    "web/site.code-workspace",
    "web/.npmrc",
    "web/.yarnrc.yml",
    "app/mise.toml",
    "app/rust-toolchain.toml",
    "app/rust-toolchain",
    "web/.pnpmfile.cjs",
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

/// The check after the run finds git's files in a workspace whose name looks like a glob too:
/// the watched patterns write the workspace escaped (`w[[]1]`), and a hook made in the run, in
/// the workspace repository or in one made inside it, is moved to quarantine; under a profile
/// without protected paths both stay.
#[test]
fn a_workspace_whose_name_looks_like_a_glob_keeps_its_git_hooks_checked() {
    let plant = "cd \"$0\" && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit \
                 && mkdir sub && cd sub && git init -q && echo x > .git/hooks/post-checkout \
                 && echo OK";
    let hooks = [".git/hooks/pre-commit", "sub/.git/hooks/post-checkout"];
    for u in users() {
        let s = Scratch::new(u);
        let wide = s.write_profile("wide", WIDE);
        for (profile, kept) in [("workspace", false), (wide.to_str().unwrap(), true)] {
            let odd = s.ws.join(format!("w[1]-{kept}"));
            std::fs::create_dir(&odd).unwrap();
            s.chown_all();
            let made = s.outside(&format!(
                "cd '{}' && git init -q . && rm -rf .git/hooks && echo OK",
                odd.display()
            ));
            assert!(stdout(&made).contains("OK"), "{}", text(&made));
            let (ws, dir) = (odd.to_str().unwrap(), odd.to_str().unwrap());
            let args = [
                "run",
                "--no-policy",
                "--profile",
                profile,
                "--workspace",
                ws,
            ];
            let mut all: Vec<&str> = args.to_vec();
            all.extend(["--", "sh", "-c", plant, dir]);
            let out = s.sbx(&all).output().unwrap();
            assert!(stdout(&out).contains("OK"), "{}: {}", s.label(), text(&out));
            for h in hooks {
                assert_eq!(
                    odd.join(h).exists(),
                    kept,
                    "{} {profile} {h}: {}",
                    s.label(),
                    text(&out)
                );
            }
        }
    }
}
