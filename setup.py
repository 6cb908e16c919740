"""Build hook: put the viewer's chessboard and the demo's files inside the wheel.

Everything else about the package is in ``pyproject.toml``. A wheel must work alone
(``pipx install dgtcast-….whl``, then ``dgtcast demo``), so the build copies

* the chessboard from ``node_modules/chessground`` (``npm ci`` installs it from the lock
  file; its GPL-3.0 licence comes along) to ``broadcast/static/vendor/chessground/``;
* ``config/demo.toml`` and ``config/games/*.pgn`` to ``daemon/demo_data/``.

A checkout (``pip install -e``) reads both from where they are: nothing is copied.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CHESSGROUND = ROOT / "node_modules" / "chessground"
CHESSGROUND_FILES = (
    "LICENSE",
    "package.json",
    "dist/chessground.min.js",
    "assets/chessground.base.css",
    "assets/chessground.brown.css",
    "assets/chessground.cburnett.css",
)


class BuildWithAssets(build_py):
    """``build_py`` plus the files a wheel needs from outside the Python packages."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib)
        self._copy_chessground(target / "broadcast" / "static" / "vendor" / "chessground")
        self._copy_demo(target / "daemon" / "demo_data")

    def _copy_chessground(self, folder: Path) -> None:
        missing = [name for name in CHESSGROUND_FILES if not (CHESSGROUND / name).is_file()]
        if missing:
            raise SystemExit(
                f"building dgtcast needs the viewer's chessboard: {CHESSGROUND / missing[0]}"
                " is missing; run `npm ci` first (`make wheel` does)"
            )
        for name in CHESSGROUND_FILES:
            self._copy(CHESSGROUND / name, folder / name)

    def _copy_demo(self, folder: Path) -> None:
        self._copy(ROOT / "config" / "demo.toml", folder / "demo.toml")
        for game in sorted((ROOT / "config" / "games").glob("*.pgn")):
            self._copy(game, folder / "games" / game.name)

    def _copy(self, source: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


setup(cmdclass={"build_py": BuildWithAssets})
