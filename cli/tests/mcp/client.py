"""Drive `git stella mcp` with the official Python MCP SDK client (PyPI package `mcp`).

Run by tests/cli/mcp.rs. Usage:
    client.py guard   GIT_STELLA REPO        the stale-write scenario, over one connection
    client.py soak    GIT_STELLA REPO N      N tool calls over one connection; prints RSS numbers
    client.py reconnect GIT_STELLA REPO ID   read on one connection, write on a second one with
                                            the same --session after an outside edit
    client.py oversized GIT_STELLA REPO      a write_file larger than one message may carry, then
                                            a small one on the same connection
    client.py append GIT_STELLA REPO TAG SECONDS FILE...
                                            for SECONDS: read one of FILEs, append one unique line
                                            to exactly what was read, write it back; prints each
                                            write's line and whether it was done
    client.py tools GIT_STELLA REPO PATH      read_file, write_file, edit_file and delete_file of
                                            PATH, printing what each answered
    client.py change GIT_STELLA REPO PATH SESSION
                                            as session SESSION, write_file, edit_file and
                                            delete_file of PATH without reading it first

Every check raises on failure, so a non-zero exit with a traceback is a failed test. The result
of each step is printed as one JSON line on stdout for the Rust side to assert on too.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def server_params(git_stella, repo, extra=()):
    env = dict(os.environ)
    return StdioServerParameters(command=git_stella, args=["mcp", *extra], env=env, cwd=repo)


async def guard(git_stella, repo):
    notes = os.path.join(repo, "notes.txt")
    async with stdio_client(server_params(git_stella, repo)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            emit("initialize", instructions=init.instructions or "")

            tools = await session.list_tools()
            names = sorted(t.name for t in tools.tools)
            emit("list_tools", names=names,
                 schemas={t.name: t.input_schema for t in tools.tools})

            r = await session.call_tool("read_file", {"path": "notes.txt"})
            assert not r.is_error, text_of(r)
            emit("read", text=text_of(r))

            # Another process edits the file behind the session's back.
            with open(notes, "w") as f:
                f.write("alpha\nbetamax\ngamma\n")

            r = await session.call_tool("write_file", {"path": "notes.txt", "content": "alpha\nBETA\ngamma\n"})
            assert r.is_error, "a stale write_file must be refused"
            emit("write_refused", text=text_of(r))

            r = await session.call_tool("edit_file", {"path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"})
            assert r.is_error, "a stale edit_file must be refused"
            emit("edit_refused", text=text_of(r))

            with open(notes) as f:
                emit("disk_after_refusals", text=f.read())

            r = await session.call_tool("read_file", {"path": "notes.txt"})
            assert not r.is_error, text_of(r)
            emit("reread", text=text_of(r))

            r = await session.call_tool("edit_file", {"path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"})
            assert not r.is_error, text_of(r)
            emit("edit_after_reread", text=text_of(r))

            r = await session.call_tool("edit_file", {"path": "notes.txt", "old_string": "nowhere", "new_string": "x"})
            assert r.is_error
            emit("edit_absent", text=text_of(r))

            r = await session.call_tool("read_file", {"path": "../outside.txt"})
            assert r.is_error
            emit("outside", text=text_of(r))

            r = await session.call_tool("read_file", {"path": "notes.txt", "offset": 2, "limit": 1})
            assert not r.is_error, text_of(r)
            emit("ranged", text=text_of(r))

            r = await session.call_tool("status", {})
            assert not r.is_error, text_of(r)
            emit("status", text=text_of(r))

            # The connection is still open and answering after every refusal.
            await session.send_ping()
            emit("ping", ok=True)

            with open(notes) as f:
                emit("disk_final", text=f.read())


async def reconnect(git_stella, repo, session_id):
    notes = os.path.join(repo, "notes.txt")
    params = server_params(git_stella, repo, ["--session", session_id])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            emit("first_connection", instructions=init.instructions or "")
            r = await session.call_tool("read_file", {"path": "notes.txt"})
            assert not r.is_error, text_of(r)
    # The first server is gone (as after a crash); someone edits the file meanwhile.
    with open(notes, "w") as f:
        f.write("alpha\nbetamax\ngamma\n")
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("write_file", {"path": "notes.txt", "content": "mine\n"})
            assert r.is_error, "the reconnected session must remember its read"
            emit("second_connection_refused", text=text_of(r))
    with open(notes) as f:
        emit("disk", text=f.read())


async def oversized(git_stella, repo):
    async with stdio_client(server_params(git_stella, repo)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            big = "x" * (17 << 20)
            r = await asyncio.wait_for(
                session.call_tool("write_file", {"path": "big.txt", "content": big}), 60)
            assert r.is_error, "an oversized write_file must be a tool error"
            emit("oversized", text=text_of(r), exists=os.path.exists(os.path.join(repo, "big.txt")))
            r = await session.call_tool("write_file", {"path": "small.txt", "content": "ok\n"})
            assert not r.is_error, text_of(r)
            emit("after", text=text_of(r))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def soak(git_stella, repo, n):
    async with stdio_client(server_params(git_stella, repo)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            pid = None
            # Find the server: the only stella-mcp process whose cwd is this repo.
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    exe = os.readlink(f"/proc/{entry}/exe")
                    cwd = os.readlink(f"/proc/{entry}/cwd")
                except OSError:
                    continue
                if os.path.basename(exe) == "stella-mcp" and os.path.realpath(cwd) == os.path.realpath(repo):
                    pid = int(entry)
            assert pid is not None, "the stella-mcp process was not found"

            async def round_(i):
                kind = i % 4
                if kind == 0:
                    r = await session.call_tool("read_file", {"path": "soak.txt"})
                elif kind == 1:
                    r = await session.call_tool("write_file", {"path": "soak.txt", "content": f"line {i}\n"})
                elif kind == 2:
                    r = await session.call_tool("edit_file", {"path": "soak.txt", "old_string": f"line {i - 1}", "new_string": f"line {i}"})
                else:
                    r = await session.call_tool("status", {})
                assert not r.is_error, (i, text_of(r))

            # Warm up: caches, allocator arenas and the runtime's threads reach their steady size.
            for i in range(200):
                await round_(i)
            before = rss_kib(pid)
            for i in range(200, 200 + n):
                await round_(i)
            after = rss_kib(pid)
            emit("soak", calls=n, warmup=200, rss_before_kib=before, rss_after_kib=after, pid=pid)


async def append(git_stella, repo, tag, seconds, files):
    async with stdio_client(server_params(git_stella, repo)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + seconds
            i = 0
            while loop.time() < deadline:
                path = files[i % len(files)]
                line = f"{tag}-{i}"
                i += 1
                r = await session.call_tool("read_file", {"path": path})
                if r.is_error:
                    continue
                text = text_of(r)
                r = await session.call_tool("write_file", {"path": path, "content": text + line + "\n"})
                emit("write", path=path, line=line, done=not r.is_error, told=text_of(r) if r.is_error else "")


async def changes(session, path):
    """write_file, edit_file and delete_file of PATH, printing what each answered."""
    r = await session.call_tool("write_file", {"path": path, "content": "written\n"})
    emit("write_file", error=r.is_error, text=text_of(r))
    r = await session.call_tool("edit_file", {"path": path, "old_string": "alpha", "new_string": "ALPHA"})
    emit("edit_file", error=r.is_error, text=text_of(r))
    r = await session.call_tool("delete_file", {"path": path})
    emit("delete_file", error=r.is_error, text=text_of(r))


async def tools(git_stella, repo, path):
    async with stdio_client(server_params(git_stella, repo)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            r = await session.call_tool("read_file", {"path": path})
            emit("read_file", error=r.is_error, text=text_of(r))
            await changes(session, path)


async def change(git_stella, repo, path, session_id):
    params = server_params(git_stella, repo, ["--session", session_id])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await changes(session, path)


def main():
    mode, git_stella, repo = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "guard":
        asyncio.run(guard(git_stella, repo))
    elif mode == "reconnect":
        asyncio.run(reconnect(git_stella, repo, sys.argv[4]))
    elif mode == "oversized":
        asyncio.run(oversized(git_stella, repo))
    elif mode == "append":
        asyncio.run(append(git_stella, repo, sys.argv[4], float(sys.argv[5]), sys.argv[6:]))
    elif mode == "tools":
        asyncio.run(tools(git_stella, repo, sys.argv[4]))
    elif mode == "change":
        asyncio.run(change(git_stella, repo, sys.argv[4], sys.argv[5]))
    elif mode == "soak":
        asyncio.run(soak(git_stella, repo, int(sys.argv[4])))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
