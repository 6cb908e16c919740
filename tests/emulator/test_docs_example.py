"""The Python example of docs/emulator.md ("Using it from Python") runs as written.

It failed as written (issue 33, item 6): ``ClockSettings`` takes its fields by keyword
and ``path`` must be a ``Path``. The block is run in its own process from the checkout's
root (the example reads ``config/games/opera.pgn``), with its ``/tmp`` path moved into
the test's folder.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_the_python_example_of_the_emulator_docs_runs_as_written(tmp_path: Path) -> None:
    (block,) = _python_blocks((ROOT / "docs" / "emulator.md").read_text())
    link = tmp_path / "ttyDGT-example"
    code = block.replace('"/tmp/ttyDGT-example"', repr(str(link)))
    assert code != block, "the example names its port path"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(link)]
    assert not link.exists(), "the link goes with the board"
