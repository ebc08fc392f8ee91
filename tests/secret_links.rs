//! Secrets kept in a dotfiles repository and reached through symbolic links (`~/.aws ->
//! dotfiles/aws`, `~/.ssh -> /home/u/dotfiles/ssh`, `~/.config -> dotfiles/config`,
//! `~/.netrc -> dotfiles/netrc`) are hidden as if they were no links: through the link and at
//! the path it leads to, by the kernel and by the gate. Each blocked read is paired with the
//! same read allowed (of a file that is no secret through the same kind of link, or under a
//! profile that hides nothing), as root and as uid 65534.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
mod sandbox_common;
use common::*;
use sandbox_common::*;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Stdio;

/// A home whose secrets live in `~/dotfiles`, with a file that is no secret beside each.
fn dotfiles_home(s: &Scratch) {
    let d = s.home.join("dotfiles");
    let write = |rel: &str, text: &str| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("aws/credentials", "SENTINEL-AWS-1c9e\n");
    write("ssh/id_rsa", "SENTINEL-SSH-LINK-44d0\n");
    write("config/gh/hosts.yml", "SENTINEL-GH-77b1\n");
    write("config/editor/settings", "PUBLIC-EDITOR-3a5f\n");
    write("vim/vimrc", "PUBLIC-VIM-0e42\n");
    write("netrc", "SENTINEL-NETRC-LINK-9d2c\n");
    write("gitconfig", "PUBLIC-GITCONFIG-61aa\n");
    // Scratch makes a real `~/.ssh`; here it is a link.
    std::fs::remove_dir_all(s.home.join(".ssh")).unwrap();
    let h = |n: &str| s.home.join(n);
    symlink("dotfiles/aws", h(".aws")).unwrap();
    symlink(d.join("ssh"), h(".ssh")).unwrap();
    symlink("dotfiles/config", h(".config")).unwrap();
    symlink("dotfiles/netrc", h(".netrc")).unwrap();
    // The twins: links of the same kinds to files that are no secrets.
    symlink("dotfiles/vim", h(".vim")).unwrap();
    symlink(d.join("vim"), h(".vim-absolute")).unwrap();
    symlink("dotfiles/gitconfig", h(".gitconfig")).unwrap();
    s.chown_all();
}

/// `cat` of `rel` under the home, under `profile`.
fn cat(s: &Scratch, profile: &str, rel: &str) -> std::process::Output {
    s.run(profile, &format!("cat \"$HOME/{rel}\""))
}

fn assert_hidden(s: &Scratch, rel: &str, sentinel: &str) {
    let o = cat(s, "workspace", rel);
    assert!(
        !text(&o).contains(sentinel),
        "{}: {rel} leaked: {}",
        s.label(),
        text(&o)
    );
    assert_ne!(
        o.status.code(),
        Some(0),
        "{}: {rel}: {}",
        s.label(),
        text(&o)
    );
}

fn assert_read(s: &Scratch, profile: &str, rel: &str, sentinel: &str) {
    let o = cat(s, profile, rel);
    assert!(
        stdout(&o).contains(sentinel),
        "{}: {rel} under {profile}: {}",
        s.label(),
        text(&o)
    );
}

#[test]
fn a_directory_secret_behind_a_relative_link_is_hidden_at_both_paths() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        let wide = s.write_profile("wide", WIDE);
        for rel in [".aws/credentials", "dotfiles/aws/credentials"] {
            assert_hidden(&s, rel, "SENTINEL-AWS");
            assert_read(&s, wide.to_str().unwrap(), rel, "SENTINEL-AWS");
        }
        // The same kind of link to a directory that is no secret reads as ever.
        assert_read(&s, "workspace", ".vim/vimrc", "PUBLIC-VIM");
    }
}

#[test]
fn a_directory_secret_behind_an_absolute_link_is_hidden_at_both_paths() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        let wide = s.write_profile("wide", WIDE);
        for rel in [".ssh/id_rsa", "dotfiles/ssh/id_rsa"] {
            assert_hidden(&s, rel, "SENTINEL-SSH-LINK");
            assert_read(&s, wide.to_str().unwrap(), rel, "SENTINEL-SSH-LINK");
        }
        assert_read(&s, "workspace", ".vim-absolute/vimrc", "PUBLIC-VIM");
    }
}

