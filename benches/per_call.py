#!/usr/bin/env python3
"""Per-call cost of a `bash` call of `/bin/true` through a warm `sbx mcp` and `sbx serve`
session, against spawning the same thing bare and through benches/floor.c, in one run.

Usage: benches/per_call.py SBX FLOOR [CALLS [BASE]]
  SBX    the sbx binary (benches/per_call.sh builds the release one)
  FLOOR  benches/floor.c built (namespaces, one fork, one exec: the least a sandbox pays)
  BASE   another sbx binary (an earlier build) measured beside SBX in the same rounds

Every figure is a median over CALLS calls (default 300) after 30 warm-up calls, measured by
this one driver the same way: the time from sending a request (or starting a process) to
reading its answer (or reaping it). The rows are sampled round robin, one call of each per
round, so that load from elsewhere on the machine weighs on every row alike. The `bash` tool
runs `bash -c COMMAND`, so the baselines are given for `/bin/true` and for `bash -c /bin/true`.
`job_list` runs no process: it is the cost of the protocol and the session alone. For the
sessions, "sbx CPU" is the server process's own CPU time per call (its threads, not the
processes it starts), which load from elsewhere does not inflate as much as the medians.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

POLICY = '[policy]\nallow = ["Bash(/bin/true)"]\n'


class Spawn:
    """Start a process and reap it."""

    def __init__(self, argv):
        self.argv = argv

    def once(self):
        t = time.perf_counter()
        pid = os.posix_spawn(self.argv[0], self.argv, os.environ)
        os.waitpid(pid, 0)
        return time.perf_counter() - t

    def close(self):
        pass

    def cpu(self):
        return None


class Lines:
    """A child speaking one JSON object per line on stdin/stdout."""

    def __init__(self, argv, cwd):
        self.p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj).encode() + b"\n")
        self.p.stdin.flush()

    def recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit("the server ended")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait()

    def cpu(self):
        """The server's own CPU time so far (user and system, its threads, not its children)."""
        with open(f"/proc/{self.p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Serve(Lines):
    """One warm `sbx serve` session calling one tool."""

    def __init__(self, sbx, ws, policy, tool, args):
        super().__init__([sbx, "serve", "--workspace", ws, "--policy", policy], ws)
        assert self.recv()["type"] == "ready"
        self.tool, self.args, self.n = tool, args, 0

    def once(self):
        self.n += 1
        t = time.perf_counter()
        self.send({"type": "call", "id": str(self.n), "tool": self.tool, "input": self.args})
        while True:
            ev = self.recv()
            if ev.get("type") == "result" and ev.get("id") == str(self.n):
                break
        took = time.perf_counter() - t
        assert not ev["is_error"], ev
        return took


class Mcp(Lines):
    """One warm `sbx mcp` session calling one tool."""

    def __init__(self, sbx, ws, policy, tool, args):
        super().__init__([sbx, "mcp", "--workspace", ws, "--policy", policy], ws)
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "per-call-bench", "version": "1"}}})
        assert "result" in self.recv()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tool, self.args, self.n = tool, args, 0

    def once(self):
        self.n += 1
        t = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                   "params": {"name": self.tool, "arguments": self.args}})
        while True:
            msg = self.recv()
            if msg.get("id") == self.n:
                break
        took = time.perf_counter() - t
        assert not msg["result"].get("isError"), msg
        return took


def measure(rows, n, warm):
    """Round robin: each round takes one sample of every row, so that a load that comes and
    goes on the machine weighs on all rows alike."""
    times = {name: [] for name, _ in rows}
    cpu = {}
    for i in range(n + warm):
        if i == warm:
            cpu = {name: r.cpu() for name, r in rows}
        for name, r in rows:
            took = r.once()
            if i >= warm:
                times[name].append(took)
    own = {name: (r.cpu() - cpu[name]) / n for name, r in rows if cpu[name] is not None}
    for _, r in rows:
        r.close()
    return times, own


def main():
    # Each scratch directory goes when the measurement ends, however it ends.
    dirs = []
    try:
        measure_all(dirs)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


def measure_all(dirs):
    sbx, floor = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    base = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
    warm = 30
    ws = tempfile.mkdtemp(prefix="sbx-per-call.", dir="/var/tmp")
    home = tempfile.mkdtemp(prefix="sbx-per-call-home.")
    dirs += [ws, home]
    policy = os.path.join(home, "policy.toml")
    with open(policy, "w") as f:
        f.write(POLICY)
    true = {"command": "/bin/true"}
    rows = [
        ("bare /bin/true", Spawn(["/bin/true"])),
        ("bare bash -c /bin/true", Spawn(["/bin/bash", "-c", "/bin/true"])),
        ("floor /bin/true", Spawn([floor, "/bin/true"])),
        ("floor bash -c /bin/true", Spawn([floor, "/bin/bash", "-c", "/bin/true"])),
        ("serve job_list (no process)", Serve(sbx, ws, policy, "job_list", {})),
        ("mcp job_list (no process)", Mcp(sbx, ws, policy, "job_list", {})),
        ("serve bash /bin/true", Serve(sbx, ws, policy, "bash", true)),
        ("mcp bash /bin/true", Mcp(sbx, ws, policy, "bash", true)),
    ]
    if base:
        rows += [
            ("base serve bash /bin/true", Serve(base, ws, policy, "bash", true)),
            ("base mcp bash /bin/true", Mcp(base, ws, policy, "bash", true)),
        ]
    times, own = measure(rows, n, warm)
    med = {name: statistics.median(t) for name, t in times.items()}
    floor_bash = med["floor bash -c /bin/true"]
    print(f"{'per call':<30} {'median':>9} {'p90':>9} {'/ floor bash':>13} {'sbx CPU':>9}")
    for name, t in times.items():
        p90 = statistics.quantiles(t, n=10)[-1]
        mine = f"{own[name]*1e6:>7.0f}us" if name in own else ""
        print(f"{name:<30} {med[name]*1e6:>7.0f}us {p90*1e6:>7.0f}us {med[name]/floor_bash:>12.2f}x {mine:>9}")
    print()
    for tool in ("serve", "mcp"):
        print(f"{tool} bash against the floor running the same bash -c: "
              f"{med[f'{tool} bash /bin/true'] / floor_bash:.2f}x (target 1.2x)")
    print(f"mcp bash against the floor running /bin/true alone:  {med['mcp bash /bin/true'] / med['floor /bin/true']:.2f}x")
    print(f"the MCP layer over serve (bash):  {(med['mcp bash /bin/true'] - med['serve bash /bin/true'])*1e6:+.0f}us")
    print(f"protocol and session, no process: {med['serve job_list (no process)']*1e6:.0f}us serve,"
          f" {med['mcp job_list (no process)']*1e6:.0f}us mcp")
    print(f"serve bash beyond the floor's bash -c: {(med['serve bash /bin/true'] - floor_bash)*1e6:+.0f}us"
          " (the pipeline's decision, the plan, mounts, Landlock, seccomp, supervision)")
    if base:
        for tool in ("serve", "mcp"):
            print(f"{tool} bash, this build against the baseline: "
                  f"{med[f'{tool} bash /bin/true']*1e6:.0f}us against {med[f'base {tool} bash /bin/true']*1e6:.0f}us"
                  f" ({med[f'base {tool} bash /bin/true'] / floor_bash:.2f}x the floor before)")


if __name__ == "__main__":
    main()
