"""One canonical identity per person: the only place ids are spelt, parsed and compared.

A person is named from the platform's own id, one spelling each:

- ``slack:<team>:<user>``, both as Slack writes them (uppercase); a bare user
  id (``U0123ABCD``, or ``W...`` under Enterprise Grid) names that user in any
  workspace, since Slack user ids are unique across workspaces;
- ``teams:<tenant>:<aad object id>``, both GUIDs as Teams sends them (lowercase,
  dashed): an uppercase GUID is the same GUID and is lowercased, anything else
  (braces, no dashes, a suffix, a tenant that is not a GUID) is refused, since no
  click can carry it and it would name no one;
- ``console:<name>``, the console sign-in's name as written;
- ``email:<address>``, lowercased, and only a plain ``local@domain``: the
  address a mail goes to is the identity, so a quoted, commented, bracketed or
  listed spelling (which a mail server reads as that same inbox, or as several)
  is refused rather than taken as someone else;
- ``link:<id>``, an answer link an agent handed out (``/q/...``), the id the
  agent chose (letters, digits, ``.``, ``_``, ``-``; at most 100), as written;
- ``test:<name>``, the fake surface ``bot.testing`` ships, as written.

Answerer lists also take ``anyone``, ``requester`` and Slack user groups
(``group:S...``, or a bare ``S...``). Surfaces build who clicked through
``slack_id``, ``teams_id`` and ``console_id``, and requests, settings and stored
questions go through ``canonical``, so both sides of every comparison are
spelt the same, and ``same_person`` is the one comparison of two of them: a
Slack user is one person in every workspace, by user id.

Anything that is not plain printable ASCII after trimming is refused rather
than normalized: NFKC would take a fullwidth U (U+FF35) for ``U`` (a look-alike
silently accepted as someone else's id) and still keep a zero-width space, so
the honest answer to either is a sentence saying how to write the id.
This module loads without the server: the client validates with it too.
"""

from __future__ import annotations

import functools
import re

from bot.contract.errors import BridgeError

ANYONE = "anyone"
REQUESTER = "requester"
KEYWORDS = frozenset({ANYONE, REQUESTER})

HOW = (
    "write a person as slack:<team>:<user>, teams:<tenant>:<aad object id>, "
    "console:<name>, email:<address> or link:<id>, a bare Slack user id such as U0123ABCD, "
    "a group as group:<id>, or anyone"
)

_SLACK_ID = re.compile(r"[A-Z0-9]+")
_SLACK_USER = re.compile(r"[UW][A-Z0-9]+")
_SLACK_GROUP = re.compile(r"S[A-Z0-9]+")
_GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# RFC 5322's dot-atom: what a mail server reads as one mailbox with no quoting, comment or
# display name around it. Lowercase only: the address is lowercased before it is matched.
_ATOM = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+"
_EMAIL_LOCAL = re.compile(rf"{_ATOM}(?:\.{_ATOM})*")
# A host name DNS can hold: labels of letters, digits and inner hyphens, at most 63 each.
_DOMAIN_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_MAX_LOCAL = 64
_MAX_DOMAIN = 253
_PRINTABLE = re.compile(r"[!-~]+")
LINK_ID = re.compile(r"[A-Za-z0-9._-]{1,100}")
_MENTION = re.compile(r"<@([A-Za-z0-9]+)(?:\|[^>]*)?>")

# What makes an address plain, for the sentences that refuse one that is not.
PLAIN_ADDRESS = (
    "no quotes, comments, angle brackets, mailto:, spaces, commas or backslashes, no empty "
    "or trailing dot, and a domain of letters, digits and hyphens"
)
EMAIL_HOW = f"write email: and one plain address, such as email:ana@example.com ({PLAIN_ADDRESS})"
TEAMS_HOW = (
    "write teams:<tenant id>:<aad object id>, both GUIDs as Teams sends them, such as "
    "teams:72f988bf-86f1-41af-91ab-2d7cd011db47:6b0f1e9a-4c2d-4e1f-8a3b-5d6e7f809a1b "
    "(no braces, no suffix)"
)


class IdentityError(BridgeError, ValueError):
    """An id the bridge cannot canonicalize; the message says how to write it (a ValueError
    too, so the wire models' validators report it as the field's error)."""

    code = "invalid_request"


def slack_id(team: str, user: str) -> str:
    """The person Slack signed: ``slack:<team>:<user>``."""
    return f"slack:{team.upper()}:{user.upper()}"


def teams_id(tenant: str, person: str) -> str:
    """The person the Bot Framework authenticated: ``teams:<tenant>:<aad object id>``."""
    return f"teams:{tenant.lower()}:{_guid_case(person)}"


def console_id(name: str) -> str:
    """The person the console signed in: ``console:<name>``."""
    return f"console:{name}"


