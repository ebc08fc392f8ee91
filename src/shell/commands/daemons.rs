//! Container clients and the daemon each one talks to: `docker`, `podman`, `nerdctl` and
//! `buildctl` dial a socket (or an address) that their options, their environment or a docker
//! context name, or their own default one. The shipped profiles hide the sockets of the
//! daemons that act as root (`/run/docker.sock`, `/run/containerd`, `/run/podman`,
//! `/run/buildkit`, `/run/user` for the rootless ones, and the home's Docker Desktop, Colima,
//! Rancher Desktop and OrbStack sockets), so a command that dials one is recorded as a read of
//! it and the plan refuses it rather than asking. An address on the network (`tcp://`,
//! `ssh://`) is network; a loopback one reaches, under `workspace`, the sandbox's own loopback,
//! where no daemon listens. Local `podman` talks to no daemon: it opens its store
//! (`/var/lib/containers/storage`, or `~/.local/share/containers/storage`), recorded as a write.
//!
//! Variables set on the command line (`DOCKER_HOST=... docker ps`, `env CONTAINER_HOST=...`)
//! count; sbx's own `DOCKER_HOST` and `CONTAINER_HOST` do not, since the environment filter
//! keeps them from the command. `DOCKER_CONTEXT` and `CONTAINER_CONNECTION` pass it.

use crate::shell::Class;
use crate::shell::classify::Judge;
use crate::shell::exec_args::Ctx;
use crate::shell::words::Word;
use std::path::PathBuf;

/// One client: its global options that take a value, those that name the daemon, the
/// variables that name it (in the order the client prefers them), its default sockets, and
/// the verbs that need no daemon.
struct Client {
    valued: &'static [&'static str],
    hosts: &'static [&'static str],
    env: &'static [&'static str],
    sockets: &'static [&'static str],
    client_only: &'static [&'static str],
}

const DOCKER: Client = Client {
    valued: &[
        "-H",
        "--host",
        "-c",
        "--context",
        "--config",
        "-l",
        "--log-level",
        "--tlscacert",
        "--tlscert",
        "--tlskey",
    ],
    hosts: &["-H", "--host"],
    env: &["DOCKER_HOST"],
    // Through Debian's and most distributions' `/var/run` link to `/run`.
    sockets: &["/var/run/docker.sock"],
    client_only: &["", "help", "completion", "context", "login", "logout"],
};

const PODMAN: Client = Client {
    valued: &[
        "--url",
        "-c",
        "--connection",
        "--identity",
        "--root",
        "--runroot",
        "--storage-driver",
        "--storage-opt",
        "--cgroup-manager",
        "--log-level",
        "--conmon",
        "--events-backend",
        "--hooks-dir",
        "--network-cmd-path",
        "--network-config-dir",
        "--runtime",
        "--runtime-flag",
        "--ssh",
        "--tmpdir",
        "--volumepath",
        "--imagestore",
        "--module",
        "--out",
    ],
    hosts: &["--url", "--host", "-H"],
    env: &["CONTAINER_HOST"],
    sockets: &["/run/podman/podman.sock"],
    client_only: &["", "help", "completion"],
};

const NERDCTL: Client = Client {
    valued: &[
        "-a",
        "--address",
        "-H",
        "--host",
        "-n",
        "--namespace",
        "--snapshotter",
        "--storage-driver",
        "--cni-path",
        "--cni-netconfpath",
        "--data-root",
        "--cgroup-manager",
        "--hosts-dir",
        "--host-gateway-ip",
        "--bridge-ip",
    ],
    hosts: &["-a", "--address", "-H", "--host"],
    env: &["CONTAINERD_ADDRESS"],
    sockets: &["/run/containerd/containerd.sock"],
    client_only: &["", "help", "completion"],
};

const BUILDCTL: Client = Client {
    valued: &[
        "--addr",
        "--tlsservername",
        "--tlscacert",
        "--tlscert",
        "--tlskey",
        "--tlsdir",
        "--wait",
        "--timeout",
        "--log-format",
    ],
    hosts: &["--addr"],
    env: &["BUILDKIT_HOST"],
    sockets: &["/run/buildkit/buildkitd.sock"],
    client_only: &["", "help"],
};

