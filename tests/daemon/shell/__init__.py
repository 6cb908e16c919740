"""Tests of daemon/shell/.

Start-up, faults kept in their part, logs, clocks set, hostile clients.
"""
