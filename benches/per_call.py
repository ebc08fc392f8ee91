#!/usr/bin/env python3
"""Per-call cost of a `bash` call of `/bin/true` through a warm `sbx mcp` and `sbx serve`
session, against spawning the same thing bare and through benches/floor.c, in one run.

Usage: benches/per_call.py SBX FLOOR [CALLS]
  SBX    the sbx binary (benches/per_call.sh builds the release one)
  FLOOR  benches/floor.c built (namespaces, one fork, one exec: the least a sandbox pays)

Every figure is a median over CALLS calls (default 300) after 30 warm-up calls, measured by
this one driver the same way: the time from sending a request (or starting a process) to
reading its answer (or reaping it). The `bash` tool runs `bash -c COMMAND`, so the baselines
are given for `/bin/true` and for `bash -c /bin/true`. `job_list` runs no process: it is the
cost of the protocol and the session alone.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

POLICY = '[policy]\nallow = ["Bash(/bin/true)"]\n'


def spawn_times(argv, n, warm):
    out = []
    for i in range(n + warm):
        t = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ)
        os.waitpid(pid, 0)
        if i >= warm:
            out.append(time.perf_counter() - t)
    return out


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


def serve_times(sbx, ws, policy, tool, args, n, warm):
    s = Lines([sbx, "serve", "--workspace", ws, "--policy", policy], ws)
    assert s.recv()["type"] == "ready"
    out = []
    for i in range(n + warm):
        t = time.perf_counter()
        s.send({"type": "call", "id": str(i), "tool": tool, "input": args})
        while True:
            ev = s.recv()
            if ev.get("type") == "result" and ev.get("id") == str(i):
                break
        if i >= warm:
            out.append(time.perf_counter() - t)
        assert not ev["is_error"], ev
    s.close()
    return out


def mcp_times(sbx, ws, policy, tool, args, n, warm):
    s = Lines([sbx, "mcp", "--workspace", ws, "--policy", policy], ws)
    s.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "per-call-bench", "version": "1"}}})
    assert "result" in s.recv()
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    out = []
    for i in range(1, n + warm + 1):
        t = time.perf_counter()
        s.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": tool, "arguments": args}})
        while True:
            msg = s.recv()
            if msg.get("id") == i:
                break
        if i > warm:
            out.append(time.perf_counter() - t)
        assert not msg["result"].get("isError"), msg
    s.close()
    return out


def main():
    sbx, floor = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    warm = 30
    ws = tempfile.mkdtemp(prefix="sbx-per-call.", dir="/var/tmp")
    policy = os.path.join(tempfile.mkdtemp(prefix="sbx-per-call-home."), "policy.toml")
    with open(policy, "w") as f:
        f.write(POLICY)
    true = {"command": "/bin/true"}
    rows = [
        ("bare /bin/true", spawn_times(["/bin/true"], n, warm)),
        ("bare bash -c /bin/true", spawn_times(["/bin/bash", "-c", "/bin/true"], n, warm)),
        ("floor /bin/true", spawn_times([floor, "/bin/true"], n, warm)),
        ("floor bash -c /bin/true", spawn_times([floor, "/bin/bash", "-c", "/bin/true"], n, warm)),
        ("serve job_list (no process)", serve_times(sbx, ws, policy, "job_list", {}, n, warm)),
        ("mcp job_list (no process)", mcp_times(sbx, ws, policy, "job_list", {}, n, warm)),
        ("serve bash /bin/true", serve_times(sbx, ws, policy, "bash", true, n, warm)),
        ("mcp bash /bin/true", mcp_times(sbx, ws, policy, "bash", true, n, warm)),
    ]
    med = {name: statistics.median(t) for name, t in rows}
    floor_bash = med["floor bash -c /bin/true"]
    print(f"{'per call':<30} {'median':>9} {'p90':>9} {'/ floor bash':>13}")
    for name, t in rows:
        p90 = statistics.quantiles(t, n=10)[-1]
        print(f"{name:<30} {med[name]*1e6:>7.0f}us {p90*1e6:>7.0f}us {med[name]/floor_bash:>12.2f}x")
    print()
    print(f"mcp bash against the floor running the same bash -c: {med['mcp bash /bin/true'] / floor_bash:.2f}x"
          " (target 1.2x)")
    print(f"mcp bash against the floor running /bin/true alone:  {med['mcp bash /bin/true'] / med['floor /bin/true']:.2f}x")
    print(f"the MCP layer over serve (bash):  {(med['mcp bash /bin/true'] - med['serve bash /bin/true'])*1e6:+.0f}us")
    print(f"protocol and session, no process: {med['serve job_list (no process)']*1e6:.0f}us serve,"
          f" {med['mcp job_list (no process)']*1e6:.0f}us mcp")
    print(f"serve bash beyond the floor's bash -c: {(med['serve bash /bin/true'] - floor_bash)*1e6:+.0f}us"
          " (the pipeline's decision, the plan, mounts, Landlock, seccomp, supervision)")


if __name__ == "__main__":
    main()
