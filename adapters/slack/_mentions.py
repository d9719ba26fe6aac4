"""How a Slack message names people: a mention where the id is Slack's, text otherwise.

Only a word that is a Slack user or user group id becomes ``<@U…>`` or
``<!subteam^S…>``; any other id or name (another surface's person, an id a
request named, a display name) is shown through ``bot.display``, so it can
neither mention nor link.
"""

from __future__ import annotations

import re

from bot.display import display

SURFACE = "slack"
# A Slack user or user group id: "x|@everyone" or "<!channel>" is not one.
SLACK_ID = re.compile(r"^[A-Z0-9]{1,32}$")
# The name this adapter gives a Slack person it knows by id only (``_who.responder``).
OWN_MENTION = re.compile(r"^<@[A-Z0-9]{1,32}>$")


def mention(responder_id: str) -> str:
    """``slack:T:U`` as a mention Slack renders as @name; other ids as text (mrkdwn)."""
    parts = responder_id.split(":")
    if len(parts) == 3 and parts[0] == SURFACE and SLACK_ID.match(parts[2]):
        return f"<@{parts[2]}>"
    return display(responder_id, markup="slack")


def person(answerer: str) -> str:
    """An answerer id as mrkdwn: a Slack person (``slack:T:U``, or a bare user id) as a
    mention, anyone else by their id, as text."""
    bare = answerer.split(":")[-1] if is_slack_person(answerer) else ""
    if SLACK_ID.match(bare):
        return f"<@{bare}>"
    return display(answerer, markup="slack")


def group_mention(group: str) -> str:
    """A Slack user group as a mention; a word that is not a group id, as text."""
    return f"<!subteam^{group}>" if SLACK_ID.match(group) else display(group, markup="slack")


def named(person_id: str, name: str) -> str:
    """A voter as the tally shows them: a Slack person as Slack renders them, anyone else
    (a Teams answerer of a question posted on both) by the name their surface gave."""
    return mention(person_id) if is_slack(person_id) else display(f"@{name}", markup="slack")


def is_slack(person_id: str) -> bool:
    return person_id.startswith(f"{SURFACE}:")


def is_slack_person(word: str) -> bool:
    """An answerer id that names a Slack person: ``slack:T:U``, or a bare user id."""
    return is_slack(word) or ":" not in word


def name_shown(name: str) -> str:
    """A recorded display name as mrkdwn: the ``<@U…>`` this adapter recorded stays a
    mention; any other name (Slack's, another surface's, a request's) is text."""
    return name if OWN_MENTION.match(name) else display(name, markup="slack")
