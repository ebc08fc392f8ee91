//! The caller's terminal: `sbx run` on a terminal gives the command a pseudo-terminal of its
//! own, so that what the command does to its terminal never reaches the caller's. Each test
//! runs sbx on a fresh pseudo-terminal (the "outer" one, standing in for the caller's), as its
//! controlling terminal, as root and as uid 65534; the same command run directly on such a
//! terminal shows that it does change it there.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;
use common::*;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long any awaited event may take before the test gives up: generous, never asserted.
const PATIENCE: Duration = Duration::from_secs(60);

/// The caller's terminal: a pseudo-terminal whose primary end the test reads and writes.
struct Outer {
    primary: OwnedFd,
    replica: OwnedFd,
    seen: Vec<u8>,
}

impl Outer {
    /// 50 rows by 120 columns, with ^K as the kill character (an uncommon mode to see copied),
    /// the replica owned by `user` as a login would leave it.
    fn new(user: Option<u32>) -> Outer {
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        // SAFETY: plain calls on fds made here; each result is checked.
        let (primary, replica) = unsafe {
            let p = libc::posix_openpt(flags);
            assert!(p >= 0);
            assert_eq!(libc::unlockpt(p), 0);
            let r = libc::ioctl(p, libc::TIOCGPTPEER, flags);
            assert!(r >= 0);
            (OwnedFd::from_raw_fd(p), OwnedFd::from_raw_fd(r))
        };
        if let Some(uid) = user {
            std::os::unix::fs::fchown(&replica, Some(uid), Some(uid)).unwrap();
        }
        let outer = Outer {
            primary,
            replica,
            seen: Vec::new(),
        };
        outer.resize(50, 120);
        let mut m = outer.modes();
        m.c_cc[libc::VKILL] = 0x0b;
        // SAFETY: TCSETS with modes just read.
        assert_eq!(
            unsafe { libc::tcsetattr(outer.replica.as_raw_fd(), libc::TCSANOW, &m) },
            0
        );
        outer
    }

    /// Start `cmd` with this terminal as its stdin, stdout and stderr and as the controlling
    /// terminal of a new session, as a shell starts a job in the foreground.
    fn spawn(&self, cmd: &mut Command) -> Child {
        self.spawn_with(cmd, true, true)
    }

