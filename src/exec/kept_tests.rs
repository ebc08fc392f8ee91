//! A kept plan is the plan a fresh one would be, for every input that differs and as the file
//! system changes between calls; and it is reused while nothing changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::Sandbox;
use crate::capability::CapabilitySet;
use crate::host::{Availability, Host};
use crate::plan::{MountStep, SandboxPlan, capable_host};
use crate::profile::{Profile, Vars};
use crate::workspace::WorkspaceContext;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn sandbox() -> Sandbox {
    Sandbox::with_host(Profile::load("workspace").unwrap(), capable_host(1000))
}

fn vars(ws: &Path, home: &Path) -> Vars {
    Vars {
        workspace: WorkspaceContext::new(ws, home),
        tmp: PathBuf::from("/tmp"),
    }
}

/// The kept (or newly kept) set and plan, checked equal to a fresh one made at once.
fn planned(
    sb: &Sandbox,
    v: &Vars,
    host: &Host,
    narrow: Option<&CapabilitySet>,
) -> (Arc<CapabilitySet>, Arc<SandboxPlan>) {
    let looks = super::stamp::Looks::default();
    let first = || super::below::FirstLevel::new(&v.workspace.root);
    let kept = sb
        .plan_with_vars(v, host, narrow, None, Some(&looks), &first())
        .unwrap();
    let fresh = sb
        .plan_with_vars(v, host, narrow, None, None, &first())
        .unwrap();
    assert_eq!(kept, fresh, "a kept plan differs from a fresh one");
    kept
}

fn hides(plan: &SandboxPlan, path: &Path) -> bool {
    plan.mounts
        .iter()
        .any(|m| matches!(m, MountStep::Hide { target, .. } if target == path))
}

fn is_kept(sb: &Sandbox, v: &Vars, host: &Host, narrow: Option<&CapabilitySet>) -> bool {
    let looks = super::stamp::Looks::default();
    sb.kept.find(v, host, narrow, &looks).is_some()
}

#[test]
fn a_kept_plan_is_reused_until_an_answer_it_depends_on_changes() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let sb = sandbox();
    let host = sb.host().clone();
    let v = vars(&ws, &home);
    planned(&sb, &v, &host, None);
    assert!(is_kept(&sb, &v, &host, None));
    // A file that no question was about leaves it standing.
    std::fs::write(ws.join("main.rs"), "").unwrap();
    assert!(is_kept(&sb, &v, &host, None));
    // A secret's directory appearing changes an answer: the plan is dropped.
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    assert!(!is_kept(&sb, &v, &host, None));
    planned(&sb, &v, &host, None);
    assert!(is_kept(&sb, &v, &host, None));
}

#[test]
fn a_secret_made_between_calls_is_hidden_by_the_next_plan() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let sb = sandbox();
    let host = sb.host().clone();
    let v = vars(&ws, &home);
    let aws = home.join(".aws");
    let netrc = home.join(".netrc");
    let maven = home.join(".m2/settings-security.xml");
    let (_, before) = planned(&sb, &v, &host, None);
    assert!(!hides(&before, &aws) && !hides(&before, &netrc) && !hides(&before, &maven));
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(aws.join("credentials"), "k").unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &aws));
    std::fs::write(&netrc, "machine x").unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &netrc));
    // A glob's new match (`{home}/.m2/settings*.xml`).
    std::fs::create_dir_all(home.join(".m2")).unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(!hides(&plan, &maven));
    std::fs::write(&maven, "<x/>").unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &maven));
    // And gone again: nothing left to hide.
    std::fs::remove_dir_all(&aws).unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(!hides(&plan, &aws) && hides(&plan, &netrc));
}

#[test]
fn workspace_files_that_steer_the_plan_are_seen_by_the_next_one() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let sb = sandbox();
    let host = sb.host().clone();
    let v = vars(&ws, &home);
    let read_only = |caps: &CapabilitySet, p: &Path| caps.fs.deny_write.iter().any(|e| e.path == p);
    let (caps, _) = planned(&sb, &v, &host, None);
    assert!(!read_only(&caps, &ws.join(".env.local")));
    // A new match of `{workspace}/.env*`.
    std::fs::write(ws.join(".env.local"), "K=v").unwrap();
    let (caps, _) = planned(&sb, &v, &host, None);
    assert!(read_only(&caps, &ws.join(".env.local")));
    // A git config whose text names another hooks directory (a file's text, not its name).
    std::fs::write(ws.join(".git/config"), "").unwrap();
    let (caps, _) = planned(&sb, &v, &host, None);
    assert!(!read_only(&caps, &ws.join("my-hooks")));
    std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = my-hooks\n").unwrap();
    let (caps, _) = planned(&sb, &v, &host, None);
    assert!(read_only(&caps, &ws.join("my-hooks")));
}

