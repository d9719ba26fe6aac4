"""A version-15 schema's open questions (before their nudges' due times), written raw for
the migration tests: one that will be reminded, one that will escalate, one with a reminder
counted already, one with no policy and a closed one. Statements use ``?``;
``_version_12.numbered`` spells them for PostgreSQL.
"""

from __future__ import annotations

import json
from typing import Any

from bot.stores.ports import Stores

_PAUSE = (
    "INSERT INTO pauses (interrupt_id, run_id, scope, name, tool_call_id, checkpoint_id,"
    " payload, issued_at, expires_at, root_run_id, session_id, thread_id, status, closed_by,"
    " policy, reminders, level)"
    " VALUES (?, 'r1', 'c1', 'ask_user', ?, '', '{}', 100.0, 1e12, '', '', '', ?, '', ?, ?, 0)"
)
_REMIND = {"remind_after_seconds": 10, "max_reminders": 2}
_ESCALATE = {"escalate": [{"after_seconds": 5, "answerers": ["bob"]}]}
# interrupt id, status, policy, reminders counted.
QUESTIONS: list[tuple[str, str, dict[str, Any] | None, int]] = [
    ("remind", "outstanding", _REMIND, 0),
    ("escalate", "outstanding", _ESCALATE, 0),
    ("reminded", "outstanding", _REMIND, 1),
    ("plain", "outstanding", None, 0),
    ("closed", "expired", _REMIND, 0),
]


def statements() -> list[tuple[str, tuple[Any, ...]]]:
    """The rows, as (statement, parameters) in the order to run them."""
    return [
        (_PAUSE, (i, f"call-{i}", status, None if p is None else json.dumps(p), reminders))
        for i, status, p, reminders in QUESTIONS
    ]


async def old_questions_owe_their_nudges(stores: Stores) -> None:
    """Each open question's next step is due when it would have been before the migration."""
    due = await stores.ledger.nudges_due(1e9)
    assert [q.interrupt_id for q in due] == ["escalate", "remind", "reminded"]
    assert [q.interrupt_id for q in await stores.ledger.nudges_due(109.0)] == ["escalate"]
    assert [q.interrupt_id for q in await stores.ledger.nudges_due(110.0)] == ["escalate", "remind"]
