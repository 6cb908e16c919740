"""The tests' own harness: a dgtcast process started by a test does not outlive it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.shared_data import ROOT
from tests.waiting import wait_until

#: A test's process that starts ``dgtcast emulate`` through the harness, prints its pid
#: and then dies at once, without any clean-up (as a killed worker does).
_ABANDONED = """
import asyncio, os, sys
from pathlib import Path
from tests.serving import dgtcast, spawn_dgtcast

async def main():
    process = await spawn_dgtcast(dgtcast("emulate", "--pgn", sys.argv[1]), log=Path(sys.argv[2]))
    print(process.pid, flush=True)
    os._exit(0)

asyncio.run(main())
"""


@pytest.mark.skipif(sys.platform != "linux", reason="prctl(PR_SET_PDEATHSIG) is Linux's")
async def test_a_process_started_by_a_test_dies_with_it(tmp_path: Path) -> None:
    test = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _ABANDONED, str(ROOT / "config" / "games" / "opera.pgn"),
        str(tmp_path / "emulate.log"),
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(test.communicate(), 60)
    pid = int(output)

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"  # a zombie: dead

    await wait_until(gone, 30, f"dgtcast emulate ({pid}) ended with the test's process")
