"""The registered interactions beyond ``ask_user``: an approval and a form.

Each is a deployment's own typed interaction on the human capability
(``bot.human``): its payload and answer models, its registration and its tool.
"""
