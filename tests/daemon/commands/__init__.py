"""Tests of daemon/cli.py and daemon/commands/: the dgtcast command line."""
