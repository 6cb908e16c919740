"""The rule of tests/conftest.py: an ERROR log fails the test, unless it is expected."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CONFTEST = "from tests.conftest import no_unexpected_error_log, pytest_configure\n"
TESTS = """
import logging
import pytest

def test_quiet():
    logging.getLogger("x").warning("only a warning")

def test_error():
    logging.getLogger("x").error("boom")

@pytest.mark.error_log
def test_expected_error():
    logging.getLogger("x").error("boom")
"""


@pytest.mark.error_log  # the inner session's records reach this test's capture too
def test_an_error_log_fails_only_the_test_that_did_not_expect_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_rule=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)  # test_error: its call passed, then the check
    result.stdout.fnmatch_lines(["*test_error*unexpected ERROR log*"])
