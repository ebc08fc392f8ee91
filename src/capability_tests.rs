//! The lattice of capability sets: intersection only takes away, and the subset test agrees
//! with it field by field.
use super::*;

fn entry(path: &str) -> PathEntry {
    PathEntry {
        path: PathBuf::from(path),
        required: true,
        origin: Origin::builtin(path),
    }
}

fn syscall(name: &str) -> DeniedSyscall {
    DeniedSyscall {
        name: name.into(),
        origin: Origin::builtin(name),
    }
}

fn required(p: Protection, source: &str) -> Requirement {
    Requirement {
        protection: p,
        origin: Origin::builtin(source),
    }
}

fn paths(v: &[PathEntry]) -> Vec<&str> {
    v.iter().filter_map(|e| e.path.to_str()).collect()
}

fn set(read: &[&str], write: &[&str], deny_read: &[&str]) -> CapabilitySet {
    CapabilitySet {
        fs: FsCaps {
            read: read.iter().map(|p| entry(p)).collect(),
            write: write.iter().map(|p| entry(p)).collect(),
            deny_read: deny_read.iter().map(|p| entry(p)).collect(),
            ..FsCaps::default()
        },
        network: NetworkMode::Loopback,
        net_rules: Default::default(),
        limits: Limits {
            timeout_ms: Some(10_000),
            memory_bytes: None,
            ..Limits::default()
        },
        isolation: Isolation::default(),
        env: EnvFilter::default(),
        extra_denied_syscalls: vec![syscall("ptrace")],
        requires: vec![required(Protection::Landlock, "base")],
        origins: Default::default(),
    }
}

#[test]
fn intersecting_keeps_the_paths_both_grant_and_every_denial() {
    let a = set(&["/usr", "/home/u"], &["/home/u/ws"], &["/home/u/.ssh"]);
    let b = set(&["/usr/lib", "/home"], &["/tmp"], &["/etc/shadow"]);
    let c = a.intersect(&b);
    // `/usr` is granted only where `b` grants it; `/home/u` lies inside `b`'s `/home`.
    assert_eq!(paths(&c.fs.read), ["/home/u", "/usr/lib"]);
    // Writes to the workspace and to /tmp are each granted by one side only.
    assert!(c.fs.write.is_empty());
    assert_eq!(paths(&c.fs.deny_read), ["/home/u/.ssh", "/etc/shadow"]);
    assert!(c.is_subset_of(&a) && c.is_subset_of(&b));
    assert!(!a.is_subset_of(&b) && !b.is_subset_of(&a));
}

#[test]
fn intersecting_takes_the_smaller_of_every_limit_and_the_stricter_of_every_switch() {
    let mut a = set(&["/"], &[], &[]);
    let mut b = a.clone();
    a.network = NetworkMode::Host;
    a.limits.timeout_ms = None;
    a.limits.memory_bytes = Some(1 << 30);
    a.isolation.pid = false;
    a.fs.protected_change = ProtectedChange::Fail;
    a.fs.case_folding = crate::capability::CaseFolding::Accept;
    b.network = NetworkMode::None;
    b.limits.timeout_ms = Some(5_000);
    b.extra_denied_syscalls = vec![syscall("ptrace"), syscall("bpf")];
    let c = a.intersect(&b);
    assert_eq!(c.network, NetworkMode::None);
    assert_eq!(c.limits.timeout_ms, Some(5_000));
    assert_eq!(c.limits.memory_bytes, Some(1 << 30));
    assert!(c.isolation.pid);
    assert_eq!(c.fs.protected_change, ProtectedChange::Fail);
    assert_eq!(c.fs.case_folding, crate::capability::CaseFolding::Refuse);
    assert_eq!(c.extra_denied_syscalls, [syscall("ptrace"), syscall("bpf")]);
    assert!(c.is_subset_of(&a) && c.is_subset_of(&b));
}

#[test]
fn each_limit_keeps_the_origin_of_the_side_it_came_from() {
    let mut a = set(&["/"], &[], &[]);
    let mut b = a.clone();
    a.limits.timeout_ms = Some(5_000);
    a.limits.origins.timeout_ms = Some(Origin::builtin("a"));
    a.limits.memory_bytes = Some(1 << 30);
    a.limits.origins.memory_bytes = Some(Origin::builtin("a"));
    b.limits.origins.timeout_ms = Some(Origin::builtin("b"));
    b.limits.memory_bytes = Some(1 << 20);
    b.limits.origins.memory_bytes = Some(Origin::builtin("b"));
    b.limits.open_files = Some(64);
    b.limits.origins.open_files = Some(Origin::builtin("b"));
    let c = a.intersect(&b);
    let o = &c.limits.origins;
    assert_eq!(
        (c.limits.timeout_ms, &o.timeout_ms),
        (Some(5_000), &a.limits.origins.timeout_ms)
    );
    assert_eq!(
        (c.limits.memory_bytes, &o.memory_bytes),
        (Some(1 << 20), &b.limits.origins.memory_bytes)
    );
    // Unlimited on one side: the other's limit and origin.
    assert_eq!(
        (c.limits.open_files, &o.open_files),
        (Some(64), &b.limits.origins.open_files)
    );
}

