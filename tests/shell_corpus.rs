//! Labeled corpora: the shell analysis alone (every case has a floor it must meet), and the
//! whole gate (policy, analysis, floor and the profile's plan; every case has its decision).
//! Each prints the figures it is measured by and asserts them.
#![expect(clippy::unwrap_used, reason = "test harness")]

use sbx::WorkspaceContext;
use sbx::capability::CapabilitySet;
use sbx::pipeline::{Caller, Decision, EnforcementOutlook, Mode, ToolCall, check};
use sbx::policy::{self, Policy, SourceKind};
use sbx::profile::{Profile, Vars};
use sbx::shell::{ShellContext, analyze};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Category {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    not_allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Floor {
    Allow,
    NotAllow,
    Deny,
}

struct Fixture {
    _root: tempfile::TempDir,
    workspace: WorkspaceContext,
    vars: Vec<(&'static str, String)>,
}

impl Fixture {
    /// A command starting in the workspace root.
    fn ctx(&self) -> ShellContext<'_> {
        ShellContext {
            cwd: self.workspace.root.clone(),
            workspace: &self.workspace,
        }
    }
}

fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let out = base.join("out");
    let tmp = base.join("tmp");
    let home = base.join("home");
    for d in [
        ws.join("src"),
        ws.join(".git/hooks"),
        ws.join("sub"),
        ws.join("subm/.git"),
        out.clone(),
        tmp.clone(),
        home.join(".ssh"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    git_refs(&ws.join(".git"));
    std::os::unix::fs::symlink(&out, ws.join("link-out")).unwrap();
    std::os::unix::fs::symlink(ws.join(".git"), ws.join("link-git")).unwrap();
    std::os::unix::fs::symlink(ws.join(".git/hooks"), ws.join("link-hooks")).unwrap();
    std::fs::write(home.join(".netrc"), "secret\n").unwrap();
    std::fs::write(
        ws.join("subm/.gitmodules"),
        "[submodule \"m\"]\n\tpath = m\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(home.join(".netrc"), ws.join("lnk_netrc")).unwrap();
    std::os::unix::fs::symlink(&home, ws.join("lnk_home")).unwrap();
    // Links a `..` climbs back out of (`[link-dotdot]`): into the home, and a home link to a
    // dotfiles directory.
    for d in [
        home.join("proj"),
        home.join("dots/cfg"),
        home.join("dots/.codex"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join("proj/notes.md"), "x\n").unwrap();
    std::fs::write(home.join("dots/.codex/auth.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink(home.join("proj"), ws.join("into-home")).unwrap();
    std::os::unix::fs::symlink(home.join("dots/cfg"), home.join(".cfg")).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    Fixture {
        vars: vec![("{ws}", s(&ws)), ("{out}", s(&out)), ("{tmp}", s(&tmp))],
        workspace: WorkspaceContext::new(ws, home)
            .with_writable([tmp.clone()])
            .with_tmp(tmp),
        _root: root,
    }
}

/// `[glob-chars-in-names]`: links out of the workspace whose names hold wildcard characters
/// (`odd/n*` and `odd/we[i]rd` -> ~/.netrc, `odd/h?` -> ~), beside a plain file.
fn glob_named_links(ws: &Path, home: &Path) {
    let odd = ws.join("odd");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("plain.txt"), "x\n").unwrap();
    for (name, to) in [
        ("n*", home.join(".netrc")),
        ("we[i]rd", home.join(".netrc")),
        ("h?", home.to_path_buf()),
    ] {
        std::os::unix::fs::symlink(to, odd.join(name)).unwrap();
    }
}

/// The workspace repository's refs (`[upstream-writes]`): on `main`, local `main` and
/// `topic-old`, remote branches `origin/x`, `origin/feat` and `origin/packed` (packed),
/// `origin/HEAD`, a tag `v1`.
fn git_refs(git: &Path) {
    let oid = "c3c3cdc0000000000000000000000000000000000\n";
    for r in [
        "heads/main",
        "heads/topic-old",
        "remotes/origin/x",
        "remotes/origin/feat",
    ] {
        let f = git.join("refs").join(r);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, oid).unwrap();
    }
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let origin_head = "ref: refs/remotes/origin/main\n";
    std::fs::write(git.join("refs/remotes/origin/HEAD"), origin_head).unwrap();
    std::fs::write(
        git.join("packed-refs"),
        "c3c3cdc0000000000000000000000000000000000 refs/remotes/origin/packed\n\
         c3c3cdc0000000000000000000000000000000000 refs/tags/v1\n",
    )
    .unwrap();
}

#[test]
fn corpus_meets_targets() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/shell_corpus.toml"
    ))
    .unwrap();
    let cats: BTreeMap<String, Category> = toml::from_str(&text)
        .map_err(|e| e.message().to_string())
        .unwrap();
    let fx = fixture();
    let mut cases: Vec<(String, Floor, String)> = Vec::new();
    for (name, c) in &cats {
        for (list, floor) in [
            (&c.allow, Floor::Allow),
            (&c.not_allow, Floor::NotAllow),
            (&c.deny, Floor::Deny),
        ] {
            for cmd in list {
                let mut cmd = cmd.clone();
                for (k, v) in &fx.vars {
                    cmd = cmd.replace(k, v);
                }
                cases.push((name.clone(), floor, cmd));
            }
        }
    }
    let (mut allow_n, mut asked, mut deny_n, mut denied, mut false_allows) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for (cat, floor, cmd) in &cases {
        let a = analyze(cmd, &fx.ctx());
        let ok = match floor {
            Floor::Allow => {
                allow_n += 1;
                if a.verdict != Decision::Allow {
                    asked += 1;
                }
                a.verdict == Decision::Allow
            }
            Floor::NotAllow => {
                if a.verdict == Decision::Allow {
                    false_allows += 1;
                }
                a.verdict != Decision::Allow
            }
            Floor::Deny => {
                deny_n += 1;
                if a.verdict == Decision::Allow {
                    false_allows += 1;
                }
                if a.verdict == Decision::Deny {
                    denied += 1;
                }
                a.verdict == Decision::Deny
            }
        };
        if !ok {
            failures.push(format!(
                "  [{cat}] {floor:?} got {:?}: {cmd:?}\n      {}",
                a.verdict, a.reason
            ));
        }
    }
    let ask_share = asked as f64 * 100.0 / allow_n.max(1) as f64;
    println!(
        "shell corpus: {} cases in {} categories",
        cases.len(),
        cats.len()
    );
    println!("false allows: {false_allows} (target 0)");
    println!("must-allow cases asked: {asked}/{allow_n} = {ask_share:.1}% (target <= 10%)");
    println!("must-deny cases denied: {denied}/{deny_n} (target all)");
    if !failures.is_empty() {
        println!("cases below their floor:\n{}", failures.join("\n"));
    }
    assert!(cases.len() >= 400, "corpus has only {} cases", cases.len());
    assert_eq!(false_allows, 0, "false allows");
    assert!(ask_share <= 10.0, "too many must-allow cases asked");
    assert_eq!(denied, deny_n, "must-deny cases not denied");
}

/// One category of the gate corpus.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct GateCategory {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

#[derive(serde::Deserialize)]
struct GateCorpus {
    user_policy: String,
    #[serde(flatten)]
    categories: BTreeMap<String, GateCategory>,
}

/// The workspace profile's capability set and policy for the fixture, as `sbx run` and the
/// hooks resolve them.
fn gate_setup(fx: &Fixture, user_policy: &str) -> (CapabilitySet, Arc<Policy>) {
    let ws = fx.workspace.root.clone();
    for d in [".github/workflows", ".git/hooks"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join(".env"), "A=1\n").unwrap();
    plant_project_files(&ws);
    let home = fx.workspace.home.clone();
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    std::fs::write(home.join(".config/gh/hosts.yml"), "x\n").unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "x\n").unwrap();
    std::fs::write(home.join(".gitconfig"), "[user]\n").unwrap();
    glob_named_links(&ws, &home);
    for d in [".codex", ".claude", ".aws"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    // A docker context for Colima (`[plan-refuses-daemons]`), as `colima start` leaves it.
    let meta = home.join(".docker/contexts/meta/0123abcd");
    std::fs::create_dir_all(&meta).unwrap();
    let colima = home.join(".colima/default/docker.sock");
    let context = serde_json::json!({
        "Name": "colima",
        "Endpoints": {"docker": {"Host": format!("unix://{}", colima.display())}},
    });
    std::fs::write(meta.join("meta.json"), context.to_string()).unwrap();
    for f in [
        ".codex/auth.json",
        ".claude/.credentials.json",
        ".aws/credentials",
        ".netrc",
        ".git-credentials",
        ".pgpass",
    ] {
        std::fs::write(home.join(f), "secret\n").unwrap();
    }
    let vars = Vars {
        workspace: WorkspaceContext::new(&ws, &home),
        tmp: fx.workspace.writable[0].clone(),
    };
    let caps = Profile::load("workspace").unwrap().resolve(&vars).unwrap();
    // As the one road from a profile to the gate (`setup::Loaded::load`) makes it.
    let env = WorkspaceContext::new(ws, home).with_tmp(vars.tmp.clone());
    let shipped = policy::profile_policy("workspace").unwrap();
    let sources = vec![
        policy::parse_profile_policy(shipped, "workspace", &env).unwrap(),
        policy::parse_policy_file(user_policy, SourceKind::User, "user.toml", &env).unwrap(),
    ];
    (caps, Arc::new(policy::merge(sources, &env).unwrap()))
}

/// Project files that name programs, each beside an ordinary twin (see `[project-config-agent]`
/// in the gate corpus): cargo configuration, rustup toolchain files, yarn configuration,
/// repositories planted without a `.git` name or with a hook, Python modules that shadow the
/// standard library's.
fn plant_project_files(ws: &Path) {
    let bare = |dir: &str, config: &str| {
        for d in ["objects", "refs/heads"] {
            std::fs::create_dir_all(ws.join(dir).join(d)).unwrap();
        }
        std::fs::write(ws.join(dir).join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(ws.join(dir).join("config"), config).unwrap();
    };
    bare(
        "bare-evil",
        "[core]\n\tbare = true\n[gpg]\n\tprogram = ./x\n",
    );
    bare("bare-plain", "[core]\n\tbare = true\n");
    bare("tree-out", "[core]\n\tbare = false\n\tworktree = ../..\n");
    bare("tree-in", "[core]\n\tbare = false\n\tworktree = ..\n");
    bare("hooked/.git", "[core]\n\tbare = false\n");
    bare(
        "cloned/.git",
        "[remote \"origin\"]\n\turl = https://example.com/r\n",
    );
    std::fs::create_dir_all(ws.join("hooked/.git/hooks")).unwrap();
    std::fs::write(ws.join("hooked/.git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir_all(ws.join("cloned/.git/hooks")).unwrap();
    std::fs::write(ws.join("cloned/.git/hooks/pre-commit.sample"), "").unwrap();
    let files = [
        (
            "cfg-wrap/.cargo/config.toml",
            "[build]\nrustc-wrapper = \"./w\"\n",
        ),
        (
            "cfg-env/.cargo/config.toml",
            "[env]\nLD_PRELOAD = \"./x.so\"\n",
        ),
        (
            "cfg-alias/.cargo/config.toml",
            "[alias]\nfmt = \"run --bin x\"\n",
        ),
        (
            "cfg-plain/.cargo/config.toml",
            "[build]\nrustflags = [\"-Dwarnings\"]\n[alias]\nxtask = \"run -p xtask --\"\n\
             [target.thumbv7em-none-eabihf]\nrunner = \"probe-rs run\"\n",
        ),
        (
            "tc-path/rust-toolchain.toml",
            "[toolchain]\npath = \"/opt/tc\"\n",
        ),
        ("tc-legacy/rust-toolchain", "/opt/tc\n"),
        (
            "tc-channel/rust-toolchain.toml",
            "[toolchain]\nchannel = \"1.85\"\n",
        ),
        ("gitfile/.git", "gitdir: ../bare-evil\n"),
        ("badgitfile/.git", "not a gitdir line\n"),
        ("py-shadow/argparse.py", "import os\n"),
        ("py-shadow/x.json", "{}\n"),
        ("py-plain/x.json", "{}\n"),
        (
            "yarn-path/.yarnrc.yml",
            "yarnPath: .yarn/releases/yarn.cjs\n",
        ),
        ("yarn-plain/.yarnrc.yml", "nodeLinker: node-modules\n"),
        ("mvn-agent/.mvn/jvm.config", "-javaagent:./a.jar\n"),
        ("mvn-ext/.mvn/extensions.xml", "<extensions/>\n"),
        ("mvn-ext/sub/pom.xml", "<project/>\n"),
        ("mvn-plain/pom.xml", "<project/>\n"),
        ("mvn-plain/.mvn/jvm.config", "\n"),
    ];
    for (f, text) in files {
        std::fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
        std::fs::write(ws.join(f), text).unwrap();
    }
}

#[test]
fn gate_corpus_meets_targets() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/gate_corpus.toml"
    ))
    .unwrap();
    let corpus: GateCorpus = toml::from_str(&text)
        .map_err(|e| e.message().to_string())
        .unwrap();
    let fx = fixture();
    let (caps, policy) = gate_setup(&fx, &corpus.user_policy);
    let outlook = EnforcementOutlook {
        fully_enforced: true,
        missing: Vec::new(),
    };
    let (mut cases, mut allow_n, mut over_asked, mut false_allows) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (name, c) in &corpus.categories {
        let mode = Mode::parse(c.mode.as_deref().unwrap_or("default")).unwrap();
        for (list, want) in [
            (&c.allow, Decision::Allow),
            (&c.ask, Decision::Ask),
            (&c.deny, Decision::Deny),
        ] {
            for cmd in list {
                let mut cmd = cmd.clone();
                for (k, v) in &fx.vars {
                    cmd = cmd.replace(k, v);
                }
                let call = ToolCall::bash("c", &cmd, Caller::default(), &fx.workspace.root);
                let r = check(&call, policy.clone(), mode, &caps, outlook.clone());
                cases += 1;
                match (want, r.decision) {
                    (Decision::Allow, got) => {
                        allow_n += 1;
                        if got != Decision::Allow {
                            over_asked += 1;
                        }
                    }
                    (Decision::Ask | Decision::Deny, Decision::Allow) => false_allows += 1,
                    (Decision::Ask | Decision::Deny, Decision::Ask | Decision::Deny) => {}
                }
                if r.decision != want {
                    failures.push(format!(
                        "  [{name}] want {} got {} by {} ({}): {cmd:?}\n      {}",
                        want.as_str(),
                        r.decision.as_str(),
                        r.by,
                        r.stage,
                        r.reason
                    ));
                }
            }
        }
    }
    let share = over_asked as f64 * 100.0 / f64::from(allow_n.max(1));
    println!(
        "gate corpus: {cases} cases in {} categories",
        corpus.categories.len()
    );
    println!("false allows: {false_allows} (target 0)");
    println!("must-allow cases not allowed: {over_asked}/{allow_n} = {share:.1}% (target <= 10%)");
    if !failures.is_empty() {
        println!("cases with another decision:\n{}", failures.join("\n"));
    }
    assert_eq!(false_allows, 0, "false allows");
    assert!(share <= 10.0, "too many must-allow cases asked");
    assert!(
        failures.is_empty(),
        "{} cases decided otherwise",
        failures.len()
    );
}
