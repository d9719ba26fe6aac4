"""Every sentence a person sees, in one place, the same on every surface."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, assert_never

from bot.contract.answers import Answer, ApprovalDecision, AskUserAnswers
from bot.contract.edits import diff_text
from bot.questions.quorum import MayAnswer, rejected_on_expiry
from bot.questions.records import Question, QuestionStatus
from bot.service.answering import outcomes

LATE_ANSWER_RECORDED = "Your answer was recorded; it took longer than usual, nothing else to do."
NOT_STARTED = "The bot could not record your message just now; nothing was started, try again."
# BOT_AGENT=none: no agent reads chat messages; agents ask their questions over /v1 or MCP.
AGENTS_ONLY = (
    "This bridge takes questions from agents, not chat messages: nothing was started, but "
    "the questions your agents ask still reach you here."
)


def when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def refusal_text(refusal: outcomes.Refusal) -> str:
    """One sentence: what happened and what to do."""
    match refusal:
        case outcomes.TokenInvalid():
            return "This answer link is not valid; answer from the latest message the bot posted."
        case outcomes.TokenExpired():
            return "This question has expired; ask the bot again to get a fresh one."
        case outcomes.AlreadyAnswered(by=by, at=at):
            return f"This question was already answered by {by} at {when(at)}; nothing changed."
        case outcomes.AlreadyCancelled(by=by, at=at):
            return f"This question was cancelled by {by} at {when(at)}; nothing changed."
        case outcomes.ScopeMismatch():
            # The scope is the channel (or chat) as well as the workspace or tenant, and
            # which of them differs is not known here: name what is true of both.
            return "This question was asked in another conversation; answer it where it was asked."
        case outcomes.NotAllowedToAnswer():
            return "This question is not yours to answer; ask the person who started the run."
        case outcomes.AnswerInvalid(fields=fields):
            detail = "; ".join(f"{name}: {problem}" for name, problem in fields.items())
            return f"That answer does not fit the question ({detail}); correct it and submit again."
        case outcomes.StoreUnavailable():
            return "The bot could not record your answer just now; nothing changed, try again."
        case outcomes.SelfApproval():
            return (
                "You requested this, and its policy lets only someone else approve or reject it;"
                " nothing changed."
            )
        case outcomes.AlreadyVoted():
            return "You already answered this question; nothing changed, it waits for the others."
        case outcomes.Counted(
            decision=decision, approvals=approvals, rejections=rejections, quorum=k
        ):
            if decision == "edit" and refusal.restarted:
                return (
                    f"Your edit ({refusal.changes}) is a new proposal: {approvals} of {k} "
                    f"approved it; it needs {k}. Those who approved other arguments may "
                    "answer again."
                )
            if decision == "edit":
                return (
                    f"Your approval with changes ({refusal.changes}) is counted: "
                    f"{approvals} of {k} approved; it needs {k}."
                )
            if decision == "approve" and refusal.restarted:
                return (
                    "Your approval is of the arguments as asked, a new proposal after an "
                    f"edit: {approvals} of {k} approved them; it needs {k}. Those who "
                    "approved other arguments may answer again."
                )
            if decision == "approve":
                return f"Your approval is counted: {approvals} of {k} approved; it needs {k}."
            return f"Your rejection is counted: {rejections} of {k} rejected; it needs {k}."
        case outcomes.Replayed():
            return "This answer arrived already and was dealt with then; nothing changed."
        case _:
            assert_never(refusal)


def nudge_text(
    nudge: Mapping[str, Any], people: Sequence[str], groups: Sequence[str], *, unnamed: int = 0
) -> str:
    """A reminder or an escalation ping; ``people`` and ``groups`` as the surface mentions them.

    ``unnamed``: people the surface cannot mention by name (a Teams id whose name
    it has not seen); counted, never shown as raw ids.
    """
    names = [*people, *groups]
    who = ", ".join(names)
    if nudge.get("kind") == "escalated":
        level = nudge.get("level", 1)
        if not who and unnamed:
            more = "1 more person" if unnamed == 1 else f"{unnamed} more people"
            return f"Escalated to level {level}: {more} may answer this question now."
        if not who:
            return f"Escalated to level {level}: this question still waits for an answer."
        return f"Escalated to level {level}: {who}, this question now waits for you too."
    if not who:
        return "Reminder: this question still waits for an answer."
    return f"Reminder: {who}, this question still waits for your answer."


def level_text(level: int) -> str:
    """What a posted question shows once its escalation ladder has been climbed; "" before."""
    return f"Escalated to level {level}." if level > 0 else ""


def answered_text(by: str, at: float) -> str:
    return f"Answered by {by} at {when(at)}."


def expired_text(at: float, *, rejected: bool = False) -> str:
    """An expiry, and the rejection it stood for when the question's policy fails closed."""
    if rejected:
        return f"Expired at {when(at)} without an answer: rejected, as its policy says."
    return f"Expired at {when(at)} without an answer."


