# Pseudo-terminals: a child on a pty sees a terminal and its output comes back.
python3 - <<'PY' && echo "OK pty"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", "tty; test -t 0 && echo is-a-tty; stty size"])
out = b""
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
text = out.decode()
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, text)
assert "/dev/pts/" in text and "is-a-tty" in text, text
m, s = os.openpty(); assert os.isatty(s); os.close(m); os.close(s)
PY
command -v script >/dev/null && script -qec 'tty' /dev/null </dev/null | grep -q '^/dev/pts/' && echo "OK pty-script"