/// The client's global options, each with its value, and its verb (the first operand).
struct Globals<'a> {
    opts: Vec<(&'a str, Option<String>)>,
    verb: &'a str,
}

impl<'a> Globals<'a> {
    fn of(args: &'a [Word], client: &Client) -> Globals<'a> {
        let mut g = Globals {
            opts: Vec::new(),
            verb: "",
        };
        let mut words = args.iter();
        while let Some(w) = words.next() {
            let v = w.value.as_str();
            if !v.starts_with('-') || v == "-" {
                g.verb = v;
                break;
            }
            if let Some((name, value)) = v.split_once('=').filter(|_| v.starts_with("--")) {
                g.opts.push((name, Some(value.to_string())));
            } else if client.valued.contains(&v) {
                g.opts.push((v, words.next().map(|n| n.value.clone())));
            } else if v.len() > 2 && !v.starts_with("--") && client.valued.contains(&&v[..2]) {
                g.opts.push((&v[..2], Some(v[2..].to_string())));
            } else {
                g.opts.push((v, None));
            }
        }
        g
    }

    /// The value of the first of `names` given.
    fn value(&self, names: &[&str]) -> Option<&str> {
        self.opts
            .iter()
            .find(|(o, _)| names.contains(o))
            .and_then(|(_, v)| v.as_deref())
    }

    fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|(o, _)| names.contains(o))
    }
}

/// Judge where `name ARGS` talks to its daemon; returns the client's verb.
pub(super) fn judge<'a>(
    j: &mut Judge,
    c: &Ctx<'_, '_, '_>,
    name: &str,
    args: &'a [Word],
) -> &'a str {
    let client = match name {
        "docker" => &DOCKER,
        "podman" => &PODMAN,
        "nerdctl" => &NERDCTL,
        "buildctl" => &BUILDCTL,
        _ => return super::first_op(args),
    };
    let g = Globals::of(args, client);
    // `docker --version` names no verb; `podman --version` opens no store.
    if client.client_only.contains(&g.verb) || g.has(&["-v", "--version", "-h", "--help"]) {
        return g.verb;
    }
    let named = g
        .value(client.hosts)
        .map(|v| Some(v.to_string()))
        .or_else(|| client.env.iter().find_map(|k| assigned(c, name, k)));
    match (named, name) {
        (Some(Some(url)), _) => endpoint(j, c, name, &url),
        // Set to what is only known when it runs: the rest of the analysis asks.
        (Some(None), _) => {}
        (None, "docker") => docker_context(j, c, &g, client),
        (None, "podman") => podman(j, c, &g),
        (None, _) => sockets(j, c, client.sockets),
    }
    g.verb
}

/// The value a variable is given on the command line, before the client's own word
/// (`K=v docker ...`, `env K=v docker ...`, `sudo K=v docker ...`). `None` when it is not set
/// there, `Some(None)` when set to something not known before running.
fn assigned(c: &Ctx<'_, '_, '_>, name: &str, key: &str) -> Option<Option<String>> {
    let before = c
        .cmd
        .argv
        .iter()
        .take_while(|w| w.value.rsplit('/').next() != Some(name));
    let prefix = format!("{key}=");
    c.cmd
        .assigns
        .iter()
        .chain(before)
        .filter_map(|w| w.value.strip_prefix(&prefix).map(|v| (w.exact, v)))
        .last()
        .map(|(exact, v)| exact.then(|| v.to_string()))
}

/// The daemon at `url`: a unix socket is read, a network address is network.
fn endpoint(j: &mut Judge, c: &Ctx<'_, '_, '_>, name: &str, url: &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("unix", url));
    match scheme {
        "unix" if !rest.is_empty() => {
            let path = if rest.starts_with('/') {
                rest.to_string()
            } else {
                format!("/{rest}")
            };
            sockets(j, c, &[path.as_str()]);
        }
        "tcp" | "http" | "https" | "ssh" if !loopback(rest) || scheme == "ssh" => {
            j.t.network = true;
            j.raise(
                Class::Network,
                format!("[shell.network.container] `{name}` talks to a daemon at `{url}`"),
            );
        }
        _ => {}
    }
}

