"""Tests of daemon/config/: the configuration's checks, time controls, [lichess], refused starts."""
