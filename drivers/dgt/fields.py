"""Range checks shared by the DGT messages and commands: our own misuse raises ValueError."""

from __future__ import annotations

__all__ = ["check_7bit", "check_range", "check_text"]


def check_range(name: str, value: int, low: int, high: int) -> None:
    """Raise ValueError unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise ValueError(f"{name}={value!r} is outside {low}..{high}")


def check_7bit(name: str, data: bytes) -> None:
    """Raise ValueError unless every byte has its MSB clear (payload bytes, §2)."""
    if not data.isascii():
        raise ValueError(f"{name} must hold 7-bit bytes only (payload bytes have MSB 0)")


def check_text(name: str, text: str) -> None:
    """Raise ValueError unless ``text`` is ASCII."""
    if not text.isascii():
        raise ValueError(f"{name} must be ASCII, got {text!r}")