    fn spawn_with(&self, cmd: &mut Command, stdin: bool, stdout: bool) -> Child {
        let tty = || Stdio::from(self.replica.try_clone().unwrap());
        if stdin {
            cmd.stdin(tty());
        }
        if stdout {
            cmd.stdout(tty());
        }
        cmd.stderr(tty());
        let ctty = self.replica.as_raw_fd();
        // SAFETY: setsid and ioctl are async-signal-safe; `ctty` is open in the child (the
        // test holds it, and it is not close-on-exec until exec).
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(ctty, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn().unwrap()
    }

    /// Read what the terminal shows until `done` holds for it, or `PATIENCE` runs out.
    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> bool {
        let end = Instant::now() + PATIENCE;
        while !done(&self.text()) {
            if Instant::now() > end {
                return false;
            }
            self.pump(100);
        }
        true
    }

    /// Wait until the terminal shows `needle`; fail with the transcript if it never does.
    fn expect(&mut self, needle: &str) {
        assert!(
            self.read_until(|t| t.contains(needle)),
            "never saw {needle:?}: {:?}",
            self.text()
        );
    }

    /// Read what is there, waiting at most `ms` for the first byte.
    fn pump(&mut self, ms: i32) -> bool {
        let mut pfd = libc::pollfd {
            fd: self.primary.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one pollfd; read into a local buffer.
        unsafe {
            if libc::poll(&mut pfd, 1, ms) <= 0 {
                return false;
            }
            let mut buf = [0u8; 4096];
            let n = libc::read(pfd.fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                return false;
            }
            self.seen.extend_from_slice(&buf[..n as usize]);
        }
        true
    }

    /// Wait for `child` to end, reading the terminal meanwhile, then read what is left.
    fn wait(&mut self, child: &mut Child) -> ExitStatus {
        let end = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > end {
                let _ = child.kill();
                panic!("the run never ended: {:?}", self.text());
            }
            if !self.pump(100) {
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        while self.pump(200) {}
        status
    }

    /// Close the primary end, as a terminal window closing does: the replica hangs up.
    fn hang_up(&mut self) {
        self.primary = std::fs::File::open("/dev/null").unwrap().into();
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    fn modes(&self) -> libc::termios {
        // SAFETY: termios is plain data filled by tcgetattr.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: TCGETS into a local.
        assert_eq!(
            unsafe { libc::tcgetattr(self.replica.as_raw_fd(), &mut t) },
            0
        );
        t
    }

    fn size(&self) -> (u16, u16) {
        // SAFETY: TIOCGWINSZ fills a local.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::ioctl(self.replica.as_raw_fd(), libc::TIOCGWINSZ, &mut ws) },
            0
        );
        (ws.ws_row, ws.ws_col)
    }

    /// Resize the terminal as a window would: the kernel signals SIGWINCH to its foreground.
    fn resize(&self, rows: u16, cols: u16) {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads a local.
        assert_eq!(
            unsafe { libc::ioctl(self.primary.as_raw_fd(), libc::TIOCSWINSZ, &ws) },
            0
        );
    }

    /// Whether a program can still write to the terminal, i.e. its output is not stopped: a
    /// non-blocking write to the replica, then the bytes read back from the primary end.
    fn accepts_output(&mut self) -> bool {
        // SAFETY: fcntl and write on the test's own replica, after every child has ended.
        let n = unsafe {
            let fd = self.replica.as_raw_fd();
            let fl = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
            libc::write(fd, b"PING-4e1c\n".as_ptr().cast(), 10)
        };
        n == 10 && self.read_until(|t| t.contains("PING-4e1c"))
    }
}

/// The local modes that raw mode clears.
fn cooked(m: &libc::termios) -> bool {
    m.c_lflag & (libc::ECHO | libc::ICANON | libc::ISIG) == (libc::ECHO | libc::ICANON | libc::ISIG)
}

fn same_modes(a: &libc::termios, b: &libc::termios) -> bool {
    a.c_iflag == b.c_iflag
        && a.c_oflag == b.c_oflag
        && a.c_cflag == b.c_cflag
        && a.c_lflag == b.c_lflag
        && a.c_cc == b.c_cc
}

/// `sh -c script` run directly, outside sbx, as the scenario's user.
fn direct(s: &Scratch, script: &str) -> Command {
    let mut c = Command::new("sh");
    c.args(["-c", script])
        .current_dir(&s.ws)
        .env("HOME", &s.home);
    if let Some(uid) = s.user {
        c.uid(uid).gid(uid);
    }
    c
}

/// Turns echo and canonical mode off, resizes, and stops output: every way a command could
/// leave a terminal unusable. It first reports what it sees, then the size it set.
const MEDDLE: &str = "test -t 0 && test -t 1 && test -t 2 && echo IS-A-TTY; tty; \
    echo SIZE $(stty size); stty -a | grep -o 'kill = ^K'; \
    stty -echo -icanon cols 7 rows 3; echo NOW $(stty size); \
    python3 -c 'import termios; termios.tcflow(1, termios.TCOOFF)'";

/// With namespaces, and in the fallback without them (the pseudo-terminal then comes from the
/// host's `/dev/ptmx` instead of the sandbox's own devpts).
#[test]
fn what_the_command_does_to_its_terminal_stays_off_the_callers() {
    for (u, no_userns) in users().into_iter().flat_map(|u| [(u, false), (u, true)]) {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let before = outer.modes();
        let mut cmd = s.command("workspace", MEDDLE);
        if no_userns {
            cmd.env("SBX_DISABLE_USERNS", "1");
        }
        let mut child = outer.spawn(&mut cmd);
        let st = outer.wait(&mut child);
        let t = outer.text();
        assert!(st.success(), "{}: {t}", s.label());
        // The command had a terminal, named inside, with the caller's size and modes...
        assert!(t.contains("IS-A-TTY"), "{}: {t}", s.label());
        assert!(t.contains("\n/dev/pts/"), "tty names it: {t}");
        assert!(t.contains("SIZE 50 120"), "{}: {t}", s.label());
        assert!(t.contains("kill = ^K"), "{}: {t}", s.label());
        // ...and changed it...
        assert!(t.contains("NOW 3 7"), "{}: {t}", s.label());
        // ...but not the caller's.
        assert!(same_modes(&outer.modes(), &before), "{}", s.label());
        assert_eq!(outer.size(), (50, 120), "{}", s.label());
        assert!(outer.accepts_output(), "{}: output stopped", s.label());

        // The same command run directly on such a terminal does change it.
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut direct(&s, MEDDLE));
        outer.wait(&mut child);
        assert!(outer.text().contains("NOW 3 7"), "{}", outer.text());
        assert_eq!(outer.modes().c_lflag & libc::ECHO, 0);
        assert_eq!(outer.size(), (3, 7));
        assert!(
            !outer.accepts_output(),
            "{}: TCOOFF had no effect",
            s.label()
        );
    }
}

/// A script that waits for SIGWINCH and prints the size it then sees.
const ON_RESIZE: &str = "python3 -c 'import os, signal\n\
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])\n\
print(\"READY\", *os.get_terminal_size(0), flush=True)\n\
got = signal.sigtimedwait([signal.SIGWINCH], 120)\n\
print(\"WINCH\" if got else \"NO-WINCH\", *os.get_terminal_size(0), flush=True)'";

#[test]
fn a_resize_of_the_callers_terminal_reaches_the_command() {
    for u in users() {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut s.command("workspace", ON_RESIZE));
        outer.expect("READY 120 50");
        outer.resize(30, 70);
        outer.expect("WINCH 70 30");
        assert!(outer.wait(&mut child).success(), "{}", outer.text());
    }
}

#[test]
fn the_callers_modes_come_back_after_a_timeout_a_signal_and_a_failed_start() {
    let ready = "python3 -c 'import time; print(\"READY\", flush=True); time.sleep(300)'";
    for u in users() {
        let s = Scratch::new(u);
        for case in ["timeout", "sigterm", "not-found"] {
            let mut outer = Outer::new(u);
            let before = outer.modes();
            assert!(cooked(&before));
            let mut cmd = match case {
                "timeout" => s.sbx(&[
                    "run",
                    "--no-policy",
                    "--timeout",
                    "8",
                    "--",
                    "sh",
                    "-c",
                    ready,
                ]),
                "sigterm" => s.command("workspace", ready),
                _ => s.sbx(&["run", "--no-policy", "--", "/nonexistent-4e1c"]),
            };
            let mut child = outer.spawn(&mut cmd);
            if case != "not-found" {
                outer.expect("READY");
                // sbx put the caller's terminal in raw mode while the command reads it.
                assert!(!cooked(&outer.modes()), "{case}: not raw during the run");
            }
            if case == "sigterm" {
                // SAFETY: kill on our own child, not yet reaped.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            }
            let st = outer.wait(&mut child);
            let expected = match case {
                "timeout" => 124,
                "sigterm" => 128 + libc::SIGTERM,
                _ => 127,
            };
            assert_eq!(st.code(), Some(expected), "{case}: {}", outer.text());
            assert!(
                same_modes(&outer.modes(), &before),
                "{}: {case}: modes not restored",
                s.label()
            );
        }
    }
}

/// When the caller's terminal goes away, a command that survives the hang-up (it ignores
/// SIGHUP, which sbx forwards) reads end-of-file instead of waiting for input forever.
#[test]
fn the_end_of_the_callers_terminal_reaches_the_command_as_end_of_file() {
    let script = "trap '' HUP; echo READY; read x; echo \"READ-END $?\" > ended";
    for u in users() {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut s.command("workspace", script));
        outer.expect("READY");
        outer.hang_up();
        outer.wait(&mut child);
        let ended = std::fs::read_to_string(s.ws.join("ended")).unwrap_or_default();
        assert_eq!(ended, "READ-END 1\n", "{}", s.label());
    }
}

#[test]
fn tiocsti_is_refused_on_the_commands_terminal() {
    let probe = "python3 -c 'import fcntl,termios\ntry:\n  fcntl.ioctl(0, termios.TIOCSTI, b\"#\"); print(\"errno 0\")\nexcept OSError as e: print(\"errno\", e.errno)'";
    for u in users() {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut s.command("workspace", &format!("test -t 0 && {probe}")));
        outer.wait(&mut child);
        assert!(
            outer.text().contains(&format!("errno {}", libc::EPERM)),
            "{}: {}",
            s.label(),
            outer.text()
        );
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut direct(&s, probe));
        outer.wait(&mut child);
        assert!(outer.text().contains("errno "), "{}", outer.text());
        assert!(
            !outer.text().contains(&format!("errno {}", libc::EPERM)),
            "{}: {}",
            s.label(),
            outer.text()
        );
    }
}

