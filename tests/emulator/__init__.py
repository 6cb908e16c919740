"""Tests of the DGT board + clock emulator."""
