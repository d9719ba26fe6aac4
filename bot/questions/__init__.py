"""The bridge's question lifecycle, written once: ask, close, extend, repost, finish.

Each step decides what changes and hands one ``Write`` to the backend's
unit of work (``bot.questions.write.UnitOfWork``), which applies it in one
transaction and returns the messages it owes, for the process that wrote
the step to deliver. Kernel pauses and API questions both land here. This
package imports no backend.
"""