/// A protected name one level below the workspace root made between calls (`sub/.envrc`) is
/// held read-only by the next call's plan, kept or not; removed again, it is no longer.
#[test]
fn a_protected_name_made_below_the_root_between_calls_is_held_by_the_next_plan() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let sb = sandbox();
    let host = sb.host().clone();
    let v = vars(&ws, &home);
    let envrc = ws.join("sub/.envrc");
    let holds = |plan: &SandboxPlan| {
        plan.mounts
            .iter()
            .any(|m| matches!(m, MountStep::ReadOnly { target, .. } if *target == envrc))
    };
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(!holds(&plan));
    std::fs::write(&envrc, "export A=1\n").unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(holds(&plan), "{:?}", plan.mounts);
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(holds(&plan), "kept");
    std::fs::remove_file(&envrc).unwrap();
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(!holds(&plan));
}

#[test]
fn plans_are_kept_per_workspace_narrowing_and_host() {
    let t = tempfile::tempdir().unwrap();
    let (ws1, ws2, home) = (t.path().join("a"), t.path().join("b"), t.path().join("h"));
    for d in [&ws1, &ws2, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let sb = sandbox();
    let host = sb.host().clone();
    let (v1, v2) = (vars(&ws1, &home), vars(&ws2, &home));
    let (caps1, plan1) = planned(&sb, &v1, &host, None);
    let (_, plan2) = planned(&sb, &v2, &host, None);
    assert_ne!(plan1, plan2);
    assert!(caps1.fs.write.iter().any(|e| e.path == ws1));
    // Both stay kept, each for its own workspace.
    assert!(is_kept(&sb, &v1, &host, None) && is_kept(&sb, &v2, &host, None));
    assert_eq!(planned(&sb, &v1, &host, None).1, plan1);
    // A narrowing (no writes at all) is another plan, which a call without it never gets.
    let mut narrow = (*caps1).clone();
    narrow.fs.write.clear();
    let (narrowed, _) = planned(&sb, &v1, &host, Some(&narrow));
    assert!(!narrowed.fs.write.iter().any(|e| e.path == ws1));
    let (wide, _) = planned(&sb, &v1, &host, None);
    assert!(wide.fs.write.iter().any(|e| e.path == ws1));
    // A host without namespaces (the fallback after a refused user namespace).
    let mut bare = host.clone();
    let missing = Availability::Missing {
        reason: "test".into(),
        fix: "none".into(),
    };
    bare.namespaces = missing.clone();
    bare.user_namespaces = missing;
    let (_, plan) = planned(&sb, &v1, &bare, None);
    assert!(!plan.namespaces.mount);
    assert!(planned(&sb, &v1, &host, None).1.namespaces.mount);
}

/// Once its witnesses have been still for a while, a kept plan's questions are answered by
/// their stamps, and a change under a stamped directory is still seen.
#[test]
fn settled_directories_spare_their_questions_and_still_show_a_change() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(home.join(".config")).unwrap();
    std::fs::write(ws.join(".git/config"), "").unwrap();
    let sb = sandbox();
    let host = sb.host().clone();
    let v = vars(&ws, &home);
    planned(&sb, &v, &host, None);
    let entry = sb.kept.entry(&v, &host, None).unwrap();
    // Let the directories settle past the margin, untouched since.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let here = super::stamp::Witness::Entries(home.clone());
    if super::stamp::Pass::begin().stamp(&here).is_none() {
        eprintln!("SKIP: the temporary directory's file system keeps no reliable change times");
        return;
    }
    // The first check confirms each answer and stamps its witness; the next one asks only
    // the questions nothing stamps (or whose witness lies on an untrusted file system).
    let all = entry.asked.len();
    assert_eq!(entry.asked.asked_again(), Some(all));
    let again = entry.asked.asked_again().unwrap();
    assert!(again < all / 4, "{again} of {all} asked again");
    // A secret made in a stamped directory (`{home}/.config`) changes its stamp; so does one
    // made below directories that did not exist (`{home}/.local/share/keyrings`, vouched
    // absent by the home's stamp).
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    assert_eq!(entry.asked.asked_again(), None);
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &home.join(".config/gh")));
    let entry = sb.kept.entry(&v, &host, None).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(entry.asked.asked_again().is_some());
    assert!(entry.asked.asked_again().unwrap() < all / 4);
    let keyrings = home.join(".local/share/keyrings");
    std::fs::create_dir_all(&keyrings).unwrap();
    assert_eq!(entry.asked.asked_again(), None);
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &keyrings));
    // So does a git config's new text, under a settled stamp of its own.
    let entry = sb.kept.entry(&v, &host, None).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(entry.asked.asked_again().is_some());
    assert!(entry.asked.asked_again().is_some());
    std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = h\n").unwrap();
    assert_eq!(entry.asked.asked_again(), None);
}