#[test]
fn a_secret_below_a_linked_directory_is_hidden_at_both_paths() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        let wide = s.write_profile("wide", WIDE);
        for rel in [".config/gh/hosts.yml", "dotfiles/config/gh/hosts.yml"] {
            assert_hidden(&s, rel, "SENTINEL-GH");
            assert_read(&s, wide.to_str().unwrap(), rel, "SENTINEL-GH");
        }
        // The linked directory's other files stay readable, through the link and at its target.
        for rel in [".config/editor/settings", "dotfiles/config/editor/settings"] {
            assert_read(&s, "workspace", rel, "PUBLIC-EDITOR");
        }
    }
}

#[test]
fn a_file_secret_behind_a_link_is_hidden_at_both_paths() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        let wide = s.write_profile("wide", WIDE);
        for rel in [".netrc", "dotfiles/netrc"] {
            assert_hidden(&s, rel, "SENTINEL-NETRC-LINK");
            assert_read(&s, wide.to_str().unwrap(), rel, "SENTINEL-NETRC-LINK");
        }
        assert_read(&s, "workspace", ".gitconfig", "PUBLIC-GITCONFIG");
    }
}

#[test]
fn a_secret_linked_into_a_hidden_directory_is_hidden_at_its_target() {
    // GNU stow links files one by one into a directory that exists already: `~/.ssh` is a
    // real directory, its key a link to the dotfiles.
    for u in users() {
        let s = Scratch::new(u);
        let d = s.home.join("dotfiles");
        std::fs::create_dir_all(d.join("ssh")).unwrap();
        std::fs::create_dir_all(d.join("vim")).unwrap();
        std::fs::create_dir_all(s.home.join(".vim")).unwrap();
        std::fs::write(d.join("ssh/id_ed25519"), "SENTINEL-STOWED-5b7e\n").unwrap();
        std::fs::write(d.join("vim/vimrc"), "PUBLIC-STOWED-VIM-2c4a\n").unwrap();
        symlink("../dotfiles/ssh/id_ed25519", s.home.join(".ssh/id_ed25519")).unwrap();
        symlink("../dotfiles/vim/vimrc", s.home.join(".vim/vimrc")).unwrap();
        s.chown_all();
        let wide = s.write_profile("wide", WIDE);
        for rel in [".ssh/id_ed25519", "dotfiles/ssh/id_ed25519"] {
            assert_hidden(&s, rel, "SENTINEL-STOWED");
            assert_read(&s, wide.to_str().unwrap(), rel, "SENTINEL-STOWED");
        }
        // The same kind of link in a directory that is no secret reads as ever, at both ends.
        for rel in [".vim/vimrc", "dotfiles/vim/vimrc"] {
            assert_read(&s, "workspace", rel, "PUBLIC-STOWED-VIM");
        }
    }
}

#[test]
fn a_dangling_link_at_a_secret_does_not_fail_the_run() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        // A directory secret and a file secret whose targets are not there.
        // Owned like the rest (`chown_all` follows links, which lead nowhere here).
        for (target, name) in [("dotfiles/kube", ".kube"), ("dotfiles/pgpass", ".pgpass")] {
            symlink(target, s.home.join(name)).unwrap();
            std::os::unix::fs::lchown(s.home.join(name), u, u).unwrap();
        }
        let o = s.run("workspace", "cat \"$HOME/.vim/vimrc\"; ls -A \"$HOME\"");
        assert_eq!(o.status.code(), Some(0), "{}: {}", s.label(), text(&o));
        assert!(stdout(&o).contains("PUBLIC-VIM"), "{}", text(&o));
        assert!(stdout(&o).contains(".kube"), "{}", text(&o));
    }
}

