"""Email: a question mailed to each route's recipient, answered on the question's page.

The adapter renders a question as a message (``_message``, pure) and sends it
through SMTP (``_surface``); whether a link is good, who may answer and
whether an answer fits are decided in ``bot/`` (the page, ``bot.api``).
"""

from adapters.email._message import Mailed, message_id, question_message
from adapters.email._surface import EmailSurface
from adapters.email.settings import EmailSettings, SmtpServer, parse_smtp_url

__all__ = [
    "EmailSettings",
    "EmailSurface",
    "Mailed",
    "SmtpServer",
    "message_id",
    "parse_smtp_url",
    "question_message",
]
