"""Where ../shared lives: beside the checkout, or ``$DGTCAST_SHARED``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ROOT", "shared_path"]

ROOT = Path(__file__).resolve().parent.parent


def shared_path() -> Path:
    """The ``shared/`` folder beside the checkout, or ``$DGTCAST_SHARED``."""
    return Path(os.environ.get("DGTCAST_SHARED", ROOT.parent / "shared"))
