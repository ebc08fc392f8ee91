#!/usr/bin/env python3
"""A minimal `sbx serve` client, standard library only.

    python3 examples/client.py [--sbx PATH] [--approve once|session|deny] \
        --run 'echo hi' --run 'git push' -- [sbx serve options...]

Starts `sbx serve`, sends one `bash` call per --run (all at once), answers approval
requests as --approve says, streams output to stdout, and prints each call's result
as the model would see it. Exits 0 when every call got a result.
"""
import argparse
import json
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sbx", default="sbx", help="path to the sbx binary")
    ap.add_argument("--run", action="append", default=[], help="a bash command to run")
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

    pending = set()
    for i, command in enumerate(args.run, start=1):
        call_id = f"call-{i}"
        pending.add(call_id)
        send({
            "type": "call",
            "id": call_id,
            "tool": "bash",
            "input": {"command": command},
            "session": args.session,
            "agent": "example-client",
        })

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
            if not pending:
                break
        elif kind == "error":
            print(f"error: {event['message']}", file=sys.stderr)
    proc.stdin.close()
    proc.wait(timeout=30)
    return 0 if not pending and proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
