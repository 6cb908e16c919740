"""What dgtcast takes from inside its libraries, checked against the installed versions.

Three libraries give no public way to do something dgtcast needs, so the code reaches one
step inside them; ``pyproject.toml`` bounds each to the versions checked here. When an
upgrade moves one of these names, this file fails first, naming the library, what moved
and the code that relies on it (docs/architecture.md, "Library internals").

================================  ===================================================
pyserial-asyncio-fast             ``SerialTransport._read_ready`` replaced by one
(drivers/dgt/aio/link.py)             ``os.read`` (pyserial's ``read`` selects, which fails
                                  above descriptor 1023); ``_fatal_error`` replaced so
                                  an unplugged board's failed write is not an ERROR;
                                  ``_abort``, ``_close``, ``_serial``, ``_protocol``,
                                  ``_max_read_size`` used by both
websockets (broadcast/web/server.py)  ``Connection.send_in_progress``: the spectator fast
                                  path writes whole frames only between messages
aiomqtt                           ``Client._client``, the paho client: manual PUBACKs
(broadcast/outputs/mqtt_client.py)        (``manual_ack_set``, ``ack``) and closing a socket
                                  opened by a cancelled connect (``socket``,
                                  ``_sock_close``); ``Client._client_connect``, the
                                  worker thread's connect, wrapped to know when it
                                  ends; ``Client._connected`` and ``_disconnected``:
                                  a refused connect's or an unexpected
                                  disconnection's exception read
================================  ===================================================
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import re

import aiomqtt
import paho.mqtt.client as paho
import pytest
import websockets
from serial_asyncio_fast import SerialTransport
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from drivers.dgt.aio.link import _SerialTransport


def _parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


def test_pyserial_asyncio_fast_transport_still_has_what_the_link_overrides() -> None:
    version = importlib.metadata.version("pyserial-asyncio-fast")
    for name in ("_read_ready", "_fatal_error", "_abort", "_close", "_ensure_reader"):
        assert callable(getattr(SerialTransport, name, None)), (
            f"pyserial-asyncio-fast {version}: SerialTransport.{name} is gone;"
            " drivers/dgt/aio/link.py overrides or calls it"
        )
    assert _parameters(SerialTransport._fatal_error)[:3] == ["self", "exc", "message"]
    assert _parameters(SerialTransport._close)[:2] == ["self", "exc"]
    assert _SerialTransport._fatal_error is not SerialTransport._fatal_error
    source = inspect.getsource(SerialTransport.__init__)
    for attribute in ("self._serial", "self._protocol", "self._max_read_size"):
        assert attribute in source, (
            f"pyserial-asyncio-fast {version}: {attribute} is no longer set by"
            " SerialTransport.__init__; drivers/dgt/aio/link.py reads it"
        )


async def test_websockets_connection_still_tells_a_send_in_progress() -> None:
    version = websockets.version.version
    seen: list[object] = []
    mid_send: list[object] = []

    async def handler(ws: ServerConnection) -> None:
        seen.append(ws.send_in_progress)  # idle: None

        async def fragments() -> object:
            yield "a"
            mid_send.append(ws.send_in_progress)  # a fragmented message is going out
            yield "b"

        await ws.send(fragments())  # type: ignore[arg-type]

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}") as client:
            assert await asyncio.wait_for(client.recv(), 10) == "ab"
    assert seen == [None], f"websockets {version}: send_in_progress is not None when idle"
    assert len(mid_send) == 1
    assert isinstance(mid_send[0], asyncio.Future), (
        f"websockets {version}: Connection.send_in_progress no longer marks a fragmented"
        " send; broadcast/web/server.py relies on it"
    )


async def test_aiomqtt_client_still_wraps_a_paho_client() -> None:
    version = importlib.metadata.version("aiomqtt")
    client = aiomqtt.Client("127.0.0.1", port=1)
    inner = getattr(client, "_client", None)
    assert isinstance(inner, paho.Client), (
        f"aiomqtt {version}: Client._client is no longer paho's client;"
        " broadcast/relay/remote.py and broadcast/outputs/mqtt.py use it"
    )
    for name in ("_connected", "_disconnected"):
        assert isinstance(getattr(client, name, None), asyncio.Future), (
            f"aiomqtt {version}: Client.{name} is no longer a future (mqtt_client.connected"
            " reads a refused connect's or an unexpected disconnection's exception from it)"
        )
    enter = inspect.getsource(aiomqtt.Client.__aenter__)
    assert "run_in_executor(None, self._client_connect)" in enter, (
        f"aiomqtt {version}: Client.__aenter__ no longer connects with"
        " self._client_connect in a worker thread (mqtt_client._Connecting wraps it)"
    )
    for name in ("manual_ack_set", "ack", "socket", "_sock_close"):
        assert callable(getattr(inner, name, None)), f"paho-mqtt: Client.{name} is gone"


@pytest.mark.parametrize(
    ("distribution", "upper"),
    [("pyserial-asyncio-fast", "0.17"), ("websockets", "18"), ("aiomqtt", "2.6")],
)
def test_pyproject_bounds_each_library_whose_internals_are_used(
    distribution: str, upper: str
) -> None:
    requirements = importlib.metadata.requires("dgtcast") or []
    line = next(r for r in requirements if re.split(r"[<>=!~; ]", r)[0] == distribution)
    assert f"<{upper}" in line, f"pyproject.toml: {distribution} needs an upper bound"