/// `sbx run ... | cat` on a terminal: the command reads the pseudo-terminal and writes stdout
/// to the pipe; its stderr, like sbx's, is the terminal.
#[test]
fn a_pipe_on_stdout_stays_a_pipe_beside_a_terminal_on_stdin() {
    let script = "test -t 0 && echo IN-TTY; test -t 1 || echo OUT-PIPE; \
                  test -t 2 && echo ERR-TTY-5d2a >&2";
    for u in users() {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let mut cmd = s.command("workspace", script);
        cmd.stdout(Stdio::piped());
        let mut child = outer.spawn_with(&mut cmd, true, false);
        let mut piped = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut piped).unwrap();
        assert!(outer.wait(&mut child).success(), "{}", outer.text());
        assert_eq!(piped, "IN-TTY\nOUT-PIPE\n", "{}", s.label());
        assert!(outer.text().contains("ERR-TTY-5d2a"), "{}", outer.text());
    }
}

/// The command leaves the terminal's text concealed (`\e[8m`) as it ends: sbx's notices after
/// it (a protected path moved to quarantine) come after a reset of the display attributes, so
/// they show. Paired: with stderr on a pipe the same notice is plain text, no escape added.
#[test]
fn sbx_s_notices_after_the_command_are_not_concealed_by_it() {
    let script = "echo x > .envrc; printf '\\033[8m'";
    for u in users() {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut s.command("workspace", script));
        outer.wait(&mut child);
        let t = outer.text();
        let (hide, notice) = (t.find("\x1b[8m"), t.find("sbx: protected path"));
        let (Some(hide), Some(notice)) = (hide, notice) else {
            panic!("{}: no conceal or no notice: {t:?}", s.label());
        };
        assert!(hide < notice, "{t:?}");
        assert!(t[hide..notice].contains("\x1b[0m"), "{}: {t:?}", s.label());

        let s = Scratch::new(u);
        let o = s.command("workspace", script).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        let line = err.lines().find(|l| l.contains("protected path"));
        assert!(line.is_some_and(|l| l.starts_with("sbx: ")), "{err:?}");
        assert!(!err.contains('\x1b'), "{err:?}");
    }
}

