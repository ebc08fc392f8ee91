"""Drive `sbx mcp` with the official MCP Python SDK over stdio, in one protocol era.

Usage: client.py SBX WORKSPACE POLICY HOME MODE EXPECTED_VERSION
MODE is `legacy` (the 2025 `initialize` handshake) or `auto` (the current version, found
through `server/discover`). Every check raises on failure; the last line printed is a JSON
summary that the Rust test reads.
"""

import asyncio
import json
import os
import sys

import jsonschema
from mcp import Client, StdioServerParameters
from mcp import types
from mcp.shared.exceptions import MCPError

OWNER = {"sbx/session": "s1", "sbx/agent": "a1"}
STRANGER = {"sbx/session": "s2", "sbx/agent": "a1"}


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


class Checker:
    def __init__(self, tools):
        self.schemas = {t.name: t.output_schema for t in tools}
        self.calls = 0

    def valid(self, name, result):
        """structuredContent is an object valid against the tool's outputSchema, error or not."""
        sc = result.structured_content
        assert isinstance(sc, dict), f"{name}: structuredContent is not an object: {sc!r}"
        jsonschema.validate(sc, self.schemas[name])
        self.calls += 1
        return sc


async def call(client, checker, name, args, meta=None):
    result = await client.call_tool(name, args, meta=meta or OWNER)
    return result, checker.valid(name, result)


async def run_checks(client, ws):
    tools = (await client.list_tools()).tools
    names = {t.name for t in tools}
    for want in ["bash", "job_output", "job_kill", "job_list", "terminal_open", "terminal_send",
                 "terminal_read", "terminal_resize", "terminal_signal", "terminal_close", "terminal_list"]:
        assert want in names, f"{want} missing from {sorted(names)}"
    bash = next(t for t in tools if t.name == "bash")
    assert bash.output_schema and bash.output_schema.get("type") == "object", bash
    assert bash.annotations and bash.annotations.destructive_hint is True, bash.annotations
    checker = Checker(tools)

    # A call that runs: output, exit code, the enforcement report.
    r, sc = await call(client, checker, "bash", {"command": "echo mcp-hello; echo mcp-err >&2"})
    assert not r.is_error, text_of(r)
    assert "mcp-hello" in text_of(r) and text_of(r).endswith("[exit code: 0]"), text_of(r)
    assert sc["exit_code"] == 0 and sc["decision"] == "allow", sc
    assert isinstance(sc["enforcement"], dict), sc

    # A command that fails is a tool error the model sees, with its exit code.
    r, sc = await call(client, checker, "bash", {"command": "echo failing; exit 3"})
    assert r.is_error and sc["exit_code"] == 3, (text_of(r), sc)
    assert text_of(r).endswith("[exit code: 3]"), text_of(r)

    # A write outside the workspace is refused; the same write inside runs.
    r, sc = await call(client, checker, "bash", {"command": "printf x > /etc/sbx-mcp-probe"})
    assert r.is_error and sc["decision"] == "deny", (text_of(r), sc)
    assert not os.path.exists("/etc/sbx-mcp-probe")
    r, sc = await call(client, checker, "bash", {"command": "printf x > inside.txt"})
    assert not r.is_error, (text_of(r), sc)
    assert open(os.path.join(ws, "inside.txt")).read() == "x"

    # A denied command is an error result with the rule's reason; an allowed one is not.
    r, sc = await call(client, checker, "bash", {"command": "rm -f inside.txt"})
    assert r.is_error and sc["decision"] == "deny", (text_of(r), sc)
    assert os.path.exists(os.path.join(ws, "inside.txt"))

    # An unknown tool is a protocol error, not a result.
    try:
        await client.call_tool("no_such_tool", {})
        raise AssertionError("an unknown tool was answered")
    except MCPError as e:
        assert "unknown tool" in str(e), e

    # Output beyond the cap is cut, keeping the exit code line.
    r, sc = await call(client, checker, "bash", {"command": "head -c 200000 /dev/zero | tr '\\0' a"})
    assert sc["truncated"] is True and len(text_of(r)) <= 4096, len(text_of(r))
    assert text_of(r).endswith("[exit code: 0]"), text_of(r)[-200:]

    await background_job(client, checker, ws)
    await terminal(client, checker, ws)
    await approvals(client, checker, ws)
    return checker.calls


async def background_job(client, checker, ws):
    """A job started in the background answers at once; its owner reads it, a stranger cannot."""
    marker = os.path.join(ws, "job-started")
    r, sc = await call(
        client,
        checker,
        "bash",
        {"command": f"echo job-out; printf x > {marker}; sleep 30", "run_in_background": True},
    )
    assert not r.is_error and sc["job_id"], (text_of(r), sc)
    job = sc["job_id"]
    r, sc = await call(client, checker, "job_output", {"job_id": job}, meta=STRANGER)
    assert r.is_error and "no background job" in text_of(r), text_of(r)
    r, sc = await call(client, checker, "job_kill", {"job_id": job}, meta=STRANGER)
    assert r.is_error and "no background job" in text_of(r), text_of(r)
    seen = ""
    while "job-out" not in seen:
        r, sc = await call(client, checker, "job_output", {"job_id": job, "wait_ms": 5000})
        assert not r.is_error, text_of(r)
        seen += text_of(r)
    r, sc = await call(client, checker, "job_list", {})
    assert [j["job_id"] for j in sc["jobs"]] == [job], sc
    r, sc = await call(client, checker, "job_list", {}, meta=STRANGER)
    assert sc["jobs"] == [], sc
    r, sc = await call(client, checker, "job_kill", {"job_id": job})
    assert not r.is_error and sc["job_status"]["state"] == "killed", sc
    # A call allowed to run longer than the host waits starts in the background by itself;
    # a short one runs to its end.
    r, sc = await call(client, checker, "bash", {"command": "echo long-call", "timeout_ms": 600000})
    assert not r.is_error and sc["job_id"] and sc["exit_code"] is None, (text_of(r), sc)
    seen = ""
    while "[exit code: 0]" not in seen:
        r, _ = await call(client, checker, "job_output", {"job_id": sc["job_id"], "wait_ms": 5000})
        seen += text_of(r)
    assert "long-call" in seen, seen
    r, sc = await call(client, checker, "bash", {"command": "echo short-call", "timeout_ms": 30000})
    assert not r.is_error and sc["job_id"] is None and sc["exit_code"] == 0, (text_of(r), sc)


