"""Tests of the DGT sans-I/O protocol (drivers/dgt, layer L0)."""