/// Escape sequences the caller's terminal would act on outside the sandbox do not reach it:
/// OSC 52 (writes the clipboard), OSC 10/11 (recolour the screen), a tmux passthrough; a
/// title and plain colours do. After the run the screen modes are reset. Paired with the same
/// command run directly on such a terminal, which gets every byte.
#[test]
fn sequences_that_reach_past_the_terminal_are_dropped() {
    let script = "printf 'A\\033]52;c;Y3VybCBldmlsfHNo\\007B\\033]11;rgb:00/00/00\\007C\\033Ptmux;\\033\\033]52;c;QQ==\\007\\033\\\\D\\033]0;TITLE\\007\\033[31mE\\033[?1000h\\n'";
    for u in users() {
        let s = Scratch::new(u);
        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut s.command("workspace", script));
        outer.wait(&mut child);
        let t = outer.text();
        assert!(
            t.contains("ABCD\x1b]0;TITLE\x07\x1b[31mE"),
            "{}: {t:?}",
            s.label()
        );
        assert!(
            !t.contains("]52;") && !t.contains("]11;"),
            "{}: {t:?}",
            s.label()
        );
        let reset = String::from_utf8_lossy(sbx::exec::SCREEN_RESET).into_owned();
        let (set, reset_at) = (t.find("\x1b[?1000h"), t.rfind(&reset));
        assert!(
            set.zip(reset_at).is_some_and(|(a, b)| a < b),
            "{}: {t:?}",
            s.label()
        );

        let mut outer = Outer::new(u);
        let mut child = outer.spawn(&mut direct(&s, script));
        outer.wait(&mut child);
        let t = outer.text();
        assert!(
            t.contains("\x1b]52;c;Y3VybCBldmlsfHNo\x07"),
            "{}: {t:?}",
            s.label()
        );
    }
}

