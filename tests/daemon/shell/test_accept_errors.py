"""daemon/shell/limits.py: failed accepts, and their retries after the server closed."""

from __future__ import annotations

import asyncio
import logging

import pytest

from daemon.shell.limits import quiet_accept_errors


@pytest.mark.error_log(r"^asyncio: Exception in callback")  # only the case not quieted
async def test_a_retry_after_the_server_closed_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """asyncio retries a failed accept a second later; run after the server closed, the
    retry raises on the closed socket (Python 3.11). It is dropped; any other exception
    in a callback is still reported."""
    loop = asyncio.get_running_loop()
    quiet_accept_errors(loop)
    context = {
        "message": "Exception in callback BaseSelectorEventLoop._start_serving(<function>)",
        "exception": ValueError("Invalid file descriptor: -1"),
    }
    with caplog.at_level(logging.DEBUG):
        loop.call_exception_handler(context)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert any("after the server closed" in r.getMessage() for r in caplog.records)
        other = {"message": "Exception in callback f()", "exception": ValueError("boom")}
        loop.call_exception_handler(other)
        assert [r for r in caplog.records if r.levelno >= logging.ERROR]
