"""Prizes: who wins what, from the standings and the prize rules (docs/prizes.md).

* :mod:`~daemon.prizes.lists`: prize groups, their places, who is eligible, and each
  group's conditional list (tied players share the total of the prizes they tie for).
* :mod:`~daemon.prizes.groups`: rating groups formed after a round by the regulation's
  rule, and birth dates as the TRF writes them.
* :mod:`~daemon.prizes.distribution`: one cash prize per player (removal, refill and
  pooling), trophies by countback.
* :mod:`~daemon.prizes.rules`: a section's prize regulations (from ``[prizes]``).
* :mod:`~daemon.prizes.ratings`: the rating that counts, from a CSV of ratings.
* :mod:`~daemon.prizes.event`: a section's prize race from its TRF and standings.
* :mod:`~daemon.prizes.report`: the ceremony's list, the treasurer's CSV, the JSON.

Pure: no file is opened here but by the caller. May import ``base`` and
``daemon.pairing``.

Exceptions::

    RatingsFileError    a ratings CSV that cannot be used: one line per problem
    ValueError          a prize group that cannot be (misuse, caught by the configuration)
"""
