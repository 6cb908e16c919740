"""Tests of daemon/links/.

The outputs (MQTT, PGN folder, lichess) and the pairing program's files.
"""
