"""The idempotency key and the origin a question carries back to the receiver."""

from __future__ import annotations

from adapters.temporal._wire import METADATA_KEY, Origin, origin_of


def test_the_key_is_the_same_for_the_same_run_and_position_and_fits_the_bridge() -> None:
    """One key per (namespace, workflow id, run id, position), at most 200 characters."""
    first = Origin("default", "w" * 1000, "run-1", 0)
    assert first.idempotency_key == Origin("default", "w" * 1000, "run-1", 0).idempotency_key
    others = [
        Origin("default", "w" * 1000, "run-1", 1),
        Origin("default", "w" * 1000, "run-2", 0),
        Origin("other", "w" * 1000, "run-1", 0),
    ]
    assert len({first.idempotency_key, *(o.idempotency_key for o in others)}) == 4
    assert first.idempotency_key.startswith("temporal:") and len(first.idempotency_key) <= 200


def test_the_origin_reads_back_from_metadata_and_nothing_else_passes_for_one() -> None:
    """The metadata a question was asked with names its workflow; other metadata names none."""
    origin = Origin("default", "deploy-7", "run-1", 2)
    assert origin_of({"team": "ops", METADATA_KEY: origin.as_metadata()}) == origin
    assert origin_of(None) is None
    assert origin_of({"team": "ops"}) is None
    assert origin_of({METADATA_KEY: {**origin.as_metadata(), "position": "2"}}) is None
    assert origin_of({METADATA_KEY: {**origin.as_metadata(), "position": True}}) is None
    assert origin_of({METADATA_KEY: {"workflow_id": "deploy-7"}}) is None
