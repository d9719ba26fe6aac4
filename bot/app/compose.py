"""Wire the human capability, the agent and the stores together.

Shared by the application, the tests and the benchmarks so all three run
the same composition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bot.contract.models import Policy
from bot.human.capability import HumanInteractionCapability, InteractionRegistration
from bot.human.factory import ask_user_registration, human_interaction
from bot.human.live_binding import current_run_binding
from bot.human.tokens import TokenSigner
from bot.human.ttl import TTLPolicy
from bot.kernel.tools import Tool
from bot.kernel.turn import DEFAULT_MAX_ROUNDS, Agent
from bot.providers.base import Provider
from bot.questions.lifecycle import Lifecycle
from bot.service.running.capability_ports import LifecyclePorts
from bot.stores.ports import Stores


def build_agent(
    *,
    provider: Provider,
    stores: Stores,
    signer: TokenSigner,
    clock: Callable[[], float],
    tools: Sequence[Tool] = (),
    registrations: Sequence[InteractionRegistration] | None = None,
    ttl: TTLPolicy | None = None,
    system_prompt: str = "",
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    policies: Mapping[str, Policy] | None = None,
) -> tuple[Agent, HumanInteractionCapability]:
    """The agent with human interaction bound to these stores and this signer.

    The capability's ledger, checkpoint store and consumption are one object,
    the lifecycle's ports, so a pause is one write (question and turn state).
    """
    ports = LifecyclePorts(Lifecycle(stores.unit), stores.checkpoints)
    capability = human_interaction(
        signer=signer,
        binding=current_run_binding,
        encode_token=signer.encode,
        decode_token=signer.decoder(clock),
        registrations=registrations if registrations is not None else [ask_user_registration()],
        ttl=ttl,
        consumption=ports,
        ledger=ports,
        checkpoints=ports,
        # No audit port: the lifecycle audits each question in the write that asks it.
        clock=clock,
        policies=policies,
    )
    agent = Agent(
        provider,
        capabilities=[capability],
        tools=tools,
        system_prompt=system_prompt,
        max_rounds=max_rounds,
        journal=stores.journal,
    )
    return agent, capability
