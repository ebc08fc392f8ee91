//! Labeled corpus for shell analysis: every case has a floor it must meet.
//! Prints the three figures the analysis is measured by and asserts them.
#![expect(clippy::unwrap_used, reason = "test harness")]

use sbx::shell::{ShellContext, Verdict, analyze};
use std::collections::BTreeMap;
use std::path::Path;

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
    ctx: ShellContext,
    vars: Vec<(&'static str, String)>,
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
        out.clone(),
        tmp.clone(),
        home.join(".ssh"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(&out, ws.join("link-out")).unwrap();
    std::os::unix::fs::symlink(ws.join(".git"), ws.join("link-git")).unwrap();
    std::os::unix::fs::symlink(ws.join(".git/hooks"), ws.join("link-hooks")).unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    Fixture {
        vars: vec![("{ws}", s(&ws)), ("{out}", s(&out)), ("{tmp}", s(&tmp))],
        ctx: ShellContext {
            cwd: ws.clone(),
            workspace: ws,
            home,
            writable: vec![tmp],
        },
        _root: root,
    }
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
        let a = analyze(cmd, &fx.ctx);
        let ok = match floor {
            Floor::Allow => {
                allow_n += 1;
                if a.verdict != Verdict::Allow {
                    asked += 1;
                }
                a.verdict == Verdict::Allow
            }
            Floor::NotAllow => {
                if a.verdict == Verdict::Allow {
                    false_allows += 1;
                }
                a.verdict != Verdict::Allow
            }
            Floor::Deny => {
                deny_n += 1;
                if a.verdict == Verdict::Allow {
                    false_allows += 1;
                }
                if a.verdict == Verdict::Deny {
                    denied += 1;
                }
                a.verdict == Verdict::Deny
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