def canonical(text: str) -> str:
    """``text`` in its one spelling; IdentityError, saying how to write it, if it has none."""
    word = text.strip()
    if not word or not _PRINTABLE.fullmatch(word):
        raise IdentityError(
            f"{text!a} holds a space or a character that is not plain ASCII "
            f"(an invisible or look-alike one); {HOW}"
        )
    mention = _MENTION.fullmatch(word)
    if mention is not None:
        user = mention.group(1).upper()
        raise IdentityError(
            f"{word!r} is a Slack mention, not an id; write {user} or slack:<team>:{user}"
        )
    if word.lower() in KEYWORDS:
        return word.lower()
    surface, sep, rest = word.partition(":")
    if not sep:
        if _SLACK_USER.fullmatch(word) or _SLACK_GROUP.fullmatch(word):
            return word
        if _SLACK_USER.fullmatch(word.upper()) or _SLACK_GROUP.fullmatch(word.upper()):
            raise IdentityError(f"{word!r}: Slack ids are uppercase; write {word.upper()}")
        raise IdentityError(f"{word!r} names no one the bridge can tell apart; {HOW}")
    parse = _SURFACES.get(surface.lower())
    spelt = parse(rest) if parse is not None else None
    if spelt is None:
        how = _SURFACE_HOW.get(surface.lower(), f"is not an id the bridge knows; {HOW}")
        raise IdentityError(f"{word!r} {how}")
    return spelt


def email_address(text: str) -> str | None:
    """``text`` as the one plain address it is (lowercased), or None if it is not one."""
    spelt = _email(text.strip())
    return spelt.partition(":")[2] if spelt is not None else None


def compared(text: str) -> str:
    """``text`` as comparisons see it: canonical, or trimmed when it has no canonical form.

    Stored questions and runs keep the spelling their asker gave before ids were
    canonicalized; comparing through this makes ``u0alice`` stored then the
    ``U0ALICE`` who clicks now, without migrating rows.
    """
    try:
        return canonical(text)
    except IdentityError:
        upper = text.strip().upper()
        return upper if _SLACK_USER.fullmatch(upper) else text.strip()


def same_person(one: str, other: str) -> bool:
    """Whether two ids (any spelling: configured, stored, or as a surface built them) name one
    person; the only comparison of people, for who may answer, the requester, admins and a
    quorum's count.

    A Slack user is one person in every workspace: Slack user ids are unique across
    workspaces (Enterprise Grid's ``W`` ids span an organization's), so a click from
    ``U0ALICE`` in another workspace is Alice, and is refused as the requester and counted
    once, as she would be in her own. An empty id names no one.
    """
    return bool(one.strip() and other.strip()) and person_of(one) == person_of(other)


# Cached: every check of who may answer compares the same few ids again, and an id
# without a canonical spelling costs a raised and caught IdentityError each time.
@functools.lru_cache(maxsize=1024)
def person_of(spelt: str) -> str:
    """What tells people apart: a Slack id's user (``U0ALICE`` for any workspace's), else the
    id in its one spelling; two ids are one person when this is the same for both."""
    spelt = compared(spelt)
    return _slack_user(spelt) or spelt


def _slack_user(who: str) -> str:
    surface, _, rest = who.partition(":")
    return rest.partition(":")[2] if surface == "slack" else ""


def _slack(rest: str) -> str | None:
    team, _, user = rest.upper().partition(":")
    if _SLACK_ID.fullmatch(team) and _SLACK_ID.fullmatch(user):
        return slack_id(team, user)
    return None


def _teams(rest: str) -> str | None:
    # What a click carries is lowercase and dashed; an uppercase GUID is the same GUID
    # (RFC 9562 reads hex digits in either case), anything else names no one.
    tenant, _, person = rest.lower().partition(":")
    if _GUID.fullmatch(tenant) and _GUID.fullmatch(person):
        return teams_id(tenant, person)
    return None


def _console(rest: str) -> str | None:
    return console_id(rest) if rest else None


def _test(rest: str) -> str | None:
    return f"test:{rest}" if rest else None


def _email(rest: str) -> str | None:
    local, at, domain = rest.lower().partition("@")
    if not (at and _EMAIL_LOCAL.fullmatch(local) and len(local) <= _MAX_LOCAL):
        return None
    labels = domain.split(".")
    if len(domain) > _MAX_DOMAIN or len(labels) < 2 or labels[-1].isdigit():
        return None
    if not all(_DOMAIN_LABEL.fullmatch(label) for label in labels):
        return None
    return f"email:{local}@{domain}"


def _link(rest: str) -> str | None:
    return f"link:{rest}" if LINK_ID.fullmatch(rest) else None


def _group(rest: str) -> str | None:
    group = rest.upper()
    return f"group:{group}" if _SLACK_ID.fullmatch(group) else None


def _guid_case(person: str) -> str:
    # An AAD object id is a GUID, compared lowercased; the Bot Framework's own
    # ``id:...`` (for a sender without one) is kept as the channel wrote it.
    return person.lower() if _GUID.fullmatch(person.lower()) else person


# Why an id of these surfaces has no spelling, and how to write one; others get ``HOW``.
_SURFACE_HOW = {
    "email": f"is not one plain email address; {EMAIL_HOW}",
    "teams": f"is not a Teams user id; {TEAMS_HOW}",
}

_SURFACES = {
    "slack": _slack,
    "teams": _teams,
    "console": _console,
    "email": _email,
    "link": _link,
    "group": _group,
    "test": _test,
}
