"""Options several commands share, spelled the same everywhere.

"Port" means a serial port, as in ``[[boards]] port`` and ``dgtcast boards --port``; the
daemon's HTTP port is ``--http-port`` (``[server] port`` in the file). The old spelling
``--port N`` of ``run``, ``round``, ``demo`` and ``relay`` still works and says it is
deprecated.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["add_http_port", "board_number"]


class _OldHttpPort(argparse.Action):
    """``--port N`` where ``--http-port N`` is meant: accepted, with a note on stderr."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(
            f"dgtcast: {option_string} {values} is deprecated here: write --http-port"
            f" {values} (--port names serial ports, as in `dgtcast boards --port`)",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_http_port(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--http-port N`` (``args.http_port``, None when not given), and the old ``--port``."""
    parser.add_argument("--http-port", type=int, metavar="N", help=help_text)
    parser.add_argument(
        "--port", dest="http_port", type=int, action=_OldHttpPort, help=argparse.SUPPRESS
    )


def board_number(text: str) -> int:
    """A board number as an argument: ASCII digits, 1 to 9999 (``int`` would also take
    ``٣``, ``+3``, `` 3`` and ``3_0``).

    Raises:
        argparse.ArgumentTypeError: not one (argparse prints it and exits with code 2).
    """
    if not (text.isascii() and text.isdigit() and len(text) <= 4 and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"a board number is 1 to 9999 in digits 0-9, not {text!r}")
    return int(text)
