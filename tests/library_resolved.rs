//! A resolution handed to a run (`Sandbox::run_resolved`) is used, and only by the sandbox
//! that took it, for the workspace it was taken for: another sandbox's, even a wider one,
//! cannot widen what a run gets.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use sbx::exec::{Output, RunRequest, Sandbox};
use sbx::profile::Profile;
use std::path::Path;

fn touch(sandbox: &Sandbox, ws: &Path, file: &str, resolved: Option<sbx::exec::Resolved>) -> i32 {
    let argv = ["/bin/sh".to_string(), "-c".into(), format!("touch {file}")];
    let mut req = RunRequest::in_workspace(argv, ws);
    req.cwd = ws.to_path_buf();
    req.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    req.output = Output::Collect;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(sandbox.run_resolved(req, None, resolved))
        .unwrap()
        .code()
}

#[test]
fn a_snapshot_counts_only_for_its_own_sandbox_and_workspace() {
    if !common::kernel_ready() {
        return;
    }
    // Not under /tmp: the sandbox's private /tmp would hide the workspace.
    let root = tempfile::Builder::new()
        .prefix("sbx-t")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ws = root.path().canonicalize().unwrap();
    let other_ws = ws.join("other");
    std::fs::create_dir(&other_ws).unwrap();
    let read_only = Sandbox::new(Profile::load("read-only").unwrap());
    let workspace = Sandbox::new(Profile::load("workspace").unwrap());

    // The workspace profile's own snapshot: the write is allowed.
    let own = workspace.resolve(&ws).unwrap();
    assert!(own.caps().fs.write.iter().any(|e| e.path == ws));
    assert_eq!(touch(&workspace, &ws, "own", Some(own)), 0);
    assert!(ws.join("own").exists());

    // The same snapshot handed to the read-only sandbox is ignored: the write fails.
    let foreign = workspace.resolve(&ws).unwrap();
    // touch reports the refused write with 1 (a setup failure would be 125).
    assert_eq!(touch(&read_only, &ws, "foreign", Some(foreign)), 1);
    assert!(!ws.join("foreign").exists());

    // A snapshot is used: it is a view of the file system when it was taken. A `.env` file
    // made after it is outside its list of read-only files, and the write goes through; the
    // same run resolving afresh keeps the file read-only (touch fails with 1).
    let snapshot = workspace.resolve(&ws).unwrap();
    std::fs::write(ws.join(".env.later"), "x").unwrap();
    assert_eq!(touch(&workspace, &ws, ".env.later", None), 1);
    assert_eq!(touch(&workspace, &ws, ".env.later", Some(snapshot)), 0);

    // A snapshot for another workspace is not used either: the run resolves its own
    // workspace, where the write is allowed (with the snapshot's, it would not be).
    let elsewhere = workspace.resolve(&other_ws).unwrap();
    assert_eq!(touch(&workspace, &ws, "afresh", Some(elsewhere)), 0);
    assert!(ws.join("afresh").exists());

    // The same holds for a whole prepared launch (`prepare_run`, as background jobs use).
    let mut req = RunRequest::in_workspace(["/bin/sh", "-c", "touch prepared"], &ws);
    req.cwd = ws.clone();
    req.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let foreign = workspace.prepare_run(&req, None).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let r = rt.block_on(read_only.run_prepared(foreign, req)).unwrap();
    assert_eq!(r.code(), 1);
    assert!(!ws.join("prepared").exists());
    let mut req = RunRequest::in_workspace(["/bin/sh", "-c", "touch prepared"], &ws);
    req.cwd = ws.clone();
    req.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    let own = workspace.prepare_run(&req, None).unwrap();
    let r = rt.block_on(workspace.run_prepared(own, req)).unwrap();
    assert_eq!(r.code(), 0);
    assert!(ws.join("prepared").exists());
}
