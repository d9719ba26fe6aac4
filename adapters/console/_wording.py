"""The console's own sentences: how to call it, not what happened to a question.

Refusals of an answer come from ``bot.messages.refusal_text`` like on every
other surface; these only cover requests the console itself turns away.
"""

from __future__ import annotations

MAX_TEXT = 4000
MAX_NAME = 40

SIGN_IN = "The console needs its password; sign in with any user name and that password."
NOT_JSON = "Send console requests as JSON (Content-Type: application/json) from the console page."
OTHER_ORIGIN = "This request came from another site; use the console page this bot serves."
TOO_LARGE = "That request is too large; send a shorter message or answer."
TEXT_TOO_LONG = f"That message is too long; keep it under {MAX_TEXT:,} characters."
EMPTY_TEXT = "The message is empty; type what you want the bot to do."
BAD_CONVERSATION = (
    "Conversation ids are 1 to 40 lowercase letters, digits or dashes; start a new conversation."
)
SEND_MESSAGE = 'Send a JSON object like {"text": "deploy web", "name": "Ana"}.'
SEND_ANSWER = (
    'Send a JSON object like {"token": "<the question\'s token>", "answer": {...}, "name": "Ana"}.'
)
ANSWER_RECORDED = "Answer recorded."
UNEXPECTED = "The console hit an unexpected error; try again, and tell an admin if it persists."
NO_SUCH_FILE = "There is no such console file; open the console at / instead."
