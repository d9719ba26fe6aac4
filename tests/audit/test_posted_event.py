"""Posting a question is an audit event: one ``posted`` per post, linked into its run's chain."""

from __future__ import annotations

from bot.audit import Intact, canonical, checkpoint_keys, public_keys, verify
from bot.human import ASK_USER
from bot.stores.ports import Stores
from bot.testing import call, calls, question, say
from tests.support import HarnessFactory

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
KEY = checkpoint_keys([("k1", "s" * 48)])[0]


async def test_each_post_is_audited_and_the_chain_verifies_with_it(
    harness: HarnessFactory, stores: Stores
) -> None:
    """The post and a resend's post are each a ``posted`` event after ``paused``, with where
    and the message; the export of the chain verifies with them in it."""
    h = harness(stores, [calls(ASK), say("deployed")])
    run_id = await h.start()
    (_, asked) = h.surface.questions[-1]
    again = await h.service.questions.repost(asked, at=h.service.clock(), actor="admin")
    assert again is not None
    h.service.deliverer.kick(sweep=True)
    await h.service.wait_idle()
    assert len(h.surface.questions) == 2
    await h.answer({"answers": {"Which environment?": "staging"}})

    kinds = [e.kind for e in reversed(await stores.audit.recent(run_id=run_id))]
    assert kinds[:5] == ["started", "paused", "posted", "resent", "posted"], kinds
    posted = [e for e in await stores.audit.recent(run_id=run_id) if e.kind == "posted"]
    assert [e.interrupt_id for e in posted] == [asked.interrupt_id] * 2
    assert [e.detail for e in reversed(posted)] == [
        {"surface": h.surface.name, "message": {"surface": h.surface.name, "message": "m1"}},
        {
            "surface": h.surface.name,
            "message": {"surface": h.surface.name, "message": "m2"},
            "repost": True,
        },
    ]

    assert await stores.audit_chain.checkpoint(KEY, at=h.service.clock()) is not None
    lines = [canonical(line).decode() async for line in stores.audit_chain.export()]
    verdict = verify(lines, public_keys([KEY]))
    assert isinstance(verdict, Intact), verdict.sentence()
    exported = [line for line in lines if '"kind":"posted"' in line]
    assert len(exported) == 2 and all(f'"chain":"{run_id}"' in line for line in exported)
