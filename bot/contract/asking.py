"""``AskOptions``: how a question is asked, whatever its kind, as one value.

Where it is posted, who may answer, how long it stays open, where its close
is sent, what it carries back, its policy and the decisions an approver may
make: the fields of ``POST /v1/questions`` besides the kind, the payload and
the idempotency key. A caller's keywords become this value once (``of``) and
it is passed through as it is, rather than each layer restating the keywords.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.contract.models import Policy
from bot.contract.routes import Route, RoutesLike, route_of


@dataclass(frozen=True, kw_only=True)
class AskOptions:
    """The create request's options; ``None`` leaves each to the bridge's default."""

    # One route is sent as ``route``; several (given as a list) as ``routes``, each posted.
    route: Route | tuple[Route, ...]
    answerers: tuple[str, ...] | None = None
    ttl_seconds: int | None = None
    callback_url: str | None = None
    metadata: Mapping[str, Any] | None = None
    run_ref: str | None = None
    policy: Policy | None = None
    # Approvals only: the decisions the approver may make (BOT_ALLOW's when None).
    allow: tuple[str, ...] | None = None

    @classmethod
    def of(
        cls,
        *,
        route: RoutesLike,
        answerers: Sequence[str] | None = None,
        ttl_seconds: int | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        run_ref: str | None = None,
        policy: Policy | Mapping[str, Any] | None = None,
        allow: Sequence[str] | None = None,
    ) -> AskOptions:
        """The options from the looser forms a caller writes: ``"slack:C123"`` or a
        mapping for a route, a list of them for several, a mapping for the policy."""
        return cls(
            route=tuple(route_of(one) for one in route)
            if isinstance(route, list | tuple)
            else route_of(route),
            answerers=None if answerers is None else tuple(answerers),
            ttl_seconds=ttl_seconds,
            callback_url=callback_url,
            metadata=None if metadata is None else dict(metadata),
            run_ref=run_ref,
            policy=policy
            if policy is None or isinstance(policy, Policy)
            else Policy.model_validate(dict(policy)),
            allow=None if allow is None else tuple(allow),
        )

    @property
    def routes(self) -> tuple[Route, ...]:
        """Every route the question is posted on, the first first."""
        return self.route if isinstance(self.route, tuple) else (self.route,)

    def create_fields(self) -> dict[str, Any]:
        """The fields of the create request these options set (a ``None`` is left out)."""
        fields: dict[str, Any] = (
            {"routes": list(self.route)} if isinstance(self.route, tuple) else {"route": self.route}
        )
        optional: dict[str, Any] = {
            "answerers": None if self.answerers is None else list(self.answerers),
            "ttl_seconds": self.ttl_seconds,
            "callback_url": self.callback_url,
            "metadata": None if self.metadata is None else dict(self.metadata),
            "run_ref": self.run_ref,
            "policy": self.policy,
            "allow": None if self.allow is None else list(self.allow),
        }
        fields.update({k: v for k, v in optional.items() if v is not None})
        return fields
