"""The shell commands beside ``python -m bot``: the admin commands and the API keys.

Each takes the composed settings (``bot.app``) and talks to the store
directly, as an operator at a shell does; ``bot.__main__`` dispatches to them.
"""
