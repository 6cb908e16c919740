"""Fixtures of the daemon tests: a daemon served on the test's emulated e-boards.

The plain helpers stay importable: ``tests/daemon/support.py`` (daemons in-process or as
processes, journal readers), ``config_file.py`` (``write_config``) and ``playing.py``
(games and rounds on e-boards).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from daemon.shell.app import Daemon
from drivers.emulator.device import EmulatedBoard
from tests.daemon.config_file import BoardSpec, write_config
from tests.daemon.support import running_daemon
from tests.waiting import wait_until


@dataclass(frozen=True, slots=True)
class Serve:
    """``async with serve(board, ..., time_control="6+0") as daemon``: a daemon in the
    test's process on its e-boards, entered once every one is online.

    An e-board given in place N is board N; a :class:`BoardSpec` is taken as it is (a
    board without an e-board, a clock the other way round). The other arguments are
    ``write_config``'s; the file is :attr:`config`, in the test's folder.
    """

    folder: Path

    @property
    def config(self) -> Path:
        """The configuration file the daemon was started with."""
        return self.folder / "round.toml"

    @contextlib.asynccontextmanager
    async def __call__(
        self,
        *boards: EmulatedBoard | BoardSpec,
        set_clocks: bool = False,
        online_within: float = 10.0,
        **config: Any,
    ) -> AsyncIterator[Daemon]:
        specs = [
            board if isinstance(board, BoardSpec) else BoardSpec(number, str(board.path))
            for number, board in enumerate(boards, 1)
        ]
        path = write_config(self.folder, specs, **config)
        async with running_daemon(path, set_clocks=set_clocks) as daemon:
            for spec in specs:
                if spec.port is not None:
                    online = daemon.sessions[spec.number].online.is_set
                    await wait_until(online, online_within, f"board {spec.number} online")
            yield daemon


@pytest.fixture
def serve(tmp_path: Path) -> Serve:
    """A daemon on the test's e-boards, its configuration in ``tmp_path`` (:class:`Serve`)."""
    return Serve(tmp_path)
