//! The run's cgroups: made and limited before the clone, joined by the sandbox init (cgroup
//! v2: cloned straight into it), read for what the tree ran into, and removed after the run.
//!
//! Each is named `sbx-PID-START-N` after the sbx process that made it (its pid and start
//! time), so that a later run can tell a cgroup whose sbx was killed before it could clean up,
//! kill what is left in it and remove it.
use super::{EnforceError, cstr};
use crate::host::{CgroupVersion, Controller};
use crate::plan::CgroupStep;
use serde::Serialize;
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What the tree ran into, read from the run's cgroups after it ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TreeUsage {
    /// Peak memory of the whole tree (`memory.peak`, `memory.max_usage_in_bytes`).
    pub memory_peak_bytes: Option<u64>,
    /// The memory limit, when a cgroup kept it.
    pub memory_limit_bytes: Option<u64>,
    /// Processes the kernel killed at the memory limit.
    pub oom_kills: u64,
    /// Times the memory limit could not be met without the OOM killer (cgroup v2).
    pub oom_events: u64,
    /// The process limit, when a cgroup kept it.
    pub pids_limit: Option<u64>,
    /// Forks refused at the process limit.
    pub pids_refused: u64,
}

/// One cgroup made for the run.
struct Made {
    version: CgroupVersion,
    dir: PathBuf,
    controllers: Vec<Controller>,
}

/// The run's cgroups, removed when dropped.
pub struct RunCgroups {
    made: Vec<Made>,
    /// The cgroup v2 directory, for `CLONE_INTO_CGROUP`.
    pub v2_fd: Option<OwnedFd>,
    /// The cgroup v1 `cgroup.procs` files the init writes itself into.
    pub v1_procs: Vec<CString>,
    memory_limit: Option<u64>,
    pids_limit: Option<u64>,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The start time of process `pid` in clock ticks since boot (field 22 of its stat file).
fn start_time(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may contain spaces; the fields after it do not.
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(19).map(String::from)
}

fn own_tag() -> String {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        let pid = std::process::id().to_string();
        let start = start_time("self").unwrap_or_else(|| "0".into());
        format!("{pid}-{start}")
    })
    .clone()
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> EnforceError + '_ {
    move |source| EnforceError::Cgroup {
        path: path.to_path_buf(),
        source,
    }
}

impl RunCgroups {
    /// Make and limit the cgroups of `steps`; none when there are no steps.
    pub fn create(steps: &[CgroupStep]) -> Result<RunCgroups, EnforceError> {
        let mut run = RunCgroups {
            made: Vec::new(),
            v2_fd: None,
            v1_procs: Vec::new(),
            memory_limit: None,
            pids_limit: None,
        };
        if steps.is_empty() {
            return Ok(run);
        }
        let name = format!("sbx-{}-{}", own_tag(), SEQ.fetch_add(1, Ordering::Relaxed));
        for step in steps {
            remove_stale(&step.parent, step.version);
            let dir = step.parent.join(&name);
            enable(step)?;
            std::fs::create_dir(&dir).map_err(io_err(&dir))?;
            run.made.push(Made {
                version: step.version,
                dir: dir.clone(),
                controllers: step.controllers.clone(),
            });
            run.write_settings(&dir, step)?;
            match step.version {
                CgroupVersion::V2 => {
                    let f = std::fs::File::open(&dir).map_err(io_err(&dir))?;
                    run.v2_fd = Some(f.into());
                }
                CgroupVersion::V1 => run.v1_procs.push(cstr(&dir.join("cgroup.procs"))?),
            }
        }
        Ok(run)
    }

