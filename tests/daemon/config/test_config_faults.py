"""Configuration edges through ``dgtcast run`` (issue 17.8 and 17.11): one line, exit 2.

A ``[pairing]`` table that could never hand a result over, TOML nested past Python's
recursion limit and numbers far past anything a tournament has are refused at start, in
one line naming the key, and nothing is opened.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.daemon.support import BoardSpec, refused_start, write_config

HUGE = "100000000000000000000"  # 10^20

CASES: list[tuple[str, str, str, str]] = [
    # (id, replace in the written file, by, the expected line after "FILE: ")
    (
        "pairing-without-pairings",
        "[storage]",
        '[pairing]\ntrf = "tournament.trf"\n\n[storage]',
        "pairing.pairings: required with [pairing] (the pairing program's output for this"
        " round): without it no confirmed result would reach the TRF",
    ),
    ("round-1e20", "round = 2", f"round = {HUGE}", f"event.round: must be at most 999, got {HUGE}"),
    (
        "default-time-1e20-hours",
        'default_time = "30m"',
        f'default_time = "{HUGE}h"',
        f'event.default_time: must be at most 24h, got "{HUGE}h"',
    ),
    (
        "time-control-1e23-seconds",
        'time_control = "180+2"',
        'time_control = "100000000000000000000000+2"',
        'event.time_control: invalid time control "100000000000000000000000+2":'
        " a DGT clock shows at most 9:59:59",
    ),
    (
        "deep-nesting",
        "[storage]",
        "[extra]\nx = " + "[" * 50_000 + "]" * 50_000 + "\n\n[storage]",
        "TOML arrays or inline tables nested too deeply to read",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_config_edge_is_one_line_and_exit_2(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None)])
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new, 1))
    (tmp_path / "tournament.trf").write_text("012 Test Open\n")
    assert refused_start(config).splitlines() == [f"{config}: {expected}"]
    assert not (tmp_path / "journal.db").exists()


def test_a_pairing_file_that_does_not_exist_is_named(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None)])
    config.write_text(
        config.read_text().replace(
            "[storage]", '[pairing]\ntrf = "gone.trf"\npairings = "round2.txt"\n\n[storage]'
        )
    )
    (tmp_path / "round2.txt").write_text("1\n1 2\n")
    assert refused_start(config).splitlines() == [
        f"{config}: pairing.trf: no such file: {tmp_path / 'gone.trf'}"
    ]
