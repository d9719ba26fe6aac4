"""Approve with changes as every surface's end-to-end test drives the demo agent: the
deployment that allows every decision, and what each way of answering leads to."""

from __future__ import annotations

EVERY_WAY = "approval=approve,reject,edit,respond"
# The approval asks for staging; the edit sends production.
CHANGES = "environment staging → production"
TO_PRODUCTION = "Deployed web 1.5.0 to production"
TO_STAGING = "Deployed web 1.5.0 to staging"
WAIT = "wait for Monday"
# The demo agent quotes a response instead of deploying.
RESPONDED = f"I did not deploy web; you said: {WAIT}"
NOT_ALLOWED = "edit is not allowed here"
# What a forged edit claims, on a question that allows approve and reject only.
FORGED_ARGUMENTS = {"service": "web", "environment": "production"}
