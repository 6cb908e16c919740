"""Tests of daemon/session/.

Board sessions, lost and flooding messages, the memory read after a gap.
"""
