"""Tests of the engine's evaluation of public positions (``[analysis]``)."""