def cancelled_text(by: str, at: float, reason: str = "") -> str:
    return cancelled_line(by, when(at), reason)


def closed_text(record: Question, *, answered: Callable[[Question, float], str]) -> str | None:
    """How a question ended and by whom, None while it is open. ``answered`` words an
    answer: the one line each page words its own way (an approval's decision)."""
    at = record.closed_at or 0.0
    match record.status:
        case QuestionStatus.OUTSTANDING:
            return None
        case QuestionStatus.ANSWERED:
            return answered(record, at)
        case QuestionStatus.EXPIRED:
            return expired_text(at, rejected=rejected_on_expiry(record))
        case QuestionStatus.CANCELLED:
            return cancelled_text(record.closed_by, at, record.cancel_reason)
        case _:
            assert_never(record.status)


# Slack and Teams redraw a closed question with one of these lines; ``at`` is
# already formatted by the surface (Slack's <!date> shows the reader's zone).


def approved_line(by: str, at: str) -> str:
    return f"Approved by {by} at {at}."


def rejected_line(by: str, at: str, comment: str = "") -> str:
    return f"Rejected by {by} at {at}: {comment}" if comment else f"Rejected by {by} at {at}."


def answered_line(by: str, at: str, summary: str) -> str:
    return f"Answered by {by} at {at}: {summary}" if summary else f"Answered by {by} at {at}."


def cancelled_line(by: str, at: str, reason: str = "") -> str:
    because = f" Reason: {reason}" if reason else ""
    return f"Cancelled by {by} at {at}.{because}"


def asked_line(requester: str, audience: str, expires: str) -> str:
    return f"Asked for {requester}. {audience} Expires {expires}."


def person_text(person: str, names: Mapping[str, str] | None = None) -> str:
    """A person as a question names them: the name their surface gave, where the bridge has
    seen one (``names``, by id); else their id, shortened where it is long: a Teams person
    by the first eight characters of their object id ("Teams user 3f2a9c1e…"), a Slack
    person by their user id, a console or email person by their name or address."""
    known = (names or {}).get(person)
    if known:
        return known
    surface, _, rest = person.partition(":")
    own = rest.rpartition(":")[2]
    match surface:
        case "teams" if own:
            return f"Teams user {own[:8]}…" if len(own) > 8 else f"Teams user {own}"
        case "slack" if own:
            return f"Slack user {own}"
        case "console" | "email" if rest:
            return rest
    return person


def only_they_may_answer(who: str) -> str:
    """Who may answer, as a question shows it and as a refused person is told."""
    return f"Only {who} can answer this."


EXPIRED_LINE = "Expired, no answer."
EXPIRED_REJECTED_LINE = "Expired without an answer: rejected, as its policy says."
QUESTION_CLOSED = "This question is no longer open; answer the latest one the bot posted."
ANYONE_MAY_ANSWER = "Anyone here can answer this."
RUN_FAILED = "The run stopped on an error; an admin can see the details in the audit log."
BOT_MISCONFIGURED = "The bot is misconfigured; an admin has been told what to fix."


def decided_text(decision: str, by: str, at: float, comment: str = "") -> str:
    """An approval's outcome, as the closed message shows it."""
    verb = "Approved" if decision == "approve" else "Rejected"
    return f"{verb} by {by} at {when(at)}" + (f": {comment}" if comment else ".")


def edited_line(by: str, at: str, changes: str) -> str:
    """An approval approved with changes: ``changes`` as ``bot.contract.edits.diff_text``."""
    return f"Approved by {by} with changes at {at}: {changes}"


def responded_line(by: str, at: str, message: str) -> str:
    """An approval answered in the tool's place: the action did not run."""
    return f"Answered instead of run by {by} at {at}: {message}"


