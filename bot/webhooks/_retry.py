"""When a failed webhook is tried again: soon at first, then for more than a day.

A receiver that is restarting gets its event within seconds; one that is
down for a day still gets it. Attempts are spaced so the third comes well
within a minute of the first, and the last one comes after a full day.
"""

from __future__ import annotations

from bot.webhooks._errors import WebhookError

# The delay after the first, second, ... failed attempt; then EVERY until past GIVE_UP_AFTER.
DELAYS = (5.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 7200.0)
EVERY = 4 * 3600.0
GIVE_UP_AFTER = 24 * 3600.0


def retry_delay(attempt: int) -> float | None:
    """Seconds to wait after the ``attempt``-th failed attempt (from 1); None: give up.

    The outbox's ``attempts`` counts the failures before this one, so a
    row that just failed again waits ``retry_delay(attempts + 1)``.
    """
    if attempt < 1:
        raise WebhookError("attempt counts from 1, the first failed attempt")
    if attempt <= len(DELAYS):
        return DELAYS[attempt - 1]
    # Attempt ``attempt`` was sent this long after the first.
    elapsed = sum(DELAYS) + EVERY * (attempt - 1 - len(DELAYS))
    return None if elapsed > GIVE_UP_AFTER else EVERY
