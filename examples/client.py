#!/usr/bin/env python3
"""A minimal `sbx serve` client, standard library only.

    python3 examples/client.py [--sbx PATH] [--approve once|session|deny] \
        --run 'echo hi' --run 'git push' --background 'make test' -- [sbx serve options...]

Starts `sbx serve`, sends one `bash` call per --run and per --background (all at once; the
latter with `run_in_background`), answers approval requests as --approve says, streams output
to stdout, and prints each call's result as the model would see it. A background job is read
with `job_output` until it ends. Exits 0 when every call got a result.
"""
import argparse
import json
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sbx", default="sbx", help="path to the sbx binary")
    ap.add_argument("--run", action="append", default=[], help="a bash command to run")
    ap.add_argument("--background", action="append", default=[],
                    help="a bash command to run as a background job")
    ap.add_argument("--approve", choices=["once", "session", "deny"], default="deny")
    ap.add_argument("--session", default="example-session")
    ap.add_argument("serve_args", nargs="*", help="options passed to `sbx serve`")
    args = ap.parse_args()

    proc = subprocess.Popen(
        [args.sbx, "serve", *args.serve_args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )

    def send(msg: dict) -> None:
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def call(call_id: str, tool: str, tool_input: dict) -> None:
        pending.add(call_id)
        send({
            "type": "call",
            "id": call_id,
            "tool": tool,
            "input": tool_input,
            "session": args.session,
            "agent": "example-client",
        })

    pending = set()
    commands = [(c, False) for c in args.run] + [(c, True) for c in args.background]
    for i, (command, background) in enumerate(commands, start=1):
        tool_input = {"command": command}
        if background:
            tool_input["run_in_background"] = True
        call(f"call-{i}", "bash", tool_input)
    reads = 0

    answer = {"once": "allow-once", "session": "allow-for-session", "deny": "deny"}[args.approve]
    for line in proc.stdout:
        event = json.loads(line)
        kind = event["type"]
        call_id = event.get("id")
        if kind == "ready":
            print(f"ready: profile {event['profile']} in {event['workspace']}")
        elif kind == "decision":
            where = f" by {event['rule']} ({event['source']})" if event.get("rule") else ""
            print(f"[{call_id}] {event['decision']}{where}")
        elif kind == "approval_request":
            print(f"[{call_id}] approval requested: {event['reason']} -> {answer}")
            send({"type": "approval", "id": call_id, "answer": answer})
        elif kind in ("stdout", "stderr"):
            sys.stdout.write(f"[{call_id}] {kind}: {event['data']}")
        elif kind == "result":
            print(f"[{call_id}] result ({event['decision']}):")
            print(event["content"])
            pending.discard(call_id)
            job = event.get("job_id")
            status = event.get("job_status") or {"state": "running"}
            if job and status["state"] == "running":
                # Started, or still running: read again, waiting up to 5 s for news.
                reads += 1
                call(f"read-{reads}", "job_output", {"job_id": job, "wait_ms": 5000})
            if not pending:
                break
        elif kind == "error":
            print(f"error: {event['message']}", file=sys.stderr)
    proc.stdin.close()
    proc.wait(timeout=30)
    return 0 if not pending and proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
