"""Who may answer a question: the decision every surface defers to.

By default only the person who started the run (and admins, and any named
approver). Per interaction a deployment may open a question to anyone in
the scope (the channel), to named people, or to the members of a group;
group membership comes from a ``Directory`` the surface provides (Slack's
user groups), but the decision is made here, the same for every surface.
``RequesterOrApprovers.who_may_answer`` decides it once per question (its
own answerers, its interaction's rule, the escalation steps taken, whether
the requester may answer), as a ``MayAnswer``: the redeem admits whom it
names (and tells a refused person so), every surface draws its sentence
(``bot.service.delivering.messages.who_may_answer_text``) and admin commands list it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import Field, ValidationError, field_validator

from bot.component_settings import ComponentSettings, CsvList
from bot.contract.decisions import DEFAULT_ALLOW, check_allow
from bot.contract.identity import canonical, compared, same_person
from bot.contract.models import Policy, validation_sentence
from bot.errors import BotError
from bot.questions.quorum import MayAnswer, escalated_answerers, policy_of
from bot.questions.records import Question, RunRecord
from bot.service.answering.outcomes import Responder


class Directory(Protocol):
    """Group membership; the policy relies on it for rules that name a group."""

    async def is_member(self, group: str, who: Responder) -> bool: ...


@dataclass(frozen=True, slots=True)
class Answerers:
    """Who may answer one interaction's questions, besides admins and approvers.

    ``people`` are compared as canonical identities (``bot.contract.identity``):
    a bare Slack user id (``U123``) names that user in any workspace.
    """

    requester: bool = True
    anyone: bool = False
    people: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    def names(self, who: str) -> bool:
        return any(same_person(who, person) for person in self.people)


@dataclass(frozen=True, slots=True)
class RequesterOrApprovers:
    """The person who started the run, admins, any named approver, and ``rules``.

    ``anyone`` opens every question to everyone in the scope, for teams
    that triage together; it is off by default. ``rules`` set the answerers
    of one interaction (by name) instead of the default.
    """

    approvers: Collection[str] = field(default_factory=frozenset)
    anyone: bool = False
    rules: Mapping[str, Answerers] = field(default_factory=dict)
    directory: Directory | None = None

    def answerers(self, interaction: str) -> Answerers:
        """The rule for one interaction, for deciding and for showing who may answer."""
        return self.rules.get(interaction) or Answerers(anyone=self.anyone)

    def answerers_for(self, record: Question) -> Answerers:
        """The question's own answerers when its asker named them, else its interaction's rule."""
        return self.rule_for(record.name, record.answerers)

    def rule_for(self, interaction: str, named: Sequence[str] = ()) -> Answerers:
        """``named`` answerers (an API question's) as a rule, else the interaction's."""
        return answerers_from(named) if named else self.answerers(interaction)

    def who_may_answer(self, record: Question, requester: str) -> MayAnswer:
        """Who may answer ``record`` in a run ``requester`` started: its own answerers (an
        API question's) or its interaction's rule, plus those the escalation steps taken
        so far added, less the requester where its policy keeps them out. The redeem's
        check and every surface (and admin command) read this one value."""
        rule = self.answerers_for(record)
        anyone, people, groups = rule.anyone, set(rule.people), set(rule.groups)
        named_requester = rule.requester
        escalated = escalated_answerers(record)
        if escalated:
            # An escalation step adds its answerers to whoever could answer before.
            added = answerers_from(escalated)
            anyone |= added.anyone
            people |= added.people
            groups |= added.groups
            named_requester |= any(compared(word) == "requester" for word in escalated)
        asker = requester if named_requester else ""
        policy = policy_of(record)
        if not policy.requester_may_answer:
            # The one who asked for the action is named by no spelling (``is_self_answer``).
            asked_by = policy.requester or requester
            people = {p for p in people if not same_person(p, asked_by)}
            asker = "" if same_person(asker, asked_by) else asker
        return MayAnswer(
            anyone=anyone,
            requester=asker,
            people=tuple(sorted(people)),
            groups=tuple(sorted(groups)),
            approvers=tuple(sorted(self.approvers)),
        )

    async def __call__(self, record: Question, run: RunRecord | None, who: Responder) -> bool:
        return await self.admits(self.who_may_answer(record, requester_of_run(run)), who)

    async def admits(self, may: MayAnswer, who: Responder) -> bool:
        """Whether ``who`` is among ``may`` (a group's members asked of the directory)."""
        if who.is_admin:
            return True
        if may.names(who.id):
            return True
        if self.directory is not None:
            for group in may.groups:
                if await self.directory.is_member(group, who):
                    return True
        return False


def requester_of_run(run: RunRecord | None) -> str:
    """Who started ``run``; "" when no run is known (no requester is admitted then)."""
    return run.requester if run is not None else ""


def parse_rules(text: str) -> dict[str, Answerers]:
    """``approval=U1 U2 S3;ask_user=anyone`` -> rules per interaction.

    Each entry names an interaction and who may answer it: ``anyone``,
    ``requester``, people, and groups written ``group:ID`` (Slack user
    group ids start with ``S`` and are accepted bare too). Naming people
    or groups drops the requester unless ``requester`` is listed as well.
    """
    rules: dict[str, Answerers] = {}
    for entry in filter(None, (part.strip() for part in text.split(";"))):
        name, sep, who = entry.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{entry!r} is not interaction=who (e.g. approval=U123 S456)")
        words = who.replace(",", " ").split()
        for word in words:
            canonical(word)  # an id the bridge cannot compare would never match: refused
        rules[name.strip()] = answerers_from(words)
    return rules


def answerers_from(words: Collection[str]) -> Answerers:
    """``anyone``, ``requester``, people and groups (``group:ID``, or a bare ``S...``) as a rule."""
    people: set[str] = set()
    groups: set[str] = set()
    words = [compared(word) for word in words]
    for word in words:
        if word in ("anyone", "requester"):
            continue
        if word.startswith("group:"):
            groups.add(word.removeprefix("group:"))
        elif word.startswith("S"):
            groups.add(word)
        else:
            people.add(word)
    return Answerers(
        requester="requester" in words or not (people or groups),
        anyone="anyone" in words,
        people=frozenset(people),
        groups=frozenset(groups),
    )


OLD_ANSWERERS_NAME = (
    "SLACK_ANSWERERS is the old name of BOT_ANSWERERS, which governs every surface; "
    "rename it (BOT_ANSWERERS wins when both are set)"
)


class PolicySettings(ComponentSettings):
    """Who may answer besides the requester and admins: approvers, anyone, or rules."""

    approvers: CsvList = Field(default_factory=list, alias="BOT_APPROVERS")
    anyone: bool = Field(False, alias="BOT_ANYONE_MAY_ANSWER")
    # Per interaction (``approval=U1 S2;ask_user=anyone``), on every surface; groups are
    # Slack user groups.
    rules: str = Field("", alias="BOT_ANSWERERS")
    # The old name, from when the rule looked Slack's own: still read, with a warning.
    old_rules: str = Field("", alias="SLACK_ANSWERERS")

    # Per interaction, the approval policy of its questions, as JSON:
    # ``{"approval": {"quorum": 2, "requester_may_answer": false}}`` (``bot.questions.quorum``).
    policies: str = Field("", alias="BOT_POLICIES")

    # Per interaction, the decisions its questions allow unless they name their own
    # (``approval=approve,reject,edit,respond``; ``bot/contract/edits.py``).
    allow: str = Field("", alias="BOT_ALLOW")

    @field_validator("allow")
    @classmethod
    def _allow_parse(cls, value: str) -> str:
        parse_allow(value)
        return value

    def allowed(self, name: str) -> tuple[str, ...]:
        """The decisions questions of interaction ``name`` allow by default."""
        return tuple(parse_allow(self.allow).get(name, DEFAULT_ALLOW))

    @field_validator("approvers")
    @classmethod
    def _approvers_canonical(cls, value: list[str]) -> list[str]:
        return [canonical(approver) for approver in value]

    @field_validator("rules", "old_rules")
    @classmethod
    def _rules_parse(cls, value: str) -> str:
        parse_rules(value)
        return value

    @field_validator("policies")
    @classmethod
    def _policies_parse(cls, value: str) -> str:
        parse_policies(value)
        return value

    def question_policies(self) -> dict[str, Policy]:
        """Each interaction's policy as its questions store it, defaults filled."""
        return parse_policies(self.policies)

    def build(
        self, *, admins: Collection[str], directory: Directory | None = None
    ) -> RequesterOrApprovers:
        """The policy these settings describe; ``admins`` may answer anything, as approvers do."""
        return RequesterOrApprovers(
            approvers=frozenset(compared(a) for a in admins) | frozenset(self.approvers),
            anyone=self.anyone,
            rules=parse_rules(self.rules or self.old_rules),
            directory=directory,
        )

    def warnings(self) -> list[str]:
        if self.old_rules:
            return [OLD_ANSWERERS_NAME]
        return []


def parse_allow(text: str) -> dict[str, list[str]]:
    """``BOT_ALLOW``: ``name=decision,decision;name=...``; ValueError naming what is wrong."""
    allow: dict[str, list[str]] = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        name, sep, decisions = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(
                f"{item!r} is not name=decisions; write e.g. approval=approve,reject,edit,respond"
            )
        listed = [d.strip() for d in decisions.split(",") if d.strip()]
        allow[name.strip()] = list(check_allow(listed))
    return allow


def parse_policies(text: str) -> dict[str, Policy]:
    """``BOT_POLICIES``: a JSON object of interaction name to ``Policy``; ValueError if not."""
    if not text.strip():
        return {}
    # The sentences are reported after the variable's name ("BOT_POLICIES: ..."),
    # so they do not name it again.
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(
            'is not JSON; give an object such as {"approval": {"quorum": 2}}'
        ) from None
    if not isinstance(raw, dict):
        raise ValueError("must be a JSON object of interaction name to policy")
    policies: dict[str, Policy] = {}
    for name, body in raw.items():
        try:
            policies[name] = Policy.model_validate(body, strict=False)
        except ValidationError as error:
            sentence = validation_sentence(error)
            raise ValueError(f"the policy of {name!r}: {sentence}") from None
    return policies


def check_policy_names(policies: Collection[str], registered: Collection[str]) -> None:
    """A BotError unless each interaction ``BOT_POLICIES`` names is one the agent registers.

    A misspelt name would otherwise be kept and never looked up: the quorum
    an admin wrote would silently not apply.
    """
    unknown = sorted(set(policies) - set(registered))
    if unknown:
        named = ", ".join(repr(name) for name in unknown)
        known = ", ".join(sorted(registered)) or "none"
        raise BotError(
            f"BOT_POLICIES: {named} is not an interaction this agent asks (it asks: {known}); "
            "use one of those names"
        )
