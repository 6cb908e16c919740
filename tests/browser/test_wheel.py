"""The built wheel works alone: installed into a fresh venv outside the checkout,
``dgtcast demo`` shows live boards in the browser (chessboard, games and configuration all
come from inside the wheel).

The wheel's dependencies are not downloaded and installed again (half a minute of pip):
the fresh venv reaches the project's own site-packages through a ``.pth`` file holding
its path. A plain path line runs no ``.pth`` file there, so the checkout's editable
install (an import hook) stays out: the test checks that dgtcast's packages are imported
from the wheel's files in the fresh venv, and ``pip check`` that the wheel's declared
requirements are met."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import expect

from tests.browser.conftest import LOOP, Pages
from tests.browser.pagetools import last_move_squares

pytestmark = [pytest.mark.browser, pytest.mark.slow, LOOP]

ROOT = Path(__file__).resolve().parent.parent.parent
CHESSGROUND = ROOT / "node_modules" / "chessground"
#: What a wheel must hold besides the Python modules (setup.py copies them in).
ASSETS = (
    "broadcast/static/vendor/chessground/LICENSE",
    "broadcast/static/vendor/chessground/dist/chessground.min.js",
    "broadcast/static/vendor/chessground/assets/chessground.base.css",
    "broadcast/static/index.html",
    "daemon/demo_data/demo.toml",
    "daemon/demo_data/games/opera.pgn",
    "daemon/py.typed",
)
_SKIPPED = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "build", "dist", "*.egg-info", "var", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
)  # fmt: skip


def _run(*argv: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(arg) for arg in argv], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{argv[:3]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def build_wheel(work: Path) -> Path:
    """Build the wheel from a copy of the source (the checkout's build/ stays untouched),
    with the setuptools of the dev extras rather than one downloaded for an isolated build
    (``make wheel`` builds isolated)."""
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=_SKIPPED)
    shutil.copytree(CHESSGROUND, source / "node_modules" / "chessground")
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        work / "dist",
        ".",
        cwd=source,
    )
    (wheel,) = (work / "dist").glob("dgtcast-*.whl")
    return wheel


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def installed(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Path]:
    """A fresh venv, outside the checkout, with the wheel installed; its ``bin``."""
    if not (CHESSGROUND / "package.json").is_file():
        pytest.fail("node_modules/chessground is missing: run `make setup` (npm ci)")
    work = tmp_path_factory.mktemp("wheel")
    wheel = await asyncio.to_thread(build_wheel, work)
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in ASSETS if name not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert not any(name.startswith(("tests/", "bench/", "config/")) for name in names)
    venv = work / "venv"
    await asyncio.to_thread(_run, sys.executable, "-m", "venv", "--without-pip", venv, cwd=work)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    site = Path((await asyncio.to_thread(_run, python, "-I", "-c", PURELIB, cwd=work)).strip())
    pip = (sys.executable, "-m", "pip", "--python", python)
    await asyncio.to_thread(_run, *pip, "install", "-q", "--no-deps", "--no-index", wheel, cwd=work)
    # after the install: pip would otherwise see the checkout's dgtcast and try to remove it
    (site / "dgtcast-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    await asyncio.to_thread(_run, *pip, "check", cwd=work)
    imported = json.loads(await asyncio.to_thread(_run, python, "-I", "-c", WHERE, cwd=work))
    outside = {name: path for name, path in imported.items() if not Path(path).is_relative_to(site)}
    assert not outside, f"imported from outside the wheel's install in {site}: {outside}"
    yield bin_dir


#: The fresh venv's site-packages, printed by its python.
PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
#: Where the fresh venv's python imports dgtcast's packages from (the wheel's files).
WHERE = (
    "import json, base, broadcast, daemon, drivers;"
    "print(json.dumps({m.__name__: m.__file__ for m in (base, broadcast, daemon, drivers)}))"
)


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=5) as reply:
        body: bytes = reply.read()
        return body


async def test_the_installed_wheel_runs_the_demo_in_a_browser(
    installed: Path, tmp_path: Path, pages: Pages
) -> None:
    elsewhere = tmp_path / "elsewhere"  # no checkout, no config/ here
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    demo = await asyncio.create_subprocess_exec(
        str(installed / "dgtcast"), "demo", "--workdir", str(tmp_path / "work"),
        "--http-port", "0", "--speed", "20",
        cwd=elsewhere, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert demo.stdout is not None
    printed: list[str] = []
    try:
        base = None
        async with asyncio.timeout(60):
            while base is None:
                line = (await demo.stdout.readline()).decode()
                assert line, "the demo ended early:\n" + "".join(printed)
                printed.append(line)
                if match := re.search(r"viewer:\s+(http://\S+)/", line):
                    base = match.group(1)
        licence = await asyncio.to_thread(_get, f"{base}/vendor/chessground/LICENSE")
        assert b"GNU GENERAL PUBLIC LICENSE" in licence
        page = await pages.open(f"{base}/")
        card = '.card[data-board="1"]'
        await expect(page.locator(f"{card} cg-board piece").first).to_be_attached(timeout=30_000)
        # the emulated players move: the page draws the last move
        await page.wait_for_selector(f"{card} square.last-move", state="attached", timeout=60_000)
        assert len(await last_move_squares(page, card)) == 2
        status = json.loads(await asyncio.to_thread(_get, f"{base}/status.json"))
        assert any(board["moves"] for board in status["boards"])
        await pages.close()
    finally:
        if demo.returncode is None:
            demo.send_signal(signal.SIGINT)
        rest = await asyncio.wait_for(demo.stdout.read(), 30)
        await asyncio.wait_for(demo.wait(), 30)
    output = "".join(printed) + rest.decode()
    assert demo.returncode == 0, output
    assert "Traceback" not in output, output
    assert "demo stopped" in output
