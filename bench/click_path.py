"""The files of ours one Slack click runs, from the signed request to the resumed run's post.

Starts `python -m bot` (SQLite, Slack pointed at the loopback fake Web API)
under a profiler hook that records which of our source files execute
between two signals, parks two demo runs on their first question, clicks
the first (so lazy imports and caches are warm), then records while the
second is clicked, acked, spent and resumed until the run posts its next
question. It also records which file called which (a direct call from a
function in one of our files into another), and lists the pairs of files
that call each other both ways. Anything else the process does in that window (a sweep tick, the
lease heartbeat) is recorded too, and the list says so by name.
Run: `.venv/bin/python bench/click_path.py`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from slack_click import (  # noqa: E402
    bot_env,
    click_bodies,
    park,
    ready,
    recorded,
    signed_post,
    spawn,
)

from tests.e2e._server import free_port  # noqa: E402 (needs ROOT on the path)

# Run inside the bot's process: SIGUSR1 starts recording the files that
# execute, SIGUSR2 writes them to $CLICK_PATH_OUT.
_TRACED_BOT = """
import os, runpy, signal, sys, threading
roots = (os.path.join(os.getcwd(), "bot"), os.path.join(os.getcwd(), "adapters"))
seen = set()
calls = set()
def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.startswith(roots):
        callee = os.path.relpath(frame.f_code.co_filename)
        seen.add(callee)
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename.startswith(roots):
            caller_file = os.path.relpath(caller.f_code.co_filename)
            if caller_file != callee:
                calls.add(caller_file + " " + callee)
def start(*_):
    seen.clear(); calls.clear(); sys.setprofile(profile); threading.setprofile(profile)
    open(os.environ["CLICK_PATH_OUT"] + ".started", "w").close()
def stop(*_):
    sys.setprofile(None); threading.setprofile(None)
    with open(os.environ["CLICK_PATH_OUT"] + ".calls", "w") as out:
        out.write("\\n".join(sorted(calls)))
    with open(os.environ["CLICK_PATH_OUT"], "w") as out:
        out.write("\\n".join(sorted(seen)))
    open(os.environ["CLICK_PATH_OUT"] + ".stopped", "w").close()
signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
sys.argv = ["bot"]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
"""


async def _appeared(path: Path) -> None:
    """Wait for the traced bot, another process, to create ``path`` (5 s at most): a file
    is all it can signal with, so it is looked for every 10 ms."""
    for _ in range(500):
        if os.path.exists(path):  # noqa: ASYNC240 - one stat, not worth a thread
            return
        await asyncio.sleep(0.01)
    raise SystemExit(f"the traced bot never wrote {path.name}")


async def main() -> None:
    ports = {name: free_port() for name in ("fake", "ours")}
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "files.txt"
        env = bot_env(folder, port=ports["ours"], fake_url=urls["fake"])
        env["CLICK_PATH_OUT"] = str(out)
        fake = spawn(["-m", "tests.fakes.slack_api", str(ports["fake"])])
        bot = spawn(["-c", _TRACED_BOT], env)
        try:
            await ready(urls["fake"], "/_calls")
            await ready(urls["ours"])
            first, second = click_bodies(await park(urls["ours"], urls["fake"], 2))
            async with aiohttp.ClientSession() as session:
                form = "application/x-www-form-urlencoded"
                await signed_post(session, urls["ours"], first, form)
                await recorded(session, urls["fake"], "chat.postMessage", 3)  # warm
                bot.send_signal(signal.SIGUSR1)
                # The handler runs between two bytecodes of the bot's loop; it says when.
                await _appeared(out.with_name(out.name + ".started"))
                began = time.perf_counter()
                await signed_post(session, urls["ours"], second, form)
                await recorded(session, urls["fake"], "chat.postMessage", 4)
                took = time.perf_counter() - began
                bot.send_signal(signal.SIGUSR2)
                await _appeared(out.with_name(out.name + ".stopped"))
        finally:
            for process in (bot, fake):
                process.terminate()
                process.wait(timeout=30)
        files = out.read_text().split("\n") if out.exists() else []
        calls_out = out.with_name(out.name + ".calls")
        calls = calls_out.read_text().split("\n") if calls_out.exists() else []
    edges = {tuple(line.split(" ")) for line in calls if line}
    both_ways = sorted({tuple(sorted(edge)) for edge in edges if edge[::-1] in edges})
    print(f"one Slack click, request to the resumed run's next question ({took * 1000:.0f} ms)")
    print(f"files of ours that ran: {len(files)}")
    for name in files:
        print(f"  {name}")
    print(
        f"pairs of files that call each other (of {len(edges)} caller-callee pairs)"
        f": {len(both_ways)}"
    )
    for one, other in both_ways:
        print(f"  {one} <-> {other}")


if __name__ == "__main__":
    asyncio.run(main())
