"""The console's own sentences: how to call it, not what happened to a question.

Refusals of an answer come from ``bot.service.delivering.messages.refusal_text`` like on every
other surface; these only cover requests the console itself turns away,
and the labels the page shows beside a question.
"""

from __future__ import annotations

MAX_TEXT = 4000

SIGN_IN = "Sign in to the console with your own user name and password."
SIGN_IN_THROTTLED = (
    "Too many failed sign-ins came from your address; try again in {seconds} seconds."
)
TOO_MANY_ANSWERS = "Too many answers came from your address; try again in {seconds} seconds."
NOT_JSON = "Send console requests as JSON (Content-Type: application/json) from the console page."
OTHER_ORIGIN = "This request came from another site; use the console page this bot serves."
TOO_LARGE = "That request is too large; send a shorter message or answer."
TOO_DEEP = "That JSON is nested too deeply; send the flat object the console page sends."
TEXT_TOO_LONG = f"That message is too long; keep it under {MAX_TEXT:,} characters."
EMPTY_TEXT = "The message is empty; type what you want the bot to do."
BAD_CONVERSATION = (
    "Conversation ids are 1 to 40 lowercase letters, digits or dashes; start a new conversation."
)
UNSTORABLE = (
    "The {field} contains the character {code}, which the bridge does not store; remove it."
)
SEND_MESSAGE = 'Send a JSON object like {"text": "deploy web"}.'
SEND_ANSWER = 'Send a JSON object like {"token": "<the question\'s token>", "answer": {...}}.'
ANSWER_RECORDED = "Answer recorded."
UNEXPECTED = "The console hit an unexpected error; try again, and tell an admin if it persists."
NO_SUCH_FILE = "There is no such console file; open the console at / instead."
TOO_MANY_STREAMS = (
    "Too many console pages are open on this bot; close a few tabs, and this one reconnects."
)
TOO_MANY_STREAMS_HERE = (
    "You have too many console pages open; close a few tabs, and this one reconnects."
)


# What the page itself writes; served inside index.html so the script holds no sentences.
PAGE = {
    "title": "Bot console",
    "conversations": "Conversations",
    "new_conversation": "New conversation",
    "menu": "Conversations",
    "menu_waiting": "Conversations ({n} waiting)",
    "signed_in_as": "Signed in as {name}",
    "local_operator": "You are {name} (local console)",
    "waiting": "{n} waiting",
    "waiting_on_you": "{n} waiting on you",
    "runs": "{n} runs",
    "run": "1 run",
    "untitled": "New conversation",
    "empty": "Nothing here yet. Ask the bot something, e.g. deploy web.",
    "empty_pick": (
        "Nothing here yet. Pick a conversation under Conversations, "
        "or ask the bot something, e.g. deploy web."
    ),
    "loading": "Loading…",
    "menu_close": "Close conversations",
    "working": "Working…",
    # After an agents-API question closes: its outcome is the end, and the agent has it.
    "agent_told": "The agent that asked ({name}) has been told.",
    "message_label": "Message",
    "message_hint": "Ask the bot, e.g. deploy web (Enter sends, Shift+Enter adds a line)",
    "send": "Send",
    "submit": "Submit",
    "close": "Close",
    "comment": "Comment (optional)",
    "approve": "Approve",
    "reject": "Reject",
    "edit": "Edit…",
    "approve_changes": "Approve with changes",
    "edit_kept": "Kept as asked (not editable here): {names}",
    "respond": "Respond…",
    "respond_label": "Message to the agent (the action does not run)",
    "respond_send": "Send instead",
    "approved_changes_by": "Approved with changes by {name}",
    "responded_by": "Answered instead by {name}",
    "changes": "Changes",
    "said_instead": "Said instead",
    "approve_title": "Approve: {action}",
    "risk": "{risk} risk",
    "asked_by": "Asked by {name}",
    "may_answer": "{who}",
    "expires": "Expires {when}",
    "not_yours": "{who} You can read this question but not answer it.",
    "answered_by": "Answered by {name}",
    "approved_by": "Approved by {name}",
    "rejected_by": "Rejected by {name}",
    "expired": "Expired without an answer",
    "cancelled_by": "Cancelled by {name}",
    "cancel_reason": "Reason: {reason}",
    "admin_link": "Admin: every open question",
    "bot_asks": "The bot asks ({name})",
    "bot_asked": "The bot asked ({name})",
    "question": "Question",
    "form_title": "The bot asks you to fill in a form",
    "yes": "Yes",
    "no": "No",
    "choose": "Choose…",
    "none_chosen": "(none)",
    "required": "required",
    "answer_json": "Answer (JSON)",
    "offline": "The console cannot reach the bot; check that it is running, then try again.",
    "not_json": "That is not valid JSON; write the answer as a JSON object.",
    "status_error": "The bot answered with status {status}; try again.",
    "live": "Live",
    "down": "Reconnecting…",
    "approved": "✓ Approved",
    "rejected": "✗ Rejected",
    "reconnecting": "Connection lost; reconnecting…",
    "now": "just now",
    "in": "in {span}",
    "ago": "{span} ago",
}
