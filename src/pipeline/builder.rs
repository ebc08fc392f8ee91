//! Building a [`Pipeline`]: the profile's capability set is given once, here.
#![forbid(unsafe_code)]

use super::approval::{ApprovalChannel, SessionGrants};
use super::engine::Pipeline;
use super::exec::{Executor, NoExecutor, ProfileCaps};
use super::guard::Guard;
use super::listener::{EnforcementOutlook, Listener};
use super::listeners::default_listeners;
use super::observer::Observer;
use super::policy_hooks::{CommandPolicyHook, PolicyHook};
use super::post::PostHandler;
use super::wrappers::ExecWrapper;
use crate::decision::Mode;
use crate::policy::Policy;
use std::sync::Arc;
use std::time::Duration;

/// Builds a [`Pipeline`]. The profile's capability set is given once, here.
pub struct PipelineBuilder {
    p: Pipeline,
}

impl PipelineBuilder {
    /// The permission mode (default: [`Mode::Default`]).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.p.mode = mode;
        self
    }
    /// What this host enforces, for the fast paths that let the sandbox decide.
    pub fn outlook(mut self, outlook: EnforcementOutlook) -> Self {
        self.p.outlook = outlook;
        self
    }
    /// Replace the whole waterfall (the default is [`default_listeners`]).
    pub fn listeners(mut self, listeners: Vec<Arc<dyn Listener>>) -> Self {
        self.p.listeners = listeners;
        self
    }
    /// Insert a listener at `index` of the waterfall.
    pub fn insert_listener(mut self, index: usize, l: Arc<dyn Listener>) -> Self {
        let i = index.min(self.p.listeners.len());
        self.p.listeners.insert(i, l);
        self
    }
    /// Add a guard: it can only deny.
    pub fn guard(mut self, g: Arc<dyn Guard>) -> Self {
        self.p.guards.push(g);
        self
    }
    /// Add a policy hook, asked after the listeners.
    pub fn policy_hook(mut self, h: Arc<dyn PolicyHook>) -> Self {
        self.p.hooks.push(h);
        self
    }
    /// The channel that answers asks; without one an ask is a denial.
    pub fn approval(mut self, a: Arc<dyn ApprovalChannel>) -> Self {
        self.p.approval = Some(a);
        self
    }
    /// The executor that runs allowed calls (default: none, every run fails).
    pub fn executor(mut self, e: Arc<dyn Executor>) -> Self {
        self.p.executor = e;
        self
    }
    /// Add a wrapper around the executor (timeout, retry, metrics).
    pub fn wrapper(mut self, w: Arc<dyn ExecWrapper>) -> Self {
        self.p.wrappers.push(w);
        self
    }
    /// Add a post-execute handler.
    pub fn post(mut self, h: Arc<dyn PostHandler>) -> Self {
        self.p.post.push(h);
        self
    }
    /// Add an observer: it sees every result, denials included.
    pub fn observer(mut self, o: Arc<dyn Observer>) -> Self {
        self.p.observers.push(o);
        self
    }
    /// Share session grants between pipelines (e.g. one per connection of `sbx serve`).
    pub fn grants(mut self, g: Arc<SessionGrants>) -> Self {
        self.p.grants = g;
        self
    }
    /// How long the listeners may take together before the call is denied.
    pub fn listener_budget(mut self, d: Duration) -> Self {
        self.p.listener_budget = d;
        self
    }
    /// How long the guards may take together before the call is denied.
    pub fn guard_budget(mut self, d: Duration) -> Self {
        self.p.guard_budget = d;
        self
    }
    /// How long an approval may take before the call is denied.
    pub fn approval_timeout(mut self, d: Duration) -> Self {
        self.p.approval_timeout = Some(d);
        self
    }
    /// The pipeline, with the built-in listeners ahead of the added ones.
    pub fn build(self) -> Pipeline {
        self.p
    }
}

impl Pipeline {
    /// A pipeline with the default waterfall, the policy's hooks and mode, and no executor.
    pub fn builder(policy: Arc<Policy>, profile: ProfileCaps) -> PipelineBuilder {
        let workspace = policy
            .workspace()
            .clone()
            .with_writable(profile.get().writable_trees());
        let hooks: Vec<Arc<dyn PolicyHook>> = policy
            .hooks()
            .iter()
            .map(|spec| Arc::new(CommandPolicyHook { spec: spec.clone() }) as Arc<dyn PolicyHook>)
            .collect();
        let mode = policy.mode().map(|(m, _)| *m).unwrap_or_default();
        PipelineBuilder {
            p: Pipeline {
                policy,
                mode,
                profile,
                workspace,
                outlook: EnforcementOutlook::default(),
                listeners: default_listeners(),
                guards: Vec::new(),
                hooks,
                approval: None,
                executor: Arc::new(NoExecutor),
                wrappers: Vec::new(),
                post: Vec::new(),
                observers: Vec::new(),
                grants: Arc::new(SessionGrants::default()),
                listener_budget: Duration::from_millis(500),
                guard_budget: Duration::from_millis(500),
                approval_timeout: None,
            },
        }
    }
}
