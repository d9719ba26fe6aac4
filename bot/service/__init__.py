"""The run service: a run's life from a chat message to its outcome, durably.

``RunService`` (``runs``) drives runs under leases (``lease_keeper``),
redeems answers (``redeem``) and resumes from them (``resume``), delivers
what surfaces owe people from the outbox (``delivery``), and lets the acks
platforms wait on go first (``foreground``). Adapters use ``RunService``
and ``Foreground``; the other modules are its parts.
"""

from bot.service.delivering.views import RunWithQuestions
from bot.service.running.foreground import Foreground
from bot.service.running.runs import RunService

__all__ = ["Foreground", "RunService", "RunWithQuestions"]
