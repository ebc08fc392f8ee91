//! The registry behind a session's background jobs and terminals: each run's handle, the
//! sender that kills its process tree, its task, and which agent session owns it. Another
//! owner is told the same as for an id that does not exist.
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A run an agent session may own.
pub(super) trait Owned {
    /// The run's id (`job-3`, `term-1`).
    fn id(&self) -> &str;
    /// Whether `owner` owns it.
    fn owned_by(&self, owner: &str) -> bool;
    /// Give it to `owner`.
    fn set_owner(&self, owner: &str);
}

/// One run.
pub(super) struct Entry<T> {
    pub(super) run: Arc<T>,
    /// Sending or dropping it kills the run's process tree.
    pub(super) stop: Option<oneshot::Sender<()>>,
    pub(super) task: Option<JoinHandle<()>>,
}

/// The runs, oldest first.
pub(super) struct Registry<T> {
    pub(super) entries: Vec<Entry<T>>,
    /// How many were started: the next one's number.
    pub(super) started: u64,
    /// The session is ending: no more runs start.
    pub(super) closed: bool,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            started: 0,
            closed: false,
        }
    }
}

impl<T> Registry<T> {
    /// Add a run, with the sender that kills it and its task.
    pub(super) fn push(&mut self, run: Arc<T>, stop: oneshot::Sender<()>, task: JoinHandle<()>) {
        self.entries.push(Entry {
            run,
            stop: Some(stop),
            task: Some(task),
        });
    }
}

/// A session's runs of one kind.
pub(super) struct Runs<T>(Mutex<Registry<T>>);

impl<T> Default for Runs<T> {
    fn default() -> Self {
        Self(Mutex::new(Registry::default()))
    }
}

impl<T: Owned> Runs<T> {
    pub(super) fn lock(&self) -> Option<MutexGuard<'_, Registry<T>>> {
        self.0.lock().ok()
    }

    /// The run `id`; with `owner`, only when that agent session owns it.
    pub(super) fn find(&self, id: &str, owner: Option<&str>) -> Option<Arc<T>> {
        let run = self
            .lock()?
            .entries
            .iter()
            .find(|e| e.run.id() == id)
            .map(|e| e.run.clone())?;
        owner.is_none_or(|o| run.owned_by(o)).then_some(run)
    }

    /// Give run `id` to `owner`.
    pub(super) fn set_owner(&self, id: &str, owner: &str) {
        if let Some(run) = self.find(id, None) {
            run.set_owner(owner);
        }
    }

    /// The runs `owner` owns, oldest first.
    pub(super) fn owned(&self, owner: &str) -> Vec<Arc<T>> {
        let all: Vec<Arc<T>> = self
            .lock()
            .map(|r| r.entries.iter().map(|e| e.run.clone()).collect())
            .unwrap_or_default();
        all.into_iter().filter(|r| r.owned_by(owner)).collect()
    }

    /// Kill run `id`'s process tree (whoever owns it). False when there is no such run.
    pub(super) fn stop(&self, id: &str) -> bool {
        let Some(mut reg) = self.lock() else {
            return false;
        };
        match reg.entries.iter_mut().find(|e| e.run.id() == id) {
            Some(e) => {
                if let Some(s) = e.stop.take() {
                    let _ended = s.send(());
                }
                true
            }
            None => false,
        }
    }

    /// Start no more runs and kill every one still running (the session is ending).
    pub(super) fn close(&self) {
        if let Some(mut reg) = self.lock() {
            reg.closed = true;
            for e in &mut reg.entries {
                if let Some(s) = e.stop.take() {
                    let _ended = s.send(());
                }
            }
        }
    }

    /// Wait until every run's task has returned (after [`Runs::close`]: until every tree is
    /// gone).
    pub(super) async fn wait_all(&self) {
        let tasks: Vec<JoinHandle<()>> = self
            .lock()
            .map(|mut r| r.entries.iter_mut().filter_map(|e| e.task.take()).collect())
            .unwrap_or_default();
        for t in tasks {
            let _joined = t.await;
        }
    }
}
