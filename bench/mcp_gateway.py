"""What the MCP approval gateway adds to a call it forwards without asking anyone.

Two real processes over stdio, each reached by the ``mcp`` SDK's own client:
the upstream server of the gateway's tests (``tests/adapters/mcp_gateway/
upstream_server.py``) called directly, and ``python -m bot mcp-gateway`` in
front of another copy of it, whose file forwards the read-only ``status`` at
once (no rule names it; it is marked ``readOnlyHint``). The calls alternate,
direct then through the gateway, so both see the same machine at the same
moment; the figure is the difference of the medians, and the target is at
most 2 ms.

Run: `make bench` or `.venv/bin/python bench/mcp_gateway.py [n]` (default 1000).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT / "tests" / "adapters" / "mcp_gateway" / "upstream_server.py"
WARM_UP = 50
TARGET_MS = 2.0


def _env(folder: Path, **more: str) -> dict[str, str]:
    keep = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    return {**keep, "UPSTREAM_LOG": str(folder / "upstream.log"), **more}


def _gateway(folder: Path) -> StdioServerParameters:
    file = folder / "gateway.toml"
    file.write_text(
        f'[[upstreams]]\nname = "ops"\ncommand = ["{sys.executable}", "{UPSTREAM}"]\n'
        f'env = {{ UPSTREAM_LOG = "{folder / "upstream.log"}" }}\n',
        encoding="utf-8",
    )
    env = _env(
        folder,
        BOT_MCP_GATEWAY=str(file),
        # Never reached: a call no rule asks about does not touch the bridge.
        BOT_MCP_BRIDGE_URL="http://127.0.0.1:9",
        BOT_MCP_API_KEY="k" * 40,
        BOT_DATA_DIR=str(folder / "var"),
        BOT_LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    return StdioServerParameters(
        command=sys.executable, args=["-m", "bot", "mcp-gateway"], env=env, cwd=folder
    )


async def _timed(client: Client, name: str) -> float:
    started = time.perf_counter()
    result = await client.call_tool(name, {"service": "web"})
    elapsed = time.perf_counter() - started
    text = getattr(result.content[0], "text", "")
    if result.is_error or text != "web is up":
        raise SystemExit(f"{name}: unexpected result {text!r}")
    return elapsed


async def main(n: int) -> int:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        upstream = StdioServerParameters(
            command=sys.executable, args=[str(UPSTREAM)], env=_env(folder)
        )
        async with Client(upstream) as direct, Client(_gateway(folder)) as gateway:
            for _ in range(WARM_UP):
                await _timed(direct, "status")
                await _timed(gateway, "ops__status")
            plain: list[float] = []
            through: list[float] = []
            for _ in range(n):
                plain.append(await _timed(direct, "status"))
                through.append(await _timed(gateway, "ops__status"))
    p50_direct = statistics.median(plain) * 1000
    p50_gateway = statistics.median(through) * 1000
    added = p50_gateway - p50_direct
    print(f"MCP gateway, {n} forwarded calls (stdio client -> gateway -> stdio upstream)")
    print(f"  direct to the upstream  p50 {p50_direct:.2f} ms")
    print(f"  through the gateway     p50 {p50_gateway:.2f} ms")
    verdict = "met" if added <= TARGET_MS else "missed"
    target = f"target: at most {TARGET_MS:.0f} ms, {verdict}"
    print(f"  added by the gateway    p50 {added:.2f} ms ({target})")
    # A missed target is a figure to read, not a broken bench: a loaded machine misses it.
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)))
