"""Tests of daemon/round/.

The round core, its snapshots, round changes, gaps, mode 23, a board's PGN.
"""
