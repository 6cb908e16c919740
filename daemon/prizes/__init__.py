"""Prizes: who wins what, from the standings and the prize rules (tournament-rules.md §6).

* :mod:`~daemon.prizes.lists`: prize groups, their places, who is eligible, and each
  group's conditional list (tied players share the total of the prizes they tie for).
* :mod:`~daemon.prizes.groups`: rating groups formed after a round by the regulation's
  rule, and birth dates as the TRF writes them.
* :mod:`~daemon.prizes.distribution`: one cash prize per player (removal, refill and
  pooling), trophies by countback.

Pure: no file is opened here but by the caller. May import ``base`` and
``daemon.pairing``.

Exceptions::

    ValueError          a prize group that cannot be (misuse, caught by the configuration)
"""
