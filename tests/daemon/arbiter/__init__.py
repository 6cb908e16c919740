"""Tests of daemon/arbiter/.

The alert engine, alerts raised and resolved by a real daemon, flag forfeits.
"""
