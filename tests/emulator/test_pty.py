"""The virtual serial cable: raw bytes both ways, a stable path, unplug and replug."""

from __future__ import annotations

import os
import select
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivers.emulator.pty import VirtualSerialPort

ALL_BYTES = bytes(range(256))


def read_exactly(fd: int, count: int) -> bytes:
    data = b""
    while len(data) < count:
        select.select([fd], [], [], 5.0)
        data += os.read(fd, count - len(data))
    return data


@pytest.fixture
def port(tmp_path: Path) -> Iterator[VirtualSerialPort]:
    opened = VirtualSerialPort(tmp_path / "dgt")
    opened.open()
    yield opened
    opened.close()


def test_path_is_a_symlink_to_a_terminal(port: VirtualSerialPort) -> None:
    assert port.path.is_symlink()
    assert os.readlink(port.path) == port.slave_name
    fd = os.open(port.path, os.O_RDWR | os.O_NOCTTY)
    try:
        assert os.isatty(fd)
    finally:
        os.close(fd)


def test_every_byte_passes_unchanged_both_ways(port: VirtualSerialPort) -> None:
    # Raw mode: no echo, no CR/LF translation, no ^C signal, no line buffering.
    fd = os.open(port.path, os.O_RDWR | os.O_NOCTTY)
    try:
        os.write(fd, ALL_BYTES)
        assert read_exactly(port.master_fd, 256) == ALL_BYTES
        os.write(port.master_fd, ALL_BYTES)
        assert read_exactly(fd, 256) == ALL_BYTES
        assert select.select([port.master_fd], [], [], 0.05)[0] == []  # nothing echoed
    finally:
        os.close(fd)


def test_unplug_hangs_up_the_reader_and_removes_the_path(port: VirtualSerialPort) -> None:
    fd = os.open(port.path, os.O_RDWR | os.O_NOCTTY)
    try:
        port.close()
        assert not port.path.exists()
        assert not port.is_open
        assert os.read(fd, 10) == b""  # end of file: the other end is gone
        with pytest.raises(OSError, match="Input/output error"):
            os.write(fd, b"\x45")
    finally:
        os.close(fd)


def test_replug_points_the_same_path_at_a_new_terminal(port: VirtualSerialPort) -> None:
    port.close()
    port.open()
    assert port.path.is_symlink()
    fd = os.open(port.path, os.O_RDWR | os.O_NOCTTY)
    try:
        os.write(fd, b"\x42")
        assert read_exactly(port.master_fd, 1) == b"\x42"
    finally:
        os.close(fd)


def test_closed_port_refuses_use(tmp_path: Path) -> None:
    port = VirtualSerialPort(tmp_path / "dgt")
    with pytest.raises(RuntimeError, match="closed"):
        _ = port.master_fd
    port.open()
    with pytest.raises(RuntimeError, match="already open"):
        port.open()
    port.close()


def test_unread_counts_what_no_reader_has_taken(port: VirtualSerialPort) -> None:
    fd = os.open(port.path, os.O_RDWR | os.O_NOCTTY)
    try:
        assert port.unread() == 0
        os.write(port.master_fd, ALL_BYTES)
        select.select([fd], [], [], 5.0)  # the kernel has moved them to the reader's side
        assert port.unread() == 256
        assert read_exactly(fd, 256) == ALL_BYTES
        assert port.unread() == 0
    finally:
        os.close(fd)
