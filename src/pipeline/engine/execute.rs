//! The execute stage: build the request from the access, narrow the
//! profile's capabilities by the ruling, run the wrappers and the executor,
//! and fill in the result.
#![forbid(unsafe_code)]

use super::Pipeline;
use crate::pipeline::access::Access;
use crate::pipeline::call::ToolCall;
use crate::pipeline::decision::Ruling;
use crate::pipeline::exec::{EnforcedCaps, ExecError, ExecOutcome, ExecRequest};
use crate::pipeline::result::{CallResult, ExecSummary};
use crate::pipeline::wrappers::ExecNext;
use std::collections::BTreeMap;
use std::time::Duration;

impl Pipeline {
    pub(super) async fn execute(
        &self,
        call: &ToolCall,
        access: &Access,
        ruling: &Ruling,
        result: &mut CallResult,
    ) {
        let mut caps = EnforcedCaps::from_profile(&self.profile);
        if let Some(n) = &ruling.narrow {
            caps = caps.narrow(n);
        }
        let req = request(call, access);
        let fut = ExecNext::new(&self.wrappers, self.executor.as_ref(), &req, &caps).proceed();
        let out = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(fut))
            .await
            .unwrap_or_else(|_| {
                Err(ExecError::Failed {
                    message: "executor panicked".into(),
                })
            });
        match out {
            Ok(o) => fill(result, o),
            Err(e) => {
                result.is_error = true;
                result.content = format!("error: {e}");
                result.value = serde_json::json!({ "error": result.content });
            }
        }
    }
}

/// The executor's request for a call: a Bash call's command under `bash -c`, nothing to run
/// for the other tools.
fn request(call: &ToolCall, access: &Access) -> ExecRequest {
    let (argv, cwd, timeout, background) = match access {
        Access::Bash(b) => (
            vec!["bash".to_string(), "-c".to_string(), b.command.clone()],
            b.workdir.clone(),
            b.timeout_ms.map(Duration::from_millis),
            b.background,
        ),
        Access::Read { .. }
        | Access::Write { .. }
        | Access::WebFetch { .. }
        | Access::WebSearch { .. }
        | Access::Mcp { .. }
        | Access::Harness
        | Access::Unknown => (Vec::new(), call.cwd().to_path_buf(), None, false),
    };
    ExecRequest {
        call_id: call.id().to_string(),
        tool: call.tool().to_string(),
        input: call.input().clone(),
        argv,
        cwd,
        env: BTreeMap::new(),
        timeout,
        background,
    }
}

/// The result of a call that ran: its output as content and value, and its summary.
fn fill(result: &mut CallResult, o: ExecOutcome) {
    let failed = o.job.is_none() && o.exit_status != Some(0);
    result.is_error = failed;
    result.content = if o.stderr.is_empty() {
        o.stdout.clone()
    } else {
        format!("{}{}", o.stdout, o.stderr)
    };
    result.value = serde_json::json!({
        "exit_status": o.exit_status,
        "signal": o.signal,
        "stdout": o.stdout,
        "stderr": o.stderr,
        "truncated": o.truncated,
    });
    if let (Some(job), Some(v)) = (&o.job, result.value.as_object_mut()) {
        v.insert("job_id".into(), job.clone().into());
    }
    result.exec = Some(ExecSummary {
        exit_status: o.exit_status,
        signal: o.signal,
        duration_ms: u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX),
        truncated: o.truncated,
        timed_out: o.timed_out,
        enforcement: o.enforcement,
        job: o.job,
        network: o.network,
    });
}