/// The tmpfs steps of a plan, by target.
fn tmpfs_targets(plan: &SandboxPlan) -> Vec<&Path> {
    plan.mounts
        .iter()
        .filter_map(|m| match m {
            MountStep::Tmpfs { target, .. } => Some(target.as_path()),
            _ => None,
        })
        .collect()
}

/// A narrowing that asks for a private `/tmp` the profile does not gets one where a run with
/// it has it: `{tmp}` is `/tmp`, the tmpfs is mounted there and `TMPDIR` names it (not the
/// host directory the profile's switches alone would have given `{tmp}`).
#[test]
fn a_narrowing_that_asks_for_a_private_tmp_gets_a_consistent_plan() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let text = "extends = \"workspace\"\n[isolation]\nprivate_tmp = false\n";
    let sb = Sandbox::with_host(Profile::parse("p.toml", text).unwrap(), capable_host(1000));
    let host = sb.host().clone();
    let context = WorkspaceContext::new(&ws, &home);
    let own = sb.vars(&context, &host, None, None);
    assert!(!sb.private_tmp(&host, None));
    assert_ne!(own.tmp, Path::new("/tmp"));
    let (_, plan) = planned(&sb, &own, &host, None);
    assert!(tmpfs_targets(&plan).is_empty(), "{:?}", plan.mounts);
    // The narrowing a caller makes for a run with a private `/tmp`.
    let at_tmp = Vars {
        tmp: PathBuf::from("/tmp"),
        ..own.clone()
    };
    let mut narrow = sb.profile().resolve(&at_tmp).unwrap();
    narrow.isolation.private_tmp = true;
    assert!(sb.private_tmp(&host, Some(&narrow)));
    let v = sb.vars(&context, &host, Some(&narrow), None);
    assert_eq!(v, at_tmp);
    let (caps, plan) = planned(&sb, &v, &host, Some(&narrow));
    assert!(caps.isolation.private_tmp_in(plan.namespaces.mount));
    assert_eq!(tmpfs_targets(&plan), [Path::new("/tmp")]);
    assert_eq!(plan.env.set.get("TMPDIR").map(String::as_str), Some("/tmp"));
}

/// A kept plan whose last check confirmed nothing anew is checked by its summary (its
/// witnesses' stamps and the questions nothing vouches for), and still sees every change: a
/// secret in a stamped directory, one below directories that did not exist, a git config's
/// new text.
#[test]
fn a_settled_plan_checked_by_its_summary_still_sees_each_change() {
    let t = tempfile::tempdir().unwrap();
    let (ws, home) = (t.path().join("ws"), t.path().join("home"));
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::create_dir_all(home.join(".config")).unwrap();
    std::fs::write(ws.join(".git/config"), "").unwrap();
    let sb = sandbox();
    let host = sb.host().clone();
    let v = vars(&ws, &home);
    let here = super::stamp::Witness::Entries(home.clone());
    let settle = || {
        planned(&sb, &v, &host, None);
        std::thread::sleep(std::time::Duration::from_millis(1200));
        // The first check confirms anew, the second confirms nothing new: settled.
        assert!(is_kept(&sb, &v, &host, None) && is_kept(&sb, &v, &host, None));
        let entry = sb.kept.entry(&v, &host, None).unwrap();
        let summary = entry.settled.lock().unwrap().is_some();
        summary && is_kept(&sb, &v, &host, None)
    };
    if !settle() {
        assert!(super::stamp::Pass::begin().stamp(&here).is_none());
        eprintln!("SKIP: the temporary directory's file system keeps no reliable change times");
        return;
    }
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    assert!(!is_kept(&sb, &v, &host, None));
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &home.join(".config/gh")));
    assert!(settle());
    let keyrings = home.join(".local/share/keyrings");
    std::fs::create_dir_all(&keyrings).unwrap();
    assert!(!is_kept(&sb, &v, &host, None));
    let (_, plan) = planned(&sb, &v, &host, None);
    assert!(hides(&plan, &keyrings));
    assert!(settle());
    std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = h\n").unwrap();
    assert!(!is_kept(&sb, &v, &host, None));
}
