"""The one MQTT client set-up of the project: settings, connect, TLS, will, reconnects.

The daemon's publisher (:mod:`broadcast.outputs.mqtt`), its command listener
(:mod:`broadcast.relay.remote`), the start-up ownership check (:mod:`broadcast.relay.ownership`) and
the relay's link (:mod:`broadcast.relay.server`) all take their aiomqtt clients from
:func:`new_client` and their reconnect loop with its visible state from
:class:`MqttLink`. The aiomqtt workarounds live here and nowhere else:

* :func:`raise_if_cancelled`: aiomqtt awaits with ``asyncio.wait_for``, which in Python
  3.11 can swallow a cancellation;
* :func:`connected`: a socket opened by a connect that was cancelled is closed once
  aiomqtt's worker thread has opened it (``Client._client_connect`` is wrapped to know
  when) — through paho's ``_sock_close``;
* :func:`acknowledge`: a manual ``PUBACK`` (paho's ``manual_ack_set`` and ``ack``), so a
  command is acknowledged only once it is journalled;
* :func:`client_log`: paho logs a lost connection as an ERROR; here it is a warning.

The private paho calls are pinned by the ``aiomqtt`` version bound in ``pyproject.toml``
and by ``tests/test_library_internals.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import logging
import re
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import aiomqtt

from base.backoff import Backoff, BackoffPolicy
from broadcast.feed.signing import EventKey

__all__ = [
    "MqttLink",
    "MqttLinkState",
    "MqttSettings",
    "Session",
    "acknowledge",
    "client_log",
    "connected",
    "exposure",
    "host_name",
    "new_client",
    "raise_if_cancelled",
    "tls_context",
]

log = logging.getLogger(__name__)

_TOPIC_UNSAFE = re.compile(r"[#+/\s]+")


def host_name() -> str:
    """This machine's name as one safe MQTT topic level and client id ('' if it has none):
    letters, digits, ``-``, ``_`` and ``.``; anything else becomes ``-``."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in socket.gethostname())


def _default_daemon_id() -> str:
    return host_name() or "dgtcast"


