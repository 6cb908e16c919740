"""Tests of the broadcast layer."""