/// Without a terminal the command gets pipes, as before, and their cap holds.
#[test]
fn pipes_stay_pipes_and_stay_capped() {
    for u in users() {
        let s = Scratch::new(u);
        let p = s.write_profile("cap", "extends = \"workspace\"\n[limits]\noutput = 1000\n");
        let script = "test -t 0 || test -t 1 || echo PIPES; yes aaaa | head -c 5000";
        let o = s
            .sbx(&[
                "run",
                "--no-policy",
                "--json",
                "--profile",
                p.to_str().unwrap(),
            ])
            .args(["--", "sh", "-c", script])
            .output()
            .unwrap();
        let out = stdout(&o);
        let (body, json) = out.split_at(out.find('{').unwrap());
        assert!(body.starts_with("PIPES\naaaa"), "{}: {body}", s.label());
        // The capped output ends mid-line: the report starts its own line after it.
        assert_eq!(
            body.strip_suffix('\n').map(str::len),
            Some(1000),
            "stdout kept to the cap"
        );
        let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
        assert_eq!(v["stdout_truncated"], true);
        assert_eq!(v["stdout_bytes"], 5006);
    }
}

/// Output through the pseudo-terminal is the run's stdout: counted, capped, and followed by
/// the JSON report.
#[test]
fn output_through_the_terminal_is_counted_and_capped() {
    for u in users() {
        let s = Scratch::new(u);
        let p = s.write_profile("cap", "extends = \"workspace\"\n[limits]\noutput = 1000\n");
        let mut outer = Outer::new(u);
        let mut cmd = s.sbx(&[
            "run",
            "--no-policy",
            "--json",
            "--profile",
            p.to_str().unwrap(),
        ]);
        cmd.args(["--", "sh", "-c", "yes aaaa | head -c 5000"]);
        let mut child = outer.spawn(&mut cmd);
        // The command exited 0 with its output cut: sbx run says so (121).
        assert_eq!(outer.wait(&mut child).code(), Some(121), "{}", outer.text());
        let t = outer.text();
        let (body, json) = t.split_at(t.find('{').expect("a report"));
        // Each "aaaa\n" comes out of the terminal as "aaaa\r\n": 6000 bytes, 1000 kept; the
        // kept part ends mid-line, so the report starts its own line after it.
        let body = body
            .strip_suffix("\r\n")
            .or_else(|| body.strip_suffix('\n'))
            .unwrap_or(body);
        let kept = body.bytes().take_while(|b| b"a\r\n".contains(b)).count();
        assert_eq!(kept, 1000, "{}: {body:?}", s.label());
        let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
        assert_eq!(v["stdout_truncated"], true, "{v}");
        assert_eq!(v["stdout_bytes"], 6000, "{v}");
    }
}

/// A library caller asks for the terminal explicitly: with it, the command writes to a
/// pseudo-terminal whose output the run collects as stdout; without it (the default), pipes.
#[test]
fn the_library_gives_a_terminal_only_when_asked() {
    use sbx::exec::{Output, RunRequest, Sandbox, Terminal};
    if !kernel_ready() {
        return;
    }
    let s = Scratch::new(None);
    let sandbox = Sandbox::new(sbx::profile::Profile::load("workspace").unwrap());
    let run = |terminal: Option<Terminal>| {
        let argv = ["/bin/sh", "-c", "test -t 1 && echo TTY || echo PIPE"];
        let mut req = RunRequest::in_workspace(argv, &s.ws);
        req.cwd = s.ws.clone();
        req.output = Output::Collect;
        req.terminal = terminal;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = rt.block_on(sandbox.run(req, None)).unwrap();
        String::from_utf8(r.stdout).unwrap()
    };
    let term = Terminal {
        stdin: false,
        stdout: true,
        stderr: false,
    };
    assert_eq!(run(Some(term)), "TTY\r\n");
    assert_eq!(run(None), "PIPE\n");
}
