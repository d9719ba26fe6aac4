"""The one base error; every error of ours says what to do next."""


class BotError(Exception):
    """Base of every error this package raises on purpose."""
