//! Container daemons' sockets are out of reach under every built-in profile: a listener at each
//! place a client dials by default (Docker, rootless Docker, Podman, containerd, BuildKit,
//! Docker Desktop, Colima, Rancher Desktop, OrbStack, Lima) cannot be connected to from inside,
//! while the same user connects to it outside and from a sandbox whose profile lists no
//! socket. The gate denies the clients' verbs that dial one with the profile's line, and keeps
//! its decision for an endpoint the plan does not hide.
#![expect(clippy::unwrap_used, reason = "test")]
mod common;
use common::*;
use sbx::profile::BUILTIN_NAMES;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A listener anyone may connect to at `path`, answering `HELLO`; removed on drop, with the
/// directories it made.
struct Listener {
    path: PathBuf,
    made: Option<PathBuf>,
}

impl Listener {
    fn at(path: &Path) -> Listener {
        let made = path
            .ancestors()
            .skip(1)
            .take_while(|a| !a.exists())
            .last()
            .map(Path::to_path_buf);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::thread::spawn(move || {
            for c in listener.incoming().flatten() {
                let mut c = c;
                let _ = std::io::Write::write_all(&mut c, b"HELLO");
            }
        });
        Listener {
            path: path.to_path_buf(),
            made,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        if let Some(d) = &self.made {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A script that prints `CONNECTED path` for each socket it reaches.
fn probe(paths: &[PathBuf]) -> String {
    let list = paths
        .iter()
        .map(|p| format!("\"{}\"", p.display()))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "python3 -c 'import socket\nfor p in [{list}]:\n try:\n  s=socket.socket(socket.AF_UNIX); \
         s.connect(p); print(\"CONNECTED\", p, s.recv(8).decode())\n except OSError as e: \
         print(\"REFUSED\", p, e)'"
    )
}

/// The home's sockets, in the scenario's home.
fn home_sockets(home: &Path) -> Vec<PathBuf> {
    [
        ".docker/run/docker.sock",
        ".docker/desktop/docker.sock",
        ".colima/default/docker.sock",
        ".rd/docker.sock",
        ".orbstack/run/docker.sock",
        ".lima/default/sock/docker.sock",
    ]
    .iter()
    .map(|s| home.join(s))
    .collect()
}

/// The host's sockets that are not there already; only root may make them.
fn host_sockets() -> Vec<PathBuf> {
    [
        "/run/docker.sock",
        "/run/docker/plugins/sbx-test.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
        "/run/buildkit/buildkitd.sock",
        "/run/user/4242/docker.sock",
        "/run/user/4242/podman/podman.sock",
    ]
    .iter()
    .map(PathBuf::from)
    .filter(|p| !p.exists())
    .collect()
}

#[test]
fn container_daemon_sockets_are_unreachable_under_every_builtin() {
    if !kernel_ready() {
        return;
    }
    let root = nix::unistd::geteuid().is_root();
    let host: Vec<PathBuf> = if root { host_sockets() } else { Vec::new() };
    let _host: Vec<Listener> = host.iter().map(|p| Listener::at(p)).collect();
    for u in users() {
        let s = Scratch::new(u);
        let mut paths = home_sockets(&s.home);
        let _home: Vec<Listener> = paths.iter().map(|p| Listener::at(p)).collect();
        s.chown_all();
        paths.extend(host.iter().cloned());
        let script = probe(&paths);
        let outside = stdout(&s.outside(&script));
        let open = s.write_profile(
            "open",
            "[filesystem]\nread = [\"/\"]\nexecute = [\"/\"]\nwrite = [\"{workspace}\"]\n",
        );
        let unlisted = stdout(&s.run(open.to_str().unwrap(), &script));
        for p in &paths {
            let line = format!("CONNECTED {} HELLO", p.display());
            assert!(outside.contains(&line), "{}: {outside}", s.label());
            assert!(unlisted.contains(&line), "{} open: {unlisted}", s.label());
        }
        for name in BUILTIN_NAMES {
            let inside = s.run(name, &script);
            let said = stdout(&inside);
            assert_eq!(
                said.lines().count(),
                paths.len(),
                "{name}: {}",
                text(&inside)
            );
            assert!(!said.contains("CONNECTED"), "{} {name}: {said}", s.label());
        }
    }
}

fn check(s: &Scratch, cmd: &str) -> Value {
    let o = s.sbx(&["check", "--json", "--", cmd]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The clients' verbs that dial a hidden socket are denied with the profile's line; an
/// endpoint the plan does not hide keeps the analysis's decision.
#[test]
fn the_gate_denies_the_verbs_that_dial_a_hidden_socket() {
    let s = Scratch::new(None);
    let colima = s.home.join(".colima/default/docker.sock");
    let meta = s.home.join(".docker/contexts/meta/0123");
    std::fs::create_dir_all(&meta).unwrap();
    let context = format!(
        "{{\"Name\":\"colima\",\"Endpoints\":{{\"docker\":{{\"Host\":\"unix://{}\"}}}}}}",
        colima.display()
    );
    std::fs::write(meta.join("meta.json"), context).unwrap();
    for cmd in [
        "docker ps",
        "docker compose ps",
        "docker --context colima ps",
        "DOCKER_CONTEXT=colima docker run --rm alpine true",
        "DOCKER_HOST=unix:///run/user/1000/docker.sock docker ps",
        "env DOCKER_HOST=unix:///run/podman/podman.sock docker ps",
        "docker -H unix:///run/containerd/containerd.sock ps",
        "podman --remote ps",
        "podman --url unix:///run/podman/podman.sock images",
        "CONTAINER_HOST=unix:///run/user/1000/podman/podman.sock podman ps",
        "nerdctl ps",
        "buildctl du",
    ] {
        let r = check(&s, cmd);
        assert_eq!(r["decision"], "deny", "{cmd}: {r}");
        assert_eq!(r["rule"], "plan:deny-read", "{cmd}: {r}");
        assert!(
            r["source"].as_str().unwrap().starts_with("builtin:base:"),
            "{cmd}: {r}"
        );
    }
    // Local podman opens its store, which the profile does not let it write.
    let store = check(&s, "podman ps");
    assert_eq!(store["decision"], "deny", "{store}");
    assert_eq!(store["rule"], "plan:write", "{store}");
    // The sandbox's own loopback, where no daemon listens, is not refused by the plan; a
    // client verb dials nothing.
    for (cmd, want) in [
        ("DOCKER_HOST=tcp://127.0.0.1:2375 docker ps", "ask"),
        ("docker -H tcp://127.0.0.1:2375 ps", "allow"),
        ("docker --context nosuch ps", "allow"),
        ("docker -H ssh://build.example ps", "ask"),
        ("docker context ls", "ask"),
    ] {
        let r = check(&s, cmd);
        assert_eq!(r["decision"], want, "{cmd}: {r}");
    }
}
