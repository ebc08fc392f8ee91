//! `sbx run`: the permission gate (unless skipped), then the command in the sandbox, with
//! its gaps warned about and its result optionally as JSON.
use crate::{cwd, gate, setup_error};
use sbx::exec::{Output, RunRequest, Sandbox};
use sbx::profile::Profile;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// `gate`: the policy file and mode for the permission pipeline, or `None` to skip it.
pub fn run(
    profile: &str,
    workspace: Option<PathBuf>,
    timeout: Option<f64>,
    json: bool,
    json_out: Option<PathBuf>,
    gate: Option<(Option<PathBuf>, Option<String>)>,
    command: Vec<OsString>,
) -> i32 {
    let ws = workspace.unwrap_or_else(cwd);
    let (sandbox, resolved) = match gate {
        Some((policy, mode)) => {
            let mut loaded = match gate::load(profile, policy, ws.clone()) {
                Ok(l) => l,
                Err(e) => return setup_error(e),
            };
            let passed = match gate::gate(&loaded, &command, cwd(), mode.as_deref()) {
                Ok(p) => p,
                Err(code) => return code,
            };
            // A run that follows at once reuses the gate's resolution of the profile. After a
            // prompt, which can take any time, the files its globs match may have changed.
            let resolved = loaded
                .resolved
                .take()
                .filter(|_| passed == gate::Passed::Allowed);
            (loaded.sandbox, resolved)
        }
        None => match Profile::load(profile) {
            Ok(p) => (std::sync::Arc::new(Sandbox::new(p)), None),
            Err(e) => return setup_error(e),
        },
    };

    let mut req = RunRequest::new(command);
    req.workspace = ws;
    req.cwd = cwd();
    req.env = std::env::vars_os().collect();
    req.timeout = timeout.filter(|t| *t > 0.0).map(Duration::from_secs_f64);
    req.output = Output::Inherit;
    req.forward_signals = true;
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return setup_error(format!("cannot start the runtime: {e}")),
    };
    let result = match rt.block_on(sandbox.run_resolved(req, None, resolved)) {
        Ok(r) => r,
        Err(e) => return setup_error(e),
    };
    let gaps: Vec<String> = result
        .enforcement
        .gaps()
        .iter()
        .map(|l| format!("{} ({})", l.name, l.detail))
        .collect();
    if !gaps.is_empty() {
        eprintln!(
            "sbx: warning: not fully enforced on this host: {}",
            gaps.join("; ")
        );
    }
    for l in &result.limits_reached {
        eprintln!("sbx: limit reached: {}: {}", l.limit, l.detail);
    }
    if json || json_out.is_some() {
        let mut v = serde_json::to_value(&result).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("code".into(), result.code().into());
        }
        let text = v.to_string();
        match json_out {
            Some(path) => {
                if let Err(e) = std::fs::write(&path, text + "\n") {
                    eprintln!("sbx: cannot write {}: {e}", path.display());
                }
            }
            None => println!("{text}"),
        }
    }
    result.code()
}
