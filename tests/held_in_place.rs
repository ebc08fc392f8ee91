//! What the mount layout hides or keeps read-only inside a writable tree stays where it is: the
//! directories above it and the symbolic links that lead to it cannot be renamed, removed or
//! pointed elsewhere by the command, so the next run finds it there again. The workspace is a
//! dotfiles repository (`~/.config -> dotfiles/config`), where the secrets the profile hides
//! lie inside the writable tree. A link a command made there to a granted tree, and a protected
//! link that leads nowhere, do not stop later runs.
//!
//! Each blocked action is paired with the same action allowed (under a profile that hides or
//! protects nothing, or on a path that is not protected), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;
use std::os::unix::fs::symlink;

/// A scratch area whose workspace is `~/dotfiles`, holding `~/.config` and `~/.aws` (links from
/// the home) with a secret in each and a file that is no secret beside it.
fn dotfiles(u: Option<u32>) -> Scratch {
    let mut s = Scratch::new(u);
    s.ws = s.home.join("dotfiles");
    let write = |rel: &str, text: &str| {
        let p = s.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("config/gh/hosts.yml", "SENTINEL-GH-PIN-5a1c\n");
    write("config/editor/settings", "PUBLIC-EDITOR-PIN-0b7d\n");
    write("aws/credentials", "SENTINEL-AWS-PIN-e2f4\n");
    write("vim/vimrc", "PUBLIC-VIM-PIN-83c6\n");
    symlink("dotfiles/config", s.home.join(".config")).unwrap();
    symlink("dotfiles/aws", s.home.join(".aws")).unwrap();
    s.chown_all();
    s
}

fn assert_ok(s: &Scratch, o: &std::process::Output) {
    assert_eq!(o.status.code(), Some(0), "{}: {}", s.label(), text(o));
}

#[test]
fn a_hidden_secret_cannot_be_carried_off_by_renaming_a_directory_above_it() {
    let moves = "mv config config2; echo config=$?; mv aws aws2; echo aws=$?; \
                 mv vim vim2; echo vim=$?";
    for u in users() {
        let s = dotfiles(u);
        let o = s.run("workspace", moves);
        assert_ok(&s, &o);
        // The directory above the hidden one, and the hidden one, are mount points; a
        // directory beside them moves as ever.
        for line in ["config=1", "aws=1", "vim=0"] {
            assert!(
                stdout(&o).contains(line),
                "{}: {line}: {}",
                s.label(),
                text(&o)
            );
        }
        let o = s.run(
            "workspace",
            "cat config/gh/hosts.yml config2/gh/hosts.yml aws/credentials aws2/credentials",
        );
        assert!(
            !text(&o).contains("SENTINEL"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        // Under a profile that hides nothing, the same rename works and the file reads.
        let s = dotfiles(u);
        let wide = s.write_profile("wide", WIDE);
        let o = s.run(
            wide.to_str().unwrap(),
            &format!("{moves}; cat config2/gh/hosts.yml"),
        );
        assert!(
            stdout(&o).contains("config=0"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(
            stdout(&o).contains("SENTINEL-GH-PIN"),
            "{}: {}",
            s.label(),
            text(&o)
        );
    }
}

#[test]
fn a_link_on_the_way_to_a_hidden_secret_cannot_be_pointed_elsewhere() {
    // `~/.config/gh` leads through a link inside the workspace to where the secret is.
    let swap = "rm config/gh; echo rm=$?; ln -sfn ../elsewhere config/gh; \
                mv store store2; echo store=$?; rm config/vim; echo twin=$?";
    for u in users() {
        let s = dotfiles(u);
        std::fs::rename(s.ws.join("config/gh"), s.ws.join("store")).unwrap();
        symlink("../store", s.ws.join("config/gh")).unwrap();
        symlink("../vim", s.ws.join("config/vim")).unwrap();
        s.chown_all();
        for l in ["config/gh", "config/vim"] {
            std::os::unix::fs::lchown(s.ws.join(l), u, u).unwrap();
        }
        let o = s.run("workspace", swap);
        for line in ["rm=1", "store=1", "twin=0"] {
            assert!(
                stdout(&o).contains(line),
                "{}: {line}: {}",
                s.label(),
                text(&o)
            );
        }
        let o = s.run("workspace", "cat store/hosts.yml store2/hosts.yml");
        assert!(
            !text(&o).contains("SENTINEL"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        // The same link can be replaced under a profile that hides nothing.
        let wide = s.write_profile("wide", WIDE);
        let o = s.run(wide.to_str().unwrap(), swap);
        assert!(stdout(&o).contains("rm=0"), "{}: {}", s.label(), text(&o));
    }
}

#[test]
fn a_link_made_in_the_workspace_to_a_granted_tree_is_covered_not_fatal() {
    for u in users() {
        let s = dotfiles(u);
        std::fs::remove_dir_all(s.ws.join("config/gh")).unwrap();
        // A command makes `~/.config/gh` lead to the workspace itself.
        let o = s.run("workspace", "ln -s .. config/gh && echo MADE");
        assert!(stdout(&o).contains("MADE"), "{}: {}", s.label(), text(&o));
        let probe = "echo RAN-4d0e; cat \"$HOME/.config/gh/vim/vimrc\" || echo COVERED; \
                     cat vim/vimrc; rm config/gh; echo rm=$?";
        let o = s.run("workspace", probe);
        assert_ok(&s, &o);
        let out = stdout(&o);
        assert!(
            out.contains("RAN-4d0e") && out.contains("COVERED"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        // The workspace stays readable at its own path; the link stays during the run.
        assert!(
            out.contains("PUBLIC-VIM-PIN") && out.contains("rm=1"),
            "{}",
            text(&o)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("config/gh") && err.contains("covered"),
            "{}: {err}",
            s.label()
        );
        // Through a link the user made outside the writable trees, the run is still refused.
        symlink(&s.ws, s.home.join(".kube")).unwrap();
        let o = s.run("workspace", "echo RAN-4d0e");
        assert!(
            !stdout(&o).contains("RAN-4d0e"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(
            text(&o).contains(".kube") && text(&o).contains("cannot hide"),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn a_protected_link_s_target_cannot_be_moved_away() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::create_dir_all(s.ws.join("sub/claude")).unwrap();
        std::fs::write(s.ws.join("sub/claude/settings.json"), "{}\n").unwrap();
        symlink("sub/claude", s.ws.join(".claude")).unwrap();
        std::fs::create_dir_all(s.ws.join("other")).unwrap();
        s.chown_all();
        std::os::unix::fs::lchown(s.ws.join(".claude"), u, u).unwrap();
        let moves = "mv sub sub2; echo sub=$?; mv other other2; echo other=$?";
        let o = s.run("workspace", moves);
        for line in ["sub=1", "other=0"] {
            assert!(
                stdout(&o).contains(line),
                "{}: {line}: {}",
                s.label(),
                text(&o)
            );
        }
        // The next run starts.
        assert_ok(&s, &s.run("workspace", "true"));
        let wide = s.write_profile("wide", WIDE);
        let o = s.run(wide.to_str().unwrap(), moves);
        assert!(stdout(&o).contains("sub=0"), "{}: {}", s.label(), text(&o));
    }
}

#[test]
fn a_dangling_protected_link_does_not_stop_the_run_and_what_it_leads_to_is_undone() {
    let make = "echo RAN-91c3; mkdir -p direnv sub/claude; echo 'export X=1' > direnv/envrc; \
                echo '{}' > sub/claude/settings.json";
    for u in users() {
        let s = Scratch::new(u);
        // The user's own links to files not made yet.
        symlink("direnv/envrc", s.ws.join(".envrc")).unwrap();
        symlink("sub/claude", s.ws.join(".claude")).unwrap();
        for l in [".envrc", ".claude"] {
            std::os::unix::fs::lchown(s.ws.join(l), u, u).unwrap();
        }
        let o = s.run("workspace", make);
        assert!(
            stdout(&o).contains("RAN-91c3"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert_ne!(o.status.code(), Some(125), "{}: {}", s.label(), text(&o));
        // What the links lead to, made during the run, went to quarantine.
        // (The report names the outermost path made: the directory on the link's way.)
        for p in ["direnv/envrc", "sub/claude"] {
            assert!(!s.ws.join(p).exists(), "{}: {p}: {}", s.label(), text(&o));
            let first = p.split('/').next().unwrap_or(p);
            assert!(
                text(&o).contains(&format!("/ws/{first} ")) || text(&o).contains(p),
                "{}: {p}: {}",
                s.label(),
                text(&o)
            );
        }
        assert!(s.ws.join(".envrc").is_symlink() && s.ws.join(".claude").is_symlink());
        // Under a profile that protects nothing, they stay.
        let wide = s.write_profile("wide", WIDE);
        let o = s.run(wide.to_str().unwrap(), make);
        assert_ok(&s, &o);
        assert!(s.ws.join("direnv/envrc").exists() && s.ws.join("sub/claude").exists());
    }
}

/// A directory above a hidden secret or a protected path made unsearchable in one run (`chmod
/// 000`) keeps the next run's planning from seeing what is beneath; it is covered (a hidden
/// secret's) or made read-only (a protected path's) so that the command cannot make it
/// searchable again. Only for uid 65534: root searches any directory anyway.
#[test]
fn a_directory_made_unsearchable_above_a_secret_or_a_protected_path_stays_so() {
    let back = "chmod 755 config sub; cat config/gh/hosts.yml; \
                echo evil > sub/claude/settings.json && echo WROTE";
    for u in users().into_iter().filter(Option::is_some) {
        let wide_run = |s: &Scratch| {
            let wide = s.write_profile("wide", WIDE);
            s.run(wide.to_str().unwrap(), back)
        };
        for wide in [false, true] {
            let s = dotfiles(u);
            std::fs::create_dir_all(s.ws.join("sub/claude")).unwrap();
            symlink("sub/claude", s.ws.join(".claude")).unwrap();
            s.chown_all();
            std::os::unix::fs::lchown(s.ws.join(".claude"), u, u).unwrap();
            let o = s.run("workspace", "chmod 000 config sub; echo rc=$?");
            assert!(stdout(&o).contains("rc=0"), "{}: {}", s.label(), text(&o));
            let o = if wide {
                wide_run(&s)
            } else {
                s.run("workspace", back)
            };
            let out = stdout(&o);
            // Under a profile that hides and protects nothing, both work.
            assert_eq!(
                out.contains("SENTINEL-GH-PIN"),
                wide,
                "{}: {}",
                s.label(),
                text(&o)
            );
            assert_eq!(out.contains("WROTE"), wide, "{}: {}", s.label(), text(&o));
            std::process::Command::new("chmod")
                .args(["-R", "u+rwx"])
                .arg(&s.ws)
                .status()
                .unwrap();
        }
    }
}