async def read_until(client, checker, term, marker):
    seen = ""
    for _ in range(30):
        r, sc = await call(client, checker, "terminal_read", {"terminal_id": term, "wait_ms": 20000, "until": marker})
        assert not r.is_error, text_of(r)
        seen += text_of(r)
        if marker in seen:
            return seen
    raise AssertionError(f"{marker!r} never came: {seen!r}")


async def terminal(client, checker, ws):
    """A shell on a terminal keeps its state across sends; another owner cannot reach it."""
    r, sc = await call(client, checker, "terminal_open", {"rows": 30, "cols": 100})
    assert not r.is_error and sc["job_id"], (text_of(r), sc)
    term = sc["job_id"]
    send = {"terminal_id": term, "text": f"cd {ws} && V=kept", "keys": ["enter"]}
    r, sc = await call(client, checker, "terminal_send", send)
    assert not r.is_error, text_of(r)
    send["text"] = 'echo "term"-$V-$(pwd); echo y > /etc/sbx-mcp-term; echo "outside"=$?'
    r, sc = await call(client, checker, "terminal_send", send)
    out = await read_until(client, checker, term, "outside=")
    assert f"term-kept-{ws}" in out and "outside=0" not in out, out
    assert not os.path.exists("/etc/sbx-mcp-term")
    r, sc = await call(client, checker, "terminal_read", {"terminal_id": term, "screen": True})
    assert "[screen, cursor at row" in text_of(r), text_of(r)
    r, sc = await call(client, checker, "terminal_read", {"terminal_id": term}, meta=STRANGER)
    assert r.is_error and text_of(r) == f"error: no terminal `{term}` in this session", text_of(r)
    r, sc = await call(client, checker, "terminal_close", {"terminal_id": term})
    assert not r.is_error and sc["job_status"]["state"] != "running", sc


ASKED = []


async def on_elicit(context, params):
    """The user: accepts what names `accept-me`, declines the rest."""
    ASKED.append(params.message)
    if "accept-me" in params.message:
        return types.ElicitResult(action="accept", content={"remember_for_session": False})
    return types.ElicitResult(action="decline")


async def approvals(client, checker, ws):
    """An `ask` is put to the user through elicitation: accepted runs, declined does not."""
    r, sc = await call(client, checker, "bash", {"command": "touch accept-me"})
    assert not r.is_error, (text_of(r), sc)
    assert os.path.exists(os.path.join(ws, "accept-me"))
    assert any("touch accept-me" in m for m in ASKED), ASKED
    r, sc = await call(client, checker, "bash", {"command": "touch declined"})
    assert r.is_error and sc["decision"] == "deny", (text_of(r), sc)
    assert "declined" in text_of(r), text_of(r)
    assert not os.path.exists(os.path.join(ws, "declined"))


async def no_elicitation(params, mode, ws):
    """A client that cannot ask gets the call refused with the reason."""
    async with Client(params, mode=mode) as client:
        checker = Checker(await tools_of(client))
        r, sc = await call(client, checker, "bash", {"command": "touch unasked"})
        assert r.is_error and sc["decision"] == "deny", (text_of(r), sc)
        assert "does not support elicitation" in text_of(r), text_of(r)
        assert not os.path.exists(os.path.join(ws, "unasked"))
        return checker.calls


async def tools_of(client):
    return (await client.list_tools()).tools


def running(cmdline):
    """Whether a process with this exact command line (argv joined by spaces) exists."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().rstrip(b"\0").split(b"\0")
        except OSError:
            continue
        if b" ".join(argv).decode(errors="replace") == cmdline:
            return True
    return False


async def main(sbx, ws, policy, home, mode, expected):
    params = StdioServerParameters(
        command=sbx,
        args=["mcp", "--workspace", ws, "--policy", policy, "--max-output-bytes", "4096"],
        env={"HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    left = f"sleep 3{os.getpid() % 1000:03d}"
    async with Client(params, mode=mode, elicitation_callback=on_elicit) as client:
        assert client.protocol_version == expected, client.protocol_version
        calls = await run_checks(client, ws)
        # A job left running when the client goes away dies with the server.
        r, sc = await call(client, Checker(await tools_of(client)), "bash", {"command": left, "run_in_background": True})
        assert not r.is_error, text_of(r)
        assert running(left), f"the job `{left}` is not running"
    assert not running(left), f"`{left}` outlived the server"
    calls += await no_elicitation(params, mode, ws)
    print(json.dumps({"protocol": expected, "validated_results": calls}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:7]))
