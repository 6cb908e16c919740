"""The DGT driver's asyncio shell: serial link, device, supervisor (layer L1).

``link`` (bytes over pyserial-asyncio-fast), ``device`` (handshake, clock queue,
watchdog around ``device_core``), ``supervisor`` (reconnects with back-off), ``ports``
(serial port names per platform), ``probe`` (which port holds which board). May import
``drivers.dgt`` and ``base``.
"""

__all__: list[str] = []
