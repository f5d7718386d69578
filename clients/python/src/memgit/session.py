"""Session ids, as memgit makes them."""

from __future__ import annotations

import secrets
from datetime import datetime, timezone
from typing import Optional

__all__ = ["new_session_id"]

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_session_id(prefix: str = "sess", now: Optional[datetime] = None) -> str:
    """A fresh, sortable session id such as `sess_20261202T140312_k3f9` (UTC time, then 4 random characters)."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    random = "".join(secrets.choice(_ALPHABET) for _ in range(4))
    return f"{prefix}_{moment.strftime('%Y%m%dT%H%M%S')}_{random}"
