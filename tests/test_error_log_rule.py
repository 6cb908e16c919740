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

@pytest.mark.error_log(r"^x: boom$")
def test_expected_error_by_pattern():
    logging.getLogger("x").error("boom")

@pytest.mark.error_log(r"^x: boom$")
def test_other_error_than_the_pattern():
    logging.getLogger("x").error("bang")
"""


@pytest.mark.error_log  # the inner session's records reach this test's capture too
def test_an_error_log_fails_only_the_test_that_did_not_expect_it(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_rule=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, errors=2)  # test_error, test_other_error...: call passed
    result.stdout.fnmatch_lines(
        ["ERROR*::test_error - Failed*", "ERROR*::test_other_error_than_the_pattern - Failed*"]
    )
