"""Whole games and events through every room of the daemon, on emulated boards."""
