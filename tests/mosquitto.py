"""A real mosquitto broker on a free loopback port, for tests.

The broker keeps its state (retained messages, persistent sessions and their queued QoS 1
messages) in its own folder and saves it when stopped, so :meth:`Mosquitto.restart`
behaves like a broker restart at a venue: same port, same retained state.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

__all__ = ["Mosquitto", "find_mosquitto", "free_port"]


def find_mosquitto() -> str | None:
    """The broker binary: ``mosquitto`` on PATH, else the Debian package's path."""
    found = shutil.which("mosquitto")
    if found:
        return found
    debian = Path("/usr/sbin/mosquitto")
    return str(debian) if os.access(debian, os.X_OK) else None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Mosquitto:
    """One broker process; ``start()`` / ``stop()`` / ``restart()`` keep the same port.

    Args:
        folder: holds the configuration, the persistence file and the log.
        binary: the mosquitto executable (default: :func:`find_mosquitto`).
        port: the loopback port (default: a free one).
        users: user names and passwords (a password file; no anonymous clients); None:
            anonymous clients, as a broker on loopback.
        acl: the ACL file's text (mosquitto's ``acl_file``), with ``users``.
    """

    def __init__(
        self,
        folder: Path,
        *,
        binary: str | None = None,
        port: int | None = None,
        users: Mapping[str, str] | None = None,
        acl: str | None = None,
    ):
        found = binary or find_mosquitto()
        if found is None:
            raise FileNotFoundError("mosquitto not found on PATH nor at /usr/sbin/mosquitto")
        self.binary = found
        self.folder = folder
        self.port = port or free_port()
        self.config = folder / "mosquitto.conf"
        self.log = folder / "mosquitto.log"
        self._process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)
        self._access = self._write_access(users, acl)
        self._write_config()

    def _write_access(self, users: Mapping[str, str] | None, acl: str | None) -> list[str]:
        """A password file (``mosquitto_passwd``) and an ACL file; their config lines."""
        if users is None:
            return ["allow_anonymous true"]
        passwords = self.folder / "passwd"
        passwords.write_text("")
        tool = Path(self.binary).with_name("mosquitto_passwd")
        passwd = shutil.which("mosquitto_passwd") or str(tool.parent.parent / "bin" / tool.name)
        for user, password in users.items():
            subprocess.run([passwd, "-b", str(passwords), user, password], check=True)
        passwords.chmod(0o600)
        lines = ["allow_anonymous false", f"password_file {passwords}"]
        if acl is not None:
            rules = self.folder / "acl"
            rules.write_text(acl)
            rules.chmod(0o600)
            lines.append(f"acl_file {rules}")
        return lines

    def _write_config(self) -> None:
        lines = [
            f"listener {self.port} 127.0.0.1",
            *self._access,
            "persistence true",
            f"persistence_location {self.folder}/",
            "persistence_file mosquitto.db",
            "autosave_interval 0",  # saved when the broker stops
            f"log_dest file {self.log}",
            "log_type all",
            "max_queued_messages 10000",
        ]
        if os.geteuid() == 0:  # as root, mosquitto would switch to user "mosquitto"
            lines.append(f"user {pwd.getpwuid(os.geteuid()).pw_name}")
        self.config.write_text("\n".join(lines) + "\n")

    @property
    def running(self) -> bool:
        """Whether the broker process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self, time_limit: float = 10.0) -> None:
        """Start the broker and wait until its port accepts connections."""
        if self.running:
            raise RuntimeError("mosquitto is already running")
        self._process = subprocess.Popen(
            [self.binary, "-c", str(self.config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._wait_accepting(time_limit)

    def _wait_accepting(self, time_limit: float) -> None:
        deadline = time.monotonic() + time_limit
        while time.monotonic() < deadline:
            process = self._process
            if process is None or process.poll() is not None:
                raise RuntimeError(f"mosquitto exited at start: {self._stderr()}")
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"mosquitto did not accept on port {self.port} in {time_limit}s")

    def _stderr(self) -> str:
        process = self._process
        if process is None or process.stderr is None:
            return ""
        return process.stderr.read().decode(errors="replace").strip()

    def stop(self, time_limit: float = 10.0) -> None:
        """Stop the broker cleanly (SIGTERM: it saves its state), or kill it if it hangs."""
        process = self._process
        if process is None:
            return
        self._process = None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(time_limit)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def restart(self, time_limit: float = 10.0, *, forget_state: bool = False) -> None:
        """Stop, then start again on the same port with the saved state.

        ``forget_state`` deletes the saved state first: a broker that lost every
        retained message and session (a fresh install, a wiped container).
        """
        self.stop(time_limit)
        if forget_state:
            (self.folder / "mosquitto.db").unlink(missing_ok=True)
        self.start(time_limit)

    def __enter__(self) -> Mosquitto:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
