"""What the workflow, the activities and the receiver agree on: names, the origin, the key.

The workflow side and the worker side are different processes' code, and a
workflow replayed next year must still find the activities and the update by
the names it recorded, so the names are fixed strings here rather than
function references.
"""

# No ``from __future__ import annotations``: Temporal's converter reads the
# dataclasses' field types with get_type_hints, which inside the workflow
# sandbox cannot see this module's names.
import hashlib
import json
from dataclasses import dataclass
from typing import Any

# The activity that creates the question, and the one that long-polls it.
ASK_ACTIVITY = "bridge.ask"
WAIT_ACTIVITY = "bridge.wait_closed"
# The update that carries a question's close (the webhook's event) into the workflow.
CLOSE_UPDATE = "bridge.question_closed"
# The key under the question's metadata that names the workflow which asked.
METADATA_KEY = "temporal"
KEY_PREFIX = "temporal:"
# The receiver's answers to the webhook, as the update reports them.
ACCEPTED = "accepted"
DUPLICATE = "duplicate"


@dataclass(frozen=True)
class Origin:
    """The workflow run that asks, and which of its asks this is (0, 1, ...)."""

    namespace: str
    workflow_id: str
    run_id: str
    position: int

    @property
    def idempotency_key(self) -> str:
        """The same for the same run and position: a retried activity or a replay asks once.

        A digest, because workflow ids may be far longer than the bridge's
        200-character key.
        """
        parts = [self.namespace, self.workflow_id, self.run_id, self.position]
        canonical = json.dumps(parts, separators=(",", ":"))
        return KEY_PREFIX + hashlib.sha256(canonical.encode()).hexdigest()

    def as_metadata(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "workflow_id": self.workflow_id,
            "run_id": self.run_id,
            "position": self.position,
        }


def origin_of(metadata: dict[str, Any] | None) -> Origin | None:
    """The workflow a question was asked from, or None for a question that is not ours."""
    found = (metadata or {}).get(METADATA_KEY)
    if not isinstance(found, dict):
        return None
    try:
        namespace, workflow_id, run_id = (
            found["namespace"],
            found["workflow_id"],
            found["run_id"],
        )
        position = found["position"]
    except KeyError:
        return None
    if not all(isinstance(part, str) for part in (namespace, workflow_id, run_id)):
        return None
    if not isinstance(position, int) or isinstance(position, bool):
        return None
    return Origin(namespace, workflow_id, run_id, position)


@dataclass
class AskRequest:
    """The ask activity's input: the create call's fields, as JSON values, and its origin."""

    kind: str
    payload: dict[str, Any]
    routes: list[dict[str, Any]]
    origin: Origin
    # A list of routes given as one posts on each; one given alone is ``route``.
    several: bool = False
    answerers: list[str] | None = None
    ttl_seconds: int | None = None
    metadata: dict[str, Any] | None = None
    run_ref: str | None = None
    policy: dict[str, Any] | None = None


@dataclass
class AskResult:
    """The ask activity's result: the question as created, and how its close will come.

    ``push`` is whether the worker gave the bridge a callback URL; the
    workflow records it with the result, so a worker restarted with other
    settings cannot change how a question already asked is waited for.
    """

    question: dict[str, Any]
    push: bool
