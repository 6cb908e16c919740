"""Tests of daemon/console/: the live console, its view and its keys."""
