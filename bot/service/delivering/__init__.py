"""Delivering what is owed to people: the outbox, the surface port,
redraws, nudges, and every sentence a person sees.
"""
