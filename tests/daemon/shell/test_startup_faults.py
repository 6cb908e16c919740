"""Start-up faults through the real command line: one line, exit code 2, nothing hangs.

A busy port (a second daemon, ``make demo`` with the port taken) or a host name that
does not resolve must not leave the daemon waiting for a ready signal that never comes
(issue 17.1); Ctrl-C and SIGTERM stop it at every stage of its start-up.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from tests.daemon.config_file import TomlTable
from tests.daemon.support import BoardSpec, write_config
from tests.serving import dgtcast, dgtcast_run

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port some other program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


async def _finish(argv: Sequence[str], cwd: Path, within: float = 60.0) -> tuple[int, str, str]:
    """Run ``argv`` to its end; the test fails (and the process is killed) past ``within``."""
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async with asyncio.timeout(within):
            out, err = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        pytest.fail(f"{' '.join(argv)} still running after {within} s: it hangs")
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def _config(
    folder: Path, *, host: str = "127.0.0.1", tables: Mapping[str, TomlTable] | None = None
) -> Path:
    return write_config(folder, [BoardSpec(1, None)], host=host, tables=tables)


async def test_a_busy_port_gives_one_line_and_exit_2(tmp_path: Path, busy_port: int) -> None:
    config = _config(tmp_path)
    argv = dgtcast_run(config, port=busy_port)
    code, _, err = await _finish(argv, tmp_path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"dgtcast: cannot listen on 127.0.0.1:{busy_port}:"
        " the port is in use (another dgtcast, or another program, listens there)"
    ]
    # the round has not started, and the start that was refused leaves nothing behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["round.toml"]  # noqa: ASYNC240


async def test_a_second_daemon_beside_a_running_one_exits_2(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _config(tmp_path / "a"), _config(tmp_path / "b")
    running = await asyncio.create_subprocess_exec(
        *dgtcast_run(first),
        cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert running.stdout is not None
    try:
        port = None
        async with asyncio.timeout(30):
            while port is None:
                line = (await running.stdout.readline()).decode()
                assert line, "the first daemon ended before printing its URLs"
                if line.startswith("viewer:"):
                    port = int(line.rsplit(":", 1)[1].strip(" /\n"))
        argv = dgtcast_run(second, port=port)
        code, _, err = await _finish(argv, tmp_path)
        assert code == 2
        assert f"cannot listen on 127.0.0.1:{port}: the port is in use" in err
        assert len(err.strip().splitlines()) == 1
        assert running.returncode is None, "the first daemon keeps serving"
        left = sorted(p.name for p in (tmp_path / "b").iterdir())
        assert left == ["round.toml"], "no empty journal left behind"
    finally:
        running.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            assert await running.wait() == 0


async def test_the_demo_with_its_port_taken_exits_2(tmp_path: Path, busy_port: int) -> None:
    text = (ROOT / "config" / "demo.toml").read_text()
    text = text.replace("/tmp/dgtcast-demo", str(tmp_path / "ports"))
    text = text.replace('"../var/', f'"{tmp_path}/var/')
    config = tmp_path / "demo.toml"
    config.write_text(text)
    argv = dgtcast("demo", "--config", str(config), "--http-port", str(busy_port))
    code, _, err = await _finish(argv, tmp_path)
    assert code == 2
    assert err.strip().splitlines() == [
        f"dgtcast demo: cannot listen on 127.0.0.1:{busy_port}:"
        " the port is in use (another dgtcast, or another program, listens there)"
        " (--http-port chooses another)"
    ]


def _isolated_network() -> list[str]:
    """A prefix running a command in a new network namespace (only a loopback, down)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare(1) is not installed")
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {probe.stderr.decode().strip()}")
    return [unshare, "-n"]


async def test_an_unresolvable_host_gives_one_line_and_exit_2(tmp_path: Path) -> None:
    # In a namespace of its own no name server is reachable: the lookup fails at once and
    # no query leaves the machine.
    prefix = _isolated_network()
    config = _config(tmp_path, host="no-such-host.invalid")
    code, _, err = await _finish([*prefix, *dgtcast("run", "--config", str(config))], tmp_path)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        "dgtcast: cannot listen on no-such-host.invalid:8080: the host name does not resolve"
    )


async def test_sigterm_stops_a_daemon_still_waiting_for_its_broker(tmp_path: Path) -> None:
    """The ownership check waits on a broker that accepts but never answers."""
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen()
        broker = mute.getsockname()[1]
        mqtt: TomlTable = {"host": "127.0.0.1", "port": broker, "daemon_id": "hall-a"}
        config = _config(tmp_path, tables={"mqtt": mqtt})
        process = await asyncio.create_subprocess_exec(
            *dgtcast_run(config),
            cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        loop = asyncio.get_running_loop()
        mute.setblocking(False)
        async with asyncio.timeout(30):
            connection, _ = await loop.sock_accept(mute)  # the check has started
        with connection:
            process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(30):
                    out, _ = await process.communicate()
            except TimeoutError:
                process.kill()
                await process.wait()
                pytest.fail("SIGTERM did not stop the daemon during its start-up")
    assert process.returncode == 0
    assert "viewer:" not in out.decode()
    assert not (tmp_path / "journal.db").exists(), "stopped before opening anything"