#[test]
fn each_setting_keeps_the_origin_of_the_side_its_value_came_from() {
    let (mut a, mut b) = (set(&["/"], &[], &[]), set(&["/"], &[], &[]));
    a.origins.network = Some(Origin::builtin("a-net"));
    a.origins.protected_change = Some(Origin::builtin("a-pc"));
    a.origins
        .env_pass
        .insert("A_*".into(), Origin::builtin("a-pass"));
    b.network = NetworkMode::None;
    b.fs.protected_change = ProtectedChange::Fail;
    b.origins.network = Some(Origin::builtin("b-net"));
    b.origins.protected_change = Some(Origin::builtin("b-pc"));
    b.origins
        .env_pass
        .insert("B_*".into(), Origin::builtin("b-pass"));
    let c = a.intersect(&b);
    assert_eq!(c.origins.network, Some(Origin::builtin("b-net")));
    assert_eq!(c.origins.protected_change, Some(Origin::builtin("b-pc")));
    let names: Vec<&str> = c.origins.env_pass.keys().map(String::as_str).collect();
    assert_eq!(names, ["A_*", "B_*"]);
    // An isolation switch only `b` turns on comes from `b`'s line.
    a.isolation.pid = false;
    a.origins
        .isolation
        .insert("pid".into(), Origin::builtin("a-pid"));
    b.origins
        .isolation
        .insert("pid".into(), Origin::builtin("b-pid"));
    let c = a.intersect(&b);
    assert_eq!(
        c.origins.isolation.get("pid"),
        Some(&Origin::builtin("b-pid"))
    );
    // The other way round the stricter values are still `b`'s, and so are their origins.
    let d = b.intersect(&a);
    assert_eq!(d.origins.network, Some(Origin::builtin("b-net")));
    assert_eq!(d.origins.protected_change, Some(Origin::builtin("b-pc")));
}

#[test]
fn intersecting_requires_what_either_requires_once() {
    let mut a = set(&["/"], &[], &[]);
    let mut b = a.clone();
    a.requires = vec![
        required(Protection::Seccomp, "a"),
        required(Protection::Landlock, "a"),
    ];
    b.requires = vec![
        required(Protection::Landlock, "b"),
        required(Protection::TreeLimits, "b"),
    ];
    let c = a.intersect(&b);
    assert_eq!(
        c.requires,
        [
            required(Protection::Seccomp, "a"),
            required(Protection::Landlock, "a"),
            required(Protection::TreeLimits, "b"),
        ]
    );
    assert!(c.is_subset_of(&a) && c.is_subset_of(&b));
    assert!(!a.is_subset_of(&c), "a does not require tree limits");
}

/// One way of granting more.
type Widen = fn(&mut CapabilitySet);

#[test]
fn the_subset_test_refuses_each_way_of_widening() {
    let base = set(&["/usr"], &["/ws"], &["/ws/.env"]);
    assert!(base.is_subset_of(&base));
    let widen: [(&str, Widen); 9] = [
        ("a read outside", |s| s.fs.read.push(entry("/etc"))),
        ("a write outside", |s| s.fs.write.push(entry("/home"))),
        ("a denial dropped", |s| s.fs.deny_read.clear()),
        ("more network", |s| s.network = NetworkMode::Host),
        ("a longer timeout", |s| s.limits.timeout_ms = Some(20_000)),
        ("no timeout", |s| s.limits.timeout_ms = None),
        ("no PID namespace", |s| s.isolation.pid = false),
        ("a syscall allowed", |s| s.extra_denied_syscalls.clear()),
        ("a requirement dropped", |s| s.requires.clear()),
    ];
    for (what, f) in widen {
        let mut wider = base.clone();
        f(&mut wider);
        assert!(!wider.is_subset_of(&base), "{what} is not a subset");
        assert!(
            base.is_subset_of(&wider),
            "{what}: the original is within it"
        );
        assert_eq!(wider.intersect(&base), base.intersect(&base), "{what}");
    }
}

#[test]
fn an_origin_prints_its_line_only_when_it_has_one() {
    let o = Origin {
        source: "builtin:workspace".into(),
        line: 7,
        key: "filesystem.write".into(),
    };
    assert_eq!(o.to_string(), "builtin:workspace:7 (filesystem.write)");
    assert_eq!(
        Origin::builtin("proc").to_string(),
        "sbx (proc)",
        "a synthesised entry names sbx"
    );
    assert!(path_within(Path::new("/a/b"), Path::new("/a")));
    assert!(!path_within(Path::new("/ab"), Path::new("/a")));
}