#: The default retry timing (seconds).
_RECONNECT = BackoffPolicy(initial=0.5, maximum=30.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class MqttSettings:
    """The broker and how to talk to it (the ``[mqtt]`` table of the configuration).

    Attributes:
        host / port: the broker.
        prefix: the first topic level(s), without wildcards or a trailing ``/``.
        username / password: optional credentials.
        daemon_id: names this daemon in ``<prefix>/daemon/<id>/status`` and in the client
            id; two daemons on one broker need different ids. Default: the host name.
        tls: connect with TLS (system certificates).
        keepalive: seconds between MQTT pings; a silent broker is dropped after 1.5×.
        max_pending: alerts + results kept while the broker is away; beyond, the oldest go.
        max_retained_topics: retained topics remembered for re-publishing after reconnect.
        retry: the reconnect delays.
        time_limit: seconds for connecting and for each acknowledgement.
        ca_file: with ``tls``, trust this CA bundle instead of the system's (a venue's
            own certificate authority).
        event_key: signs commands, answers and what a daemon publishes as JSON, and
            only messages it signed are taken (:mod:`broadcast.feed.signing`); None:
            nothing is signed.
    """

    host: str = "localhost"
    port: int = 1883
    prefix: str = "dgtcast"
    username: str | None = None
    password: str | None = None
    daemon_id: str = field(default_factory=_default_daemon_id)
    tls: bool = False
    keepalive: int = 30
    max_pending: int = 1000
    max_retained_topics: int = 4096
    retry: BackoffPolicy = _RECONNECT
    time_limit: float = 10.0
    ca_file: str | None = None
    event_key: EventKey | None = None

    def __post_init__(self) -> None:
        if not self.prefix or self.prefix != self.prefix.strip("/") or "#" in self.prefix:
            raise ValueError(f"bad MQTT topic prefix {self.prefix!r}")
        if "+" in self.prefix or not self.daemon_id or _TOPIC_UNSAFE.search(self.daemon_id):
            raise ValueError("prefix and daemon_id cannot hold wildcards; daemon_id no '/'")
        if self.max_pending < 1 or self.max_retained_topics < 1:
            raise ValueError("max_pending and max_retained_topics must be at least 1")

    @property
    def where(self) -> str:
        """``host:port``, for log lines."""
        return f"{self.host}:{self.port}"


class _ConnectionTrace(logging.Filter):
    """paho logs a broken connection as an ERROR; here it is expected and handled."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def client_log(name: str) -> logging.Logger:
    """A logger for an MQTT client whose lost connections are warnings, not errors."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, _ConnectionTrace) for f in logger.filters):
        logger.addFilter(_ConnectionTrace())
    return logger


def tls_context(settings: MqttSettings) -> ssl.SSLContext | None:
    """The TLS context of ``settings`` (None without TLS): the system's CAs or ``ca_file``."""
    if not settings.tls:
        return None
    return ssl.create_default_context(cafile=settings.ca_file)


def exposure(settings: MqttSettings) -> str | None:
    """What is open about the broker connection, for a WARNING at start; None on loopback
    or with both credentials and TLS.

    Anyone who can reach a broker that takes anonymous clients can read the live games
    and write any topic its ACL allows; without TLS, anyone on the network between reads
    the password and every message (docs/deployment.md, "Who can do what").
    """
    if _is_loopback(settings.host):
        return None
    missing = []
    if settings.username is None:
        missing.append("anonymously (no mqtt.username)")
    if not settings.tls:
        missing.append("without TLS (mqtt.tls = false)")
    if not missing:
        return None
    return (
        f"mqtt: connecting to {settings.where} {' and '.join(missing)}: whoever can reach"
        " the broker or the network between can read the live games and, unless the"
        " broker's users and ACL stop them, change what spectators see and send arbiter"
        " commands (docs/deployment.md, 'Who can do what')"
    )


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def new_client(
    settings: MqttSettings,
    identifier: str,
    *,
    logger: logging.Logger,
    will: aiomqtt.Will | None = None,
    clean_session: bool | None = None,
    manual_ack: bool = False,
) -> aiomqtt.Client:
    """An aiomqtt client for ``settings`` (credentials, TLS, keepalive, time limit).

    Args:
        identifier: the MQTT client id (a persistent session needs a fixed one).
        logger: from :func:`client_log`.
        will: published by the broker when the connection dies.
        clean_session: False for a persistent session (queued QoS 1 messages).
        manual_ack: ``PUBACK`` only on :func:`acknowledge`.
    """
    client = aiomqtt.Client(
        settings.host,
        settings.port,
        username=settings.username,
        password=settings.password,
        identifier=identifier,
        will=will,
        clean_session=clean_session,
        keepalive=settings.keepalive,
        timeout=settings.time_limit,
        tls_context=tls_context(settings),
        logger=logger,
    )
    if manual_ack:
        client._client.manual_ack_set(True)
    return client


def acknowledge(client: aiomqtt.Client, message: aiomqtt.Message) -> None:
    """Send the ``PUBACK`` of ``message`` (a client made with ``manual_ack``)."""
    client._client.ack(message.mid, message.qos)


def raise_if_cancelled() -> None:
    """Raise a cancellation that an aiomqtt call swallowed.

    aiomqtt awaits with ``asyncio.wait_for``, which in Python 3.11 returns the result
    when the awaited future completes just as the task is cancelled: the task would go
    on, and a task group waiting for it to stop would wait forever. The request is still
    counted by ``Task.cancelling()``.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class _Connecting:
    """The worker thread's connect of one client: whether it runs, and when it ends.

    aiomqtt runs paho's blocking connect in a worker thread; a cancellation stops the
    wait for it, not the thread. The socket that thread opens afterwards must be closed
    once it exists, not before (it would stay connected to the broker, and asyncio would
    log the exception of its loss, nobody reading it); a connect that has not started
    yet is not started at all.
    """

    def __init__(self, client: aiomqtt.Client) -> None:
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._state = "idle"  # then "running" and "ended", or "abandoned"
        self.ended: asyncio.Future[None] = self._loop.create_future()
        connect = client._client_connect

        def connect_in_thread() -> None:
            with self._lock:
                if self._state == "abandoned":
                    raise OSError("connect abandoned")  # aiomqtt raises it as MqttError
                self._state = "running"
            try:
                connect()
            finally:
                with self._lock:
                    self._state = "ended"
                # after the reader, writer and task that the connect scheduled on the loop
                self._loop.call_soon_threadsafe(self._end)

        client._client_connect = connect_in_thread  # type: ignore[method-assign]

    def abandon(self) -> asyncio.Future[None]:
        """Start no connect from now on; ``ended`` once none runs."""
        with self._lock:
            running = self._state == "running"
            if self._state == "idle":
                self._state = "abandoned"
        if not running:
            self._end()
        return self.ended

    def _end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


def _close(client: aiomqtt.Client) -> None:
    """Close the socket of ``client`` and read what its futures hold."""
    paho = client._client
    if paho.socket() is not None:
        paho._sock_close()
    # aiomqtt leaves an unexpected disconnection's exception on this future when nobody
    # awaited it (its __aexit__ returns early without reading it), and a refused connect's
    # on the other when the connect was cancelled; asyncio would log "Future exception
    # was never retrieved" whenever they are collected. The loss was reported by whoever
    # noticed it (or mattered to no one): seen here.
    for future in (client._connected, client._disconnected):
        if future.done() and not future.cancelled():
            future.exception()


@contextlib.asynccontextmanager
async def connected(client: aiomqtt.Client) -> AsyncIterator[aiomqtt.Client]:
    """``async with client``, robust to cancellation while connecting.

    A cancellation swallowed by the connect is raised again (:func:`raise_if_cancelled`).
    On the way out, the socket is closed once the worker thread's connect has ended
    (:class:`_Connecting`), after the loop added the reader and writer that the connect
    scheduled for it (added after the close, they would fail on a closed descriptor); a
    second cancellation stops the waiting, not the closing. Exceptions the client's
    futures hold are read, so that no "never retrieved" error is logged.
    """
    connecting = _Connecting(client)
    try:
        async with client:
            raise_if_cancelled()
            yield client
    finally:
        closed = asyncio.get_running_loop().create_future()

        def close(_: asyncio.Future[None]) -> None:
            _close(client)
            closed.set_result(None)

        connecting.abandon().add_done_callback(close)
        await asyncio.shield(closed)


class MqttLinkState(enum.Enum):
    """Where a reconnecting client stands."""

    STOPPED = "stopped"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    WAITING = "waiting"  # lost or refused; retrying after a backoff delay


#: One connection's work: runs until the connection is lost (raises MqttError).
Session = Callable[[aiomqtt.Client], Awaitable[None]]


class MqttLink:
    """A client that reconnects by itself, with capped backoff and a visible state.

    Args:
        settings: the broker.
        name: names the link in log lines (``publisher``, ``commands``, ``relay``).
        make_client: a fresh, unconnected client for each attempt (:func:`new_client`).
    """

    def __init__(
        self, settings: MqttSettings, name: str, make_client: Callable[[], aiomqtt.Client]
    ) -> None:
        self.settings = settings
        self.name = name
        self._make_client = make_client
        self._backoff = Backoff(settings.retry)
        self._state = MqttLinkState.STOPPED

    @property
    def state(self) -> MqttLinkState:
        """The connection's state, for status pages."""
        return self._state

    def up(self) -> None:
        """The session is under way (subscribed, announced): backoff reset, CONNECTED."""
        self._backoff.reset()
        self._set_state(MqttLinkState.CONNECTED)
        log.info("= mqtt %s: connected to %s", self.name, self.settings.where)

    async def run(self, session: Session) -> None:
        """Run ``session`` on a fresh connection, again after each loss; until cancelled.

        ``session`` calls :meth:`up` once it is under way. Broker trouble is logged and
        retried, never raised.
        """
        try:
            while True:
                self._set_state(MqttLinkState.CONNECTING)
                try:
                    async with connected(self._make_client()) as client:
                        await session(client)
                except aiomqtt.MqttError as exc:
                    log.warning("= mqtt %s %s: %s", self.name, self.settings.where, exc)
                delay = self._backoff.next_delay()
                self._set_state(MqttLinkState.WAITING)
                log.info("= mqtt %s: reconnect in %.1fs", self.name, delay)
                await asyncio.sleep(delay)
        finally:
            self._set_state(MqttLinkState.STOPPED)

    def _set_state(self, state: MqttLinkState) -> None:
        if state is not self._state:
            log.debug("= mqtt %s %s -> %s", self.name, self._state.value, state.value)
            self._state = state
