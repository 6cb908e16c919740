"""Tests of relays and of daemons sharing an MQTT broker (issue 8)."""