/// A link that leads to a tree holding what the profile grants cannot be hidden alone: the
/// run fails and names the link, rather than starting with the secret in sight.
#[test]
fn a_link_to_a_granted_tree_fails_the_run_with_its_name() {
    for u in users() {
        let s = Scratch::new(u);
        let ws = s.ws.to_str().unwrap().to_string();
        symlink(&ws, s.home.join(".aws")).unwrap();
        s.chown_all();
        let o = s.run("workspace", "echo RAN-5e1f");
        assert_ne!(o.status.code(), Some(0), "{}: {}", s.label(), text(&o));
        assert!(!stdout(&o).contains("RAN-5e1f"), "{}", text(&o));
        let err = text(&o);
        assert!(
            err.contains(".aws") && err.contains("cannot hide") && err.contains(&ws),
            "{}: {err}",
            s.label()
        );
        // The same run without the link starts.
        std::fs::remove_file(s.home.join(".aws")).unwrap();
        let o = s.run("workspace", "echo RAN-5e1f");
        assert!(stdout(&o).contains("RAN-5e1f"), "{}", text(&o));
    }
}

/// The gate's answer (`sbx check`) to `cmd` proposed in the scratch workspace.
fn gate(s: &Scratch, cmd: &str) -> String {
    let o = s
        .sbx(&["check", "--profile", "workspace", "--", cmd])
        .output()
        .unwrap();
    stdout(&o)
}

/// The gate judges a read through the link and at its target as the plan does.
#[test]
fn the_gate_denies_reads_through_links_and_at_their_targets() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        let check = |cmd: &str| gate(&s, cmd);
        for rel in [
            ".aws/credentials",
            "dotfiles/aws/credentials",
            ".ssh/id_rsa",
            "dotfiles/ssh/id_rsa",
            ".config/gh/hosts.yml",
            "dotfiles/config/gh/hosts.yml",
            ".netrc",
            "dotfiles/netrc",
        ] {
            let out = check(&format!("cat ~/{rel}"));
            assert!(out.starts_with("deny"), "{}: {rel}: {out}", s.label());
        }
        for rel in [
            ".vim/vimrc",
            "dotfiles/vim/vimrc",
            ".config/editor/settings",
        ] {
            let out = check(&format!("cat ~/{rel}"));
            assert!(out.starts_with("allow"), "{}: {rel}: {out}", s.label());
        }
    }
}

