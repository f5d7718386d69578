"""memgit for Python: the memory tool of a `memgit server` store for the Anthropic SDK's tool runner, and a
client for its memory calls and read API. HTTP uses the standard library only; `MemgitMemoryTool` needs the
`anthropic` package (`pip install 'memgit[anthropic]'`). Guide: docs/python.md in the memgit repository.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import errors, types
from .client import AsyncMemgitClient, AsyncStore, MemgitClient, Store, tool_use_block
from .errors import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    MemgitError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    RequestTooLargeError,
    ToolUseIdUnavailableError,
    UnsupportedAnthropicVersionError,
)
from .session import new_session_id

if TYPE_CHECKING:
    from .memory_tool import SUPPORTED_ANTHROPIC, AsyncMemgitMemoryTool, MemgitMemoryTool, MemoryCall

try:
    from importlib.metadata import version as _version

    __version__ = _version("memgit")
except Exception:  # a source tree, not installed
    __version__ = "0.0.0+source"

__all__ = [
    "MemgitClient",
    "AsyncMemgitClient",
    "Store",
    "AsyncStore",
    "MemgitMemoryTool",
    "AsyncMemgitMemoryTool",
    "MemoryCall",
    "SUPPORTED_ANTHROPIC",
    "new_session_id",
    "tool_use_block",
    "errors",
    "types",
    "MemgitError",
    "APIConnectionError",
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "RequestTimeoutError",
    "ConflictError",
    "RequestTooLargeError",
    "RateLimitError",
    "InternalServerError",
    "OverloadedError",
    "UnsupportedAnthropicVersionError",
    "ToolUseIdUnavailableError",
]

_TOOL_NAMES = {"MemgitMemoryTool", "AsyncMemgitMemoryTool", "MemoryCall", "SUPPORTED_ANTHROPIC"}


def __getattr__(name: str) -> Any:
    # The memory tool imports `anthropic`, an optional extra: loaded when first asked for, so `import memgit`
    # and the client work without it.
    if name in _TOOL_NAMES:
        from . import memory_tool

        return getattr(memory_tool, name)
    raise AttributeError(f"module 'memgit' has no attribute {name!r}")
