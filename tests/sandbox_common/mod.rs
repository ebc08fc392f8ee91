//! What the protection tests share: a wide profile for the "allowed" half of each pair, and
//! probes run inside the sandbox.
#![allow(dead_code, clippy::unwrap_used)]

/// A profile that grants much more, for the "allowed" half of a pair.
pub const WIDE: &str = r#"
requires = ["landlock", "seccomp"]
[filesystem]
read = ["/"]
execute = ["/"]
write = ["{workspace}", "{home}", "{tmp}"]
[network]
mode = "host"
[isolation]
pid = false
scope_signals = false
scope_abstract_unix = false
private_tmp = false
[environment]
pass = ["PATH", "HOME", "SECRET_TOKEN"]
[limits]
timeout = 60
processes = 2000
memory = "4GiB"
"#;

/// A python snippet that prints the errno of a raw syscall (0 on success).
pub fn syscall_probe(nr: &str, args: &str) -> String {
    format!(
        "python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); l.syscall.restype=ctypes.c_long; r=l.syscall({nr}{args}); print(\"errno\", 0 if r>=0 else ctypes.get_errno())'"
    )
}

pub fn tcp_probe(port: u16) -> String {
    format!(
        "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\",{port}),timeout=5); print(\"CONNECTED\", s.recv(16).decode())'"
    )
}

/// A listener on the host's loopback that greets every connection with `HELLO-TCP`.
pub fn tcp_hello_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in listener.incoming().flatten() {
            let mut c = c;
            let _ = std::io::Write::write_all(&mut c, b"HELLO-TCP");
        }
    });
    port
}

/// Waits (up to about five seconds) for a process whose command line holds `marker`: a
/// daemonising command such as `setsid -f` returns before its child has executed.
pub fn becomes_alive_with_arg(marker: &str) -> bool {
    (0..200).any(|_| {
        let alive = alive_with_arg(marker);
        if !alive {
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        alive
    })
}

pub fn alive_with_arg(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(marker))
            .unwrap_or(false)
    })
}