def approval_line(answer: Answer | None, by: str, at: str, shown: Callable[[str], str]) -> str:
    """An approval's closed line on every surface: approved, approved with changes (a short
    diff of the arguments), answered instead of run, or rejected (an answer that is no
    decision, such as a purged one, reads as a rejection without words). ``shown`` is the
    surface's ``display``: the agent's arguments and the person's words pass it, the line's
    own words do not."""
    if not isinstance(answer, ApprovalDecision):
        return rejected_line(by, at, shown(""))
    match answer.decision:
        case "approve":
            return approved_line(by, at)
        case "edit":
            changes = diff_text(answer.original_arguments or {}, answer.arguments or {})
            return edited_line(by, at, shown(changes))
        case "respond":
            return responded_line(by, at, shown(answer.message or ""))
        case "reject":
            return rejected_line(by, at, shown(answer.comment))
        case _:
            assert_never(answer.decision)


def ask_user_replies(answer: Answer | None) -> str:
    """An ``ask_user`` answer in one line: each reply (the chosen joined by commas), in the
    order asked, separated by semicolons; '' for an answer that is not one."""
    if not isinstance(answer, AskUserAnswers):
        return ""
    return "; ".join(
        ", ".join(map(str, reply)) if isinstance(reply, list) else str(reply)
        for reply in answer.answers.values()
    )


def who_may_answer_text(may: MayAnswer, names: Sequence[str]) -> str:
    """Who may answer a question, on every surface and in a refusal: ``names`` are ``may``'s
    people (``MayAnswer.persons``) and groups, each as the surface draws them (a Slack
    mention, a name seen on Teams); admins and approvers always may, and are not named."""
    if may.anyone:
        return ANYONE_MAY_ANSWER
    return only_they_may_answer(" or ".join(names) if names else "an admin")


def group_text(group: str) -> str:
    """A group of people (a Slack user group) on a surface that cannot mention it."""
    return f"group {group}"


def expires_text(at: float) -> str:
    return f"Expires {when(at)}."


# The HTTP server's own refusals, for any route (console, Slack, Teams, ops).
WRONG_HOST = "This bot does not answer to that host name; open it at the address it was set up on."
# A sentence about tokens, not a token (S105 reads the name).
TOKEN_IN_URL = "Answer tokens are never accepted in a URL; answer from the message or page instead."  # noqa: S105
BODY_TOO_SLOW = "The request body did not arrive in time; send it again."
BODY_TOO_LARGE = "That request is too large; send a shorter one."
JSON_TOO_DEEP = "That JSON is nested too deeply; send a flatter object."
NO_SUCH_ROUTE = "There is no such API route; check the path against docs/api.md."
WRONG_METHOD = "That API route does not take this method; check docs/api.md for how to call it."
SIGN_IN_NEEDED = "Sign in with your console user name and password."
SIGN_IN_THROTTLED = (
    "Too many failed sign-ins came from your address; try again in {seconds} seconds."
)

# Admin commands (bot.admin); every surface shows these same sentences.
ADMINS_ONLY = "Only admins can use that command; ask an admin, or type `help` for yours."
NOT_AN_ADMIN = (
    "Admin commands are for the bot's admins. To ask the bot something, just write to it; "
    "answer its questions from their messages."
)


def question_not_found(interrupt_id: str) -> str:
    return f"There is no question {interrupt_id!r}; copy its id from `pending`."


def run_not_found(run_id: str) -> str:
    return f"There is no run {run_id!r}; copy its id from `show <question-id>`."


def question_not_open(interrupt_id: str, status: str) -> str:
    return f"Question {interrupt_id!r} is {status}, not open; nothing changed."


def extend_too_far(latest: float) -> str:
    return (
        f"That is past the longest a question may stay open ({when(latest)}); "
        "extend by less, or cancel and ask again."
    )


def cancelled_by_admin(interrupt_id: str, by: str) -> str:
    return f"Cancelled {interrupt_id} as {by}; its run resumes without an answer."


def resent_question(interrupt_id: str) -> str:
    return f"Posting {interrupt_id} again; the old message will point to the new one."


def already_done(command: str, interrupt_id: str) -> str:
    return f"That {command} of {interrupt_id} was already done; nothing changed again."


def purged_questions(count: int, before: str) -> str:
    closed = "question" if count == 1 else "questions"
    return (
        f"Purged {count} {closed} closed before {before} (UTC): their ids, status, times "
        "and who decided are kept; what was asked and answered is gone."
    )


def extended_question(interrupt_id: str, expires_at: float) -> str:
    return f"{interrupt_id} now expires at {when(expires_at)}."


def moved_text(link: str) -> str:
    return f"This question was posted again: {link}. Answer it there."


ADMIN_COMMANDS_UNAVAILABLE = "Admin commands are not available yet; the bot is still starting."
WORKING_ON_IT = "Working on it; the answer follows here in a moment."