/// A link in the workspace that leads to a secret (`key -> ~/.ssh/id_rsa`, `keys -> ~/.ssh`):
/// what looks at the link alone (`ls -l`, `du`, `stat`, `readlink`) reads nothing of the
/// secret, so the gate does not refuse it (renaming and removing it are judged at the floor
/// of its target too, and refused for a link into `~/.ssh`), and the kernel lets it
/// run; what opens the target (`cat`, `wc`, `cp`, `ls` of the directory, a trailing `/`) is
/// denied by the gate and refused by the kernel.
#[test]
fn a_link_to_a_secret_is_handled_as_a_link_by_the_gate_and_the_kernel() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.home.join(".ssh/id_rsa"), "SENTINEL-WS-LINK-5b7e\n").unwrap();
        symlink(s.home.join(".ssh/id_rsa"), s.ws.join("key")).unwrap();
        symlink(s.home.join(".ssh"), s.ws.join("keys")).unwrap();
        std::fs::write(s.ws.join("notes.txt"), "notes\n").unwrap();
        s.chown_all();
        let check = |cmd: &str| gate(&s, cmd);
        let touches_the_link = [
            "ls -la *",
            "ls -l key keys",
            "du -sh *",
            "stat key",
            "readlink key",
        ];
        for cmd in touches_the_link {
            let out = check(cmd);
            assert!(!out.starts_with("deny"), "{}: {cmd}: {out}", s.label());
        }
        for cmd in [
            "cat key",
            "wc -c *",
            "cp key /tmp/k",
            "ls keys",
            "ls -la keys/",
            "du -shL keys",
            "find -L keys",
            "find keys",
            "find -files0-from key",
            "find . -name key -exec cat {} +",
            "ls -lC keys",
            "ls -l -x keys",
            "ls -Il keys",
            "du -a --dereference-ar keys",
            "stat --deref key",
            "stat -L key",
        ] {
            let out = check(cmd);
            assert!(out.starts_with("deny"), "{}: {cmd}: {out}", s.label());
        }
        // The kernel agrees: the link is listed, described, renamed and removed; its
        // target's content is not read.
        let script = "ls -la * >/dev/null && du -sh * >/dev/null && stat key >/dev/null \
            && readlink key >/dev/null && mv key key2 \
            && rm key2 && echo LINK-OPS-OK; cat keys/id_rsa";
        let o = s.run("workspace", script);
        assert!(
            stdout(&o).contains("LINK-OPS-OK"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(
            !text(&o).contains("SENTINEL-WS-LINK"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        let gone = s.ws.join("key").symlink_metadata().is_err();
        assert!(gone, "{}: the link was not removed", s.label());
        assert!(s.home.join(".ssh/id_rsa").exists(), "{}", s.label());
    }
}

/// A listing of the workspace names a link as a name inside it, but the program it is handed
/// to (`find -exec cat`, `xargs cat`, `cat $(find .)`) opens where the link leads: the gate
/// denies that when the link leads to a secret, and allows the same listing when its tests
/// leave the link out or when git does not track it. A walker that follows links (`grep -R`)
/// is judged by the trees they lead to. The kernel reads the files and not the secret.
#[test]
fn a_listing_handed_to_a_program_that_opens_its_names() {
    for u in users() {
        let s = Scratch::new(u);
        std::fs::write(s.home.join(".ssh/id_rsa"), "SENTINEL-LISTED-LINK-7c3a\n").unwrap();
        symlink(s.home.join(".ssh/id_rsa"), s.ws.join("key")).unwrap();
        symlink(s.home.join(".ssh"), s.ws.join("keys")).unwrap();
        std::fs::write(s.ws.join("notes.txt"), "LISTED-NOTES-OK\n").unwrap();
        std::fs::create_dir(s.ws.join("sub")).unwrap();
        symlink("../notes.txt", s.ws.join("sub/notes")).unwrap();
        s.chown_all();
        git_outside(&s, "git init -q && git add notes.txt");
        let opens_the_link = [
            "find . -exec cat {} +",
            "find . -type l -exec cat {} +",
            "find . -name 'k*' -exec cat {} \\;",
            "find . | xargs cat",
            "find . -print0 | xargs -0 cat",
            "cat $(find .)",
            "ls -l k*/",
            "ls -l ~+/keys/",
            "grep -R SENTINEL .",
            "find -L . -type f -exec cat {} +",
        ];
        let leaves_it_out = [
            "find . -type f -exec cat {} +",
            "find . -name '*.txt' | xargs cat",
            "cat $(find . -name notes.txt)",
            "git ls-files | xargs cat",
            "ls -l k*",
            "grep -R LISTED sub",
            "find -L sub -type f -exec cat {} +",
        ];
        for cmd in opens_the_link {
            let out = gate(&s, cmd);
            assert!(out.starts_with("deny"), "{}: {cmd}: {out}", s.label());
        }
        for cmd in leaves_it_out {
            let out = gate(&s, cmd);
            assert!(out.starts_with("allow"), "{}: {cmd}: {out}", s.label());
        }
        // Once git tracks the link, its listing names it.
        git_outside(&s, "git add key");
        let out = gate(&s, "git ls-files | xargs cat");
        assert!(
            out.starts_with("deny"),
            "{}: tracked link: {out}",
            s.label()
        );
        let o = s.run("workspace", "find . -exec cat {} + 2>/dev/null; true");
        assert!(
            stdout(&o).contains("LISTED-NOTES-OK"),
            "{}: {}",
            s.label(),
            text(&o)
        );
        assert!(
            !text(&o).contains("SENTINEL-LISTED"),
            "{}: {}",
            s.label(),
            text(&o)
        );
    }
}

fn git_outside(s: &Scratch, script: &str) {
    let o = s.outside(script);
    assert!(o.status.success(), "{}: {script}: {}", s.label(), text(&o));
}

/// `sbx serve` loads its policy's examples (`cat ~/.ssh/id_rsa` must be denied) with
/// `~/.ssh` and `~/.aws` as links, and runs a call.
#[test]
fn serve_starts_with_linked_secrets() {
    for u in users() {
        let s = Scratch::new(u);
        dotfiles_home(&s);
        let mut child = s
            .sbx(&["serve", "--profile", "workspace"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = lines.next().map(Result::unwrap).unwrap_or_default();
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        assert!(
            ready.contains("\"type\":\"ready\""),
            "{}: {ready}{}",
            s.label(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(Path::new(&s.home.join(".ssh")).is_symlink());
    }
}
