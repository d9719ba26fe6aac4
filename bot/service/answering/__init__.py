"""Answering a question: who may answer, the question a click is for,
the redeem and what it comes to.
"""
