"""``python -m adapters.temporal.receiver``: the webhook receiver on its own, beside any
number of workers (the receiver itself: ``adapters.temporal._receiver``).

A module of its own because the package imports the receiver: run with ``-m``, a module
the package has already imported would run as a second copy (and runpy warns so).
"""

from adapters.temporal._receiver import Receipt, Receiver, main, serve_receiver

__all__ = ["Receipt", "Receiver", "main", "serve_receiver"]

if __name__ == "__main__":
    main()
