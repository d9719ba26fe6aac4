"""What the capability's tests build on: one ask_user call, one turn, and the capability wired
to a store as the bridge wires it."""

from __future__ import annotations

from typing import Any

from bot.human import ASK_USER, HumanInteractionCapability, human_interaction
from bot.human.live_binding import current_run_binding
from bot.human.tokens import TokenSigner
from bot.kernel import TurnRequest
from bot.stores.ports import Stores
from bot.testing import call, question
from tests.support import bridge_ports

ASK = call(ASK_USER, questions=[question("Which environment?", "staging", "production")])
REQUEST = TurnRequest(text="go", scope="T1", run_id="run_1", root_run_id="run_1")


def capability_for(
    signer: TokenSigner, stores: Stores, **options: Any
) -> HumanInteractionCapability:
    """The capability bound to the current run, signing with ``signer``, its spends, pauses and
    checkpoints in ``stores``; each of ``options`` replaces that part or adds one."""
    wiring: dict[str, Any] = {
        "binding": current_run_binding,
        "encode_token": signer.encode,
        "consumption": bridge_ports(stores),
        "ledger": bridge_ports(stores),
        "checkpoints": stores.checkpoints,
    }
    return human_interaction(signer=signer, **(wiring | options))
