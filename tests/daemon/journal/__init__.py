"""Tests of daemon/journal/.

The SQLite journal, its identity and integrity, a full disk, kill -9 mid-move.
"""
