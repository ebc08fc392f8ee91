//! The plan of a `proxy` profile, with and without network namespaces.
#![allow(clippy::unwrap_used)]
use super::*;
use crate::capability::{CapabilitySet, EnvFilter, FsCaps, Isolation, Limits, Origin};
use crate::capability::{NetRules, parse_host_rule};
use std::path::{Path, PathBuf};

struct NoFs;

impl DirLister for NoFs {
    fn list(&self, _: &Path) -> Vec<PathBuf> {
        Vec::new()
    }
    fn is_dir(&self, _: &Path) -> bool {
        true
    }
    fn exists(&self, _: &Path) -> bool {
        true
    }
    fn read_link(&self, _: &Path) -> Option<PathBuf> {
        None
    }
    fn name_case(&self, _: &Path) -> crate::host::NameCase {
        crate::host::NameCase::Exact
    }
    fn name_case_in(&self, _: &Path) -> crate::host::NameCase {
        crate::host::NameCase::Exact
    }
}

fn caps() -> CapabilitySet {
    CapabilitySet {
        fs: FsCaps::default(),
        network: NetworkMode::Proxy,
        net_rules: NetRules {
            allow: vec![parse_host_rule("example.org", Origin::builtin("t")).unwrap()],
            ..NetRules::default()
        },
        limits: Limits::default(),
        isolation: Isolation::default(),
        env: EnvFilter::default(),
        extra_denied_syscalls: Vec::new(),
        requires: Vec::new(),
        origins: Default::default(),
    }
}

fn plan_on(namespaces: bool, abi: i32) -> SandboxPlan {
    let mut host = Host::detect();
    host.euid = 0;
    host.landlock = Availability::Available;
    host.landlock_abi = Some(abi);
    host.seccomp = Availability::Available;
    host.namespaces = if namespaces {
        Availability::Available
    } else {
        Availability::Missing {
            reason: "test".into(),
            fix: "none".into(),
        }
    };
    let caps = caps();
    let input = PlanInput {
        caps: &caps,
        host: &host,
        tmp: Path::new("/tmp"),
        below: &[],
    };
    plan(&input, &NoFs).unwrap()
}

#[test]
fn with_a_namespace_the_proxy_is_on_the_sandboxs_loopback() {
    let p = plan_on(true, 6);
    assert!(p.namespaces.net);
    let px = p.proxy.unwrap();
    assert_eq!(px.bridge, ProxyBridge::Namespace { port: PROXY_PORT });
    assert_eq!(px.rules.allow.len(), 1);
    assert_eq!(
        p.env.set.get("HTTPS_PROXY").map(String::as_str),
        Some("http://127.0.0.1:3128")
    );
    assert_eq!(
        p.env.set.get("all_proxy").map(String::as_str),
        Some("socks5h://127.0.0.1:3128")
    );
    let ll = p.landlock.unwrap();
    assert!(!ll.deny_tcp, "loopback inside the namespace stays usable");
    assert!(!p.seccomp.unwrap().inet_stream_only);
    let net = p.report.iter().find(|l| l.name == "network").unwrap();
    assert_eq!(net.status, LayerStatus::Enforced);
}

#[test]
fn without_a_namespace_landlock_holds_tcp_and_the_port_comes_at_launch() {
    let p = plan_on(false, 6);
    assert!(!p.namespaces.net);
    assert_eq!(p.proxy.unwrap().bridge, ProxyBridge::HostLoopback);
    assert!(!p.env.set.contains_key("HTTP_PROXY"), "set at launch");
    let ll = p.landlock.unwrap();
    assert!(ll.deny_tcp);
    assert!(ll.tcp_connect.is_empty());
    let sc = p.seccomp.unwrap();
    assert_eq!(sc.socket_families, ["AF_UNIX", "AF_INET", "AF_INET6"]);
    assert!(sc.inet_stream_only);
    let net = p.report.iter().find(|l| l.name == "network").unwrap();
    assert_eq!(net.status, LayerStatus::Partial);
    assert!(net.detail.contains("Landlock"), "{}", net.detail);
}

#[test]
fn other_modes_have_no_proxy() {
    for mode in [NetworkMode::None, NetworkMode::Loopback, NetworkMode::Host] {
        let mut c = caps();
        c.network = mode;
        let host = Host::detect();
        let input = PlanInput {
            caps: &c,
            host: &host,
            tmp: Path::new("/tmp"),
            below: &[],
        };
        let p = plan(&input, &NoFs).unwrap();
        assert_eq!(p.proxy, None, "{mode:?}");
        assert!(!p.env.set.contains_key("HTTP_PROXY"), "{mode:?}");
    }
}

#[test]
fn without_a_namespace_or_landlock_tcp_rules_the_report_says_not_enforced() {
    let p = plan_on(false, 3);
    assert!(!p.landlock.unwrap().deny_tcp);
    let net = p.report.iter().find(|l| l.name == "network").unwrap();
    assert_eq!(net.status, LayerStatus::NotEnforced, "{}", net.detail);
    assert!(net.detail.contains("reaches the network"), "{}", net.detail);
}
