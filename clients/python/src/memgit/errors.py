"""The errors of the memgit client: one class per failure mode, each carrying what the server said.

An answer of the server that is not a success raises an `APIStatusError` subclass chosen by its status,
with the server's error `type` (`authentication_error`, `rate_limit_error`, ...) and `message`. A server
that cannot be reached raises `APIConnectionError`. A memory call whose *result* is an error (a missing
path, an ambiguous `old_str`) is not an exception: it is a `tool_result` with `is_error`, which goes back to
the model as it is.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
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


class MemgitError(Exception):
    """Every error this package raises."""


class APIConnectionError(MemgitError):
    """The server could not be reached, or the connection broke before an answer arrived (after the retries).

    A memory call may or may not have been applied; sending the same tool_use id again is safe (an applied
    call answers its first result again and commits nothing new).
    """

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.message = message
        self.url = url


class APIStatusError(MemgitError):
    """The server answered with an error status. `type` and `message` are the server's own."""

    status: int
    type: str
    message: str
    #: Seconds the server asked to wait before retrying (the `Retry-After` header), when it sent one.
    retry_after: Optional[float]
    #: The server's `X-Request-Id`, which names the request in its log.
    request_id: Optional[str]

    def __init__(
        self,
        *,
        status: int,
        type: str,
        message: str,
        method: str,
        url: str,
        retry_after: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> None:
        self.status = status
        self.type = type
        self.message = message
        self.method = method
        self.url = url
        self.retry_after = retry_after
        self.request_id = request_id
        super().__init__(f"memgit server answered {status} {type}: {message}")

    @property
    def applied(self) -> Optional[bool]:
        """Whether a memory call may have been applied: False for a refused request (4xx), None (unknown) for 5xx."""
        return False if self.status < 500 else None


class BadRequestError(APIStatusError):
    """400 (or 415): the request itself is malformed (`invalid_request_error`); nothing was applied."""


class AuthenticationError(APIStatusError):
    """401: no key, or a key that is unknown or revoked (`authentication_error`)."""


class PermissionDeniedError(APIStatusError):
    """403: the key's scope or store pattern does not allow this (`permission_error`)."""


class NotFoundError(APIStatusError):
    """404: no such store, commit, call, session or file (`not_found_error`)."""


class RequestTimeoutError(APIStatusError):
    """408: the request body did not arrive in time (`timeout_error`); nothing was applied."""


class ConflictError(APIStatusError):
    """409: the store refused a change (`conflict_error`), e.g. a store that is read-only."""


class RequestTooLargeError(APIStatusError):
    """413: the request body is larger than the server accepts (`request_too_large`)."""


class RateLimitError(APIStatusError):
    """429: too many requests with this key, or too many bytes in flight (`rate_limit_error`)."""


class InternalServerError(APIStatusError):
    """500 or another 5xx (`api_error`): see the server's log for the request id."""


class OverloadedError(APIStatusError):
    """503: the store is busy or the server is shutting down (`overloaded_error`)."""


_BY_STATUS: Dict[int, Type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    409: ConflictError,
    413: RequestTooLargeError,
    415: BadRequestError,
    429: RateLimitError,
    503: OverloadedError,
}


def status_error_class(status: int) -> Type[APIStatusError]:
    """The class for an error status."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return InternalServerError if status >= 500 else APIStatusError


class UnsupportedAnthropicVersionError(MemgitError):
    """The installed `anthropic` package is not one whose tool runner this package has been tested with.

    `MemgitMemoryTool` names every commit by the model's tool_use id, which the SDK's tool runner does not
    hand to a tool through any public interface; it is read from the runner as the supported versions
    call tools. Outside them the tool refuses to start rather than risk a commit named by anything else.
    """


class ToolUseIdUnavailableError(MemgitError):
    """A memory tool was called without a tool_use block to answer: not by the SDK's Messages tool runner.

    Nothing was sent to the server. Call `tool.run(tool_use)` with the block in a loop of your own.
    """
