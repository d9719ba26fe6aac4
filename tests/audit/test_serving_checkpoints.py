"""The serving process signs checkpoints on its interval and when it stops cleanly."""

from __future__ import annotations

from pathlib import Path

from tests.audit.test_audit_cli import OLD_KEY, bot
from tests.e2e._server import BotServer, json_lines
from tests.waiting import eventually


def messages(server: BotServer) -> list[str]:
    return [str(line.get("message", "")) for line in json_lines(server.log_text())]


async def test_the_server_signs_checkpoints_on_its_interval_and_at_a_clean_stop(
    tmp_path: Path,
) -> None:
    """One checkpoint on the interval (0.05 minutes here), one more after the stop began."""
    server = BotServer(
        tmp_path, BOT_SIGNING_KEYS=OLD_KEY, BOT_AUDIT_CHECKPOINT_MINUTES="0.05", BOT_AGENT="none"
    )
    url = server.env["DATABASE_URL"]
    try:
        await server.start()
        await eventually(
            lambda: any(m.startswith("audit checkpoint 1 signed") for m in messages(server)),
            what="the first checkpoint on its interval",
        )
        assert await server.terminate() == 0
        said = messages(server)
    finally:
        server.close()
    stopping = said.index("shutting down: finishing resumes in flight")
    assert any(m.startswith("audit checkpoint ") for m in said[stopping:]), said
    code, out, _ = await bot(tmp_path, "audit", "verify", "--store", url=url)
    assert code == 0 and out.endswith("intact\n"), out