    /// Write `step`'s limit files in `dir`, remembering the limits for [`RunCgroups::usage`].
    fn write_settings(&mut self, dir: &Path, step: &CgroupStep) -> Result<(), EnforceError> {
        for s in &step.settings {
            let file = dir.join(&s.file);
            match std::fs::write(&file, &s.value) {
                Err(e) if s.optional && e.kind() == std::io::ErrorKind::NotFound => {}
                r => r.map_err(io_err(&file))?,
            }
            let value = s.value.parse().ok();
            match s.file.as_str() {
                "memory.max" | "memory.limit_in_bytes" => self.memory_limit = value,
                "pids.max" => self.pids_limit = value,
                _ => {}
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.made.is_empty()
    }

    /// Whether the run's memory is in a cgroup.
    pub fn limits_memory(&self) -> bool {
        self.memory_limit.is_some()
    }

    /// What the tree ran into. Read once the tree is gone, before the cgroups are removed.
    pub fn usage(&self) -> TreeUsage {
        let mut u = TreeUsage {
            memory_limit_bytes: self.memory_limit,
            pids_limit: self.pids_limit,
            ..TreeUsage::default()
        };
        for m in &self.made {
            let read = |f: &str| std::fs::read_to_string(m.dir.join(f)).unwrap_or_default();
            if m.controllers.contains(&Controller::Memory) {
                let (peak, events) = match m.version {
                    CgroupVersion::V2 => ("memory.peak", "memory.events"),
                    CgroupVersion::V1 => ("memory.max_usage_in_bytes", "memory.oom_control"),
                };
                u.memory_peak_bytes = read(peak).trim().parse().ok();
                let events = read(events);
                u.oom_kills = key_value(&events, "oom_kill");
                u.oom_events = key_value(&events, "oom");
            }
            if m.controllers.contains(&Controller::Pids) {
                u.pids_refused = key_value(&read("pids.events"), "max");
            }
        }
        u
    }
}

/// The number after `key` in a flat-keyed cgroup file, or 0.
fn key_value(text: &str, key: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

/// cgroup v2: enable the step's controllers in its parent's `cgroup.subtree_control`.
fn enable(step: &CgroupStep) -> Result<(), EnforceError> {
    if step.enable.is_empty() {
        return Ok(());
    }
    let file = step.parent.join("cgroup.subtree_control");
    let line: Vec<String> = step
        .enable
        .iter()
        .map(|c| format!("+{}", c.name()))
        .collect();
    std::fs::write(&file, line.join(" ")).map_err(io_err(&file))
}

/// Kill what is left in `dir` and remove it; `false` while it cannot be removed yet.
fn kill_and_remove(dir: &Path, version: CgroupVersion) -> bool {
    match std::fs::remove_dir(dir) {
        // Members remain: kill them below.
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
        // Removed, or nothing more this can do.
        _ => return true,
    }
    match version {
        CgroupVersion::V2 => {
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        }
        CgroupVersion::V1 => {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
                // SAFETY: kill has no memory effects; the pid is a member of the run's cgroup.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
    false
}

/// Remove the cgroups under `parent` left by sbx processes that no longer run.
fn remove_stale(parent: &Path, version: CgroupVersion) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("sbx-")) else {
            continue;
        };
        let parts: Vec<&str> = rest.split('-').collect();
        let [pid, start, _seq] = parts[..] else {
            continue;
        };
        if parts.iter().any(|p| p.parse::<u64>().is_err())
            || start_time(pid).as_deref() == Some(start)
        {
            continue;
        }
        remove(&e.path(), version);
    }
}

/// Remove `dir`, killing what is left in it and giving that a moment to exit. Gives up after
/// about 100 ms: a later run retries.
fn remove(dir: &Path, version: CgroupVersion) {
    for _ in 0..50 {
        if kill_and_remove(dir, version) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

impl Drop for RunCgroups {
    fn drop(&mut self) {
        // The tree is normally gone by now. Without a PID namespace a process that left the
        // init's care may remain.
        for m in &self.made {
            remove(&m.dir, m.version);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_keyed_files_are_read_by_key() {
        let v2 = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(key_value(v2, "oom_kill"), 1);
        assert_eq!(key_value(v2, "oom"), 2);
        assert_eq!(key_value(v2, "max"), 12);
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!(key_value(v1, "oom_kill"), 3);
        assert_eq!(key_value(v1, "oom"), 0);
    }

    #[test]
    fn own_start_time_is_read_past_the_command_name() {
        let tag = own_tag();
        let (pid, start) = tag.split_once('-').unwrap_or_default();
        assert_eq!(pid, std::process::id().to_string());
        assert!(start.parse::<u64>().is_ok_and(|s| s > 0), "{tag}");
        assert_eq!(start_time(pid).as_deref(), Some(start));
    }
}