/// An address on the loopback (`127.0.0.1:2375`, `localhost`, `[::1]:2376`).
fn loopback(host_port: &str) -> bool {
    let host = host_port.split('/').next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

fn sockets(j: &mut Judge, c: &Ctx<'_, '_, '_>, paths: &[&str]) {
    for p in paths {
        j.read(&Word::literal(p), c.cmd.cwd, c.w.ctx);
    }
}

/// `docker` with no host named: the context named by `--context` or `DOCKER_CONTEXT`, else
/// the default socket (the current context in `config.json` is hidden from the command).
fn docker_context(j: &mut Judge, c: &Ctx<'_, '_, '_>, g: &Globals<'_>, client: &Client) {
    let name = g
        .value(&["-c", "--context"])
        .map(|v| Some(v.to_string()))
        .or_else(|| assigned(c, "docker", "DOCKER_CONTEXT"))
        .or_else(|| std::env::var("DOCKER_CONTEXT").ok().map(Some));
    match name {
        None => sockets(j, c, client.sockets),
        Some(Some(n)) if n == "default" => sockets(j, c, client.sockets),
        // Named by what is only known when it runs: the rest of the analysis asks.
        Some(None) => {}
        Some(Some(n)) => {
            let config = assigned(c, "docker", "DOCKER_CONFIG")
                .flatten()
                .map(PathBuf::from)
                .unwrap_or_else(|| c.w.ctx.workspace.home.join(".docker"));
            if let Some(host) = context_host(&config, &n) {
                endpoint(j, c, "docker", &host);
            }
        }
    }
}

/// The docker endpoint of the context `name` (`contexts/meta/*/meta.json` under the
/// configuration directory, each with its `Name`); `None` when there is none.
fn context_host(config: &std::path::Path, name: &str) -> Option<String> {
    let metas = std::fs::read_dir(config.join("contexts/meta")).ok()?;
    metas.flatten().find_map(|e| {
        let text = crate::shell::project::read(&e.path().join("meta.json"))?.ok()?;
        let meta: serde_json::Value = serde_json::from_str(&text).ok()?;
        (meta["Name"] == name)
            .then(|| {
                meta["Endpoints"]["docker"]["Host"]
                    .as_str()
                    .map(str::to_string)
            })
            .flatten()
    })
}

/// `podman` with no URL: remote (`--remote`, `--connection`, `CONTAINER_CONNECTION`) dials
/// its default socket, root's or the user's; local opens its store.
fn podman(j: &mut Judge, c: &Ctx<'_, '_, '_>, g: &Globals<'_>) {
    let home = &c.w.ctx.workspace.home;
    let root = euid() == Some(0);
    let remote = g.has(&["-r", "--remote", "-c", "--connection"])
        || assigned(c, "podman", "CONTAINER_CONNECTION").is_some()
        || std::env::var_os("CONTAINER_CONNECTION").is_some();
    if remote {
        let user = euid().map(|u| format!("/run/user/{u}/podman/podman.sock"));
        let socket = if root {
            PODMAN.sockets[0].to_string()
        } else {
            user.unwrap_or_else(|| "/run/user".to_string())
        };
        return sockets(j, c, &[socket.as_str()]);
    }
    let store = match g.value(&["--root"]) {
        Some(r) => Word::literal(r),
        None if root => Word::literal("/var/lib/containers/storage"),
        None => Word::literal(
            &home
                .join(".local/share/containers/storage")
                .to_string_lossy(),
        ),
    };
    j.write(&store, c.cmd.cwd, c.w.ctx, "podman's container store");
}

/// The effective user of this process, which the command runs as.
fn euid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

#[cfg(test)]
mod tests {
    #![expect(clippy::unwrap_used, reason = "test")]
    use super::loopback;
    use crate::shell::{ShellContext, analyze};
    use crate::workspace::WorkspaceContext;
    use std::path::{Path, PathBuf};

    /// The reads and writes of `cmd`, with `home` as the home.
    fn touched(cmd: &str, home: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let context = WorkspaceContext::new("/nonexistent-ws", home);
        let a = analyze(
            cmd,
            &ShellContext {
                cwd: "/nonexistent-ws".into(),
                workspace: &context,
            },
        );
        let s = &a.segments[0];
        (s.reads.clone(), s.writes.clone())
    }

    fn reads(cmd: &str) -> Vec<PathBuf> {
        touched(cmd, Path::new("/nonexistent-home")).0
    }

    #[test]
    fn each_client_reads_the_socket_its_options_or_variables_name_or_its_default() {
        // Read as the kernel resolves it, through the `/var/run` link where there is one.
        let var_run = std::fs::canonicalize("/var/run").unwrap_or_else(|_| "/var/run".into());
        let docker = var_run.join("docker.sock");
        let podman = PathBuf::from("/run/podman/podman.sock");
        for (cmd, socket) in [
            ("docker ps", &docker),
            ("docker -D ps", &docker),
            ("docker --context default ps", &docker),
            ("docker -H unix:///run/podman/podman.sock ps", &podman),
            ("docker --host=unix:///run/podman/podman.sock ps", &podman),
            ("docker -Hunix:///run/podman/podman.sock ps", &podman),
            (
                "DOCKER_HOST=unix:///run/podman/podman.sock docker ps",
                &podman,
            ),
            (
                "env DOCKER_HOST=unix:///run/podman/podman.sock docker ps",
                &podman,
            ),
            ("podman --url unix:///run/podman/podman.sock ps", &podman),
            (
                "CONTAINER_HOST=unix:///run/podman/podman.sock podman ps",
                &podman,
            ),
        ] {
            assert_eq!(reads(cmd), std::slice::from_ref(socket), "{cmd}");
        }
        assert_eq!(
            reads("nerdctl ps"),
            [PathBuf::from("/run/containerd/containerd.sock")]
        );
        assert_eq!(
            reads("buildctl du"),
            [PathBuf::from("/run/buildkit/buildkitd.sock")]
        );
        assert_eq!(
            reads("nerdctl -a /run/k3s/containerd/containerd.sock ps"),
            [PathBuf::from("/run/k3s/containerd/containerd.sock")]
        );
        for cmd in [
            "DOCKER_HOST=tcp://127.0.0.1:2375 docker ps",
            "docker -H ssh://build.example ps",
            "docker --version",
            "docker context ls",
            "podman --version",
            "docker --context nosuch ps",
            "DOCKER_HOST=$X docker ps",
        ] {
            assert!(reads(cmd).is_empty(), "{cmd}: {:?}", reads(cmd));
        }
    }

    #[test]
    fn a_docker_context_is_read_from_the_home() {
        let home = tempfile::tempdir().unwrap();
        let meta = home.path().join(".docker/contexts/meta/abc");
        std::fs::create_dir_all(&meta).unwrap();
        let text = r#"{"Name":"colima","Endpoints":{"docker":{"Host":"unix:///h/.colima/default/docker.sock"}}}"#;
        std::fs::write(meta.join("meta.json"), text).unwrap();
        let socket = PathBuf::from("/h/.colima/default/docker.sock");
        for cmd in [
            "docker --context colima ps",
            "docker -c colima ps",
            "DOCKER_CONTEXT=colima docker ps",
        ] {
            assert_eq!(
                touched(cmd, home.path()).0,
                std::slice::from_ref(&socket),
                "{cmd}"
            );
        }
    }

    #[test]
    fn local_podman_writes_its_store_and_remote_podman_reads_a_socket() {
        let (_, writes) = touched("podman ps", Path::new("/h"));
        let store = writes.first().unwrap().to_string_lossy().into_owned();
        assert!(store.ends_with("containers/storage"), "{store}");
        let (_, writes) = touched("podman --root /ws-store ps", Path::new("/h"));
        assert_eq!(writes, [PathBuf::from("/ws-store")]);
        let (reads, writes) = touched("podman --remote ps", Path::new("/h"));
        assert!(writes.is_empty());
        assert!(reads.iter().all(|r| r.starts_with("/run")), "{reads:?}");
    }

    #[test]
    fn loopback_addresses() {
        for a in [
            "127.0.0.1:2375",
            "localhost:2375",
            "[::1]:2376",
            "127.1.2.3",
        ] {
            assert!(loopback(a), "{a}");
        }
        for a in ["10.0.0.1:2375", "build.example:22", "[2001:db8::1]:2376"] {
            assert!(!loopback(a), "{a}");
        }
    }
}
