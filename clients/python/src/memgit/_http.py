"""HTTP with the standard library: one request as an attempt, and the retry rule shared by sync and async.

Retried are connection errors, 429 and 503, and only for requests that are safe to send twice: reads, and
memory calls, which the server recognises by their tool_use id (an applied call answers its first result
again and commits nothing new). A `Retry-After` the server sends is honoured when it is at most
`max_retry_delay`; a longer one ends the retries at once, with the wait in the error's `retry_after`.
"""

from __future__ import annotations

import asyncio
import email.utils
import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from .errors import APIConnectionError, APIStatusError, MemgitError, status_error_class

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 4
DEFAULT_MAX_RETRY_DELAY = 20.0
RETRY_STATUSES = frozenset({429, 503})
# The server's own error types, for an error answer that does not carry one (a proxy's page).
_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    415: "invalid_request_error",
    429: "rate_limit_error",
    503: "overloaded_error",
}

try:
    from importlib.metadata import version as _version

    _USER_AGENT = f"memgit-python/{_version('memgit')}"
except Exception:  # run from a source tree
    _USER_AGENT = "memgit-python"

QueryValue = Union[str, int, float, bool, None]


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    body: Optional[bytes] = None
    #: Safe to send again (a read, or a memory call with its tool_use id).
    retry_safe: bool = True


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes = field(repr=False)

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise MemgitError(f"the server answered {self.status} with a body that is not JSON ({error})") from None


class _Failure(Exception):
    """One attempt that got no answer: the connection failed or broke."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # The key travels in a header: never follow a redirect, which could carry it to another host.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


@dataclass(frozen=True)
class Settings:
    base_url: str
    key: str
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY

    def url(self, path: str, query: Optional[Mapping[str, QueryValue]] = None) -> str:
        pairs = [(name, _query_text(value)) for name, value in (query or {}).items() if value is not None]
        return self.base_url + path + (("?" + urllib.parse.urlencode(pairs)) if pairs else "")


def _query_text(value: QueryValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def normalise_base_url(url: str) -> str:
    if not isinstance(url, str) or not url:
        raise TypeError("url must be the server's base URL, e.g. http://127.0.0.1:8080")
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"url must be an http:// or https:// URL, got {url!r}")
    if parsed.query or parsed.fragment:
        raise ValueError(f"url must not carry a query or fragment, got {url!r}")
    return url.rstrip("/")


def attempt(settings: Settings, request: Request) -> Response:
    """Send one request; raise _Failure when no answer arrived."""
    headers = {
        "Authorization": f"Bearer {settings.key}",
        "Accept": "application/json",
        "User-Agent": _USER_AGENT,
    }
    if request.body is not None:
        headers["Content-Type"] = "application/json"
    prepared = urllib.request.Request(request.url, data=request.body, method=request.method, headers=headers)
    try:
        with _OPENER.open(prepared, timeout=settings.timeout) as answer:
            return Response(answer.status, _headers(answer.headers), answer.read())
    except urllib.error.HTTPError as error:
        try:
            body = error.read()
        except (OSError, http.client.HTTPException):
            body = b""
        finally:
            error.close()
        return Response(error.code, _headers(error.headers), body)
    except urllib.error.URLError as error:
        raise _Failure(str(error.reason)) from None
    except (OSError, http.client.HTTPException, socket.timeout) as error:
        raise _Failure(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__) from None


def _headers(message: Any) -> Dict[str, str]:
    return {name.lower(): value for name, value in (message.items() if message is not None else [])}


def retry_after_seconds(headers: Mapping[str, str]) -> Optional[float]:
    """The `Retry-After` header in seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def backoff(attempt_number: int, max_delay: float) -> float:
    """The wait before retry number `attempt_number + 1` when the server named none: 0.2 s, doubling."""
    return min(max_delay, 0.2 * 2.0**attempt_number)


def next_wait(settings: Settings, request: Request, attempt_number: int, outcome: Union[Response, _Failure]) -> Optional[float]:
    """How long to wait before sending `request` again, or None to stop here."""
    if not request.retry_safe or attempt_number >= settings.retries:
        return None
    if isinstance(outcome, _Failure):
        return backoff(attempt_number, settings.max_retry_delay)
    if outcome.status not in RETRY_STATUSES:
        return None
    after = retry_after_seconds(outcome.headers)
    if after is None:
        return backoff(attempt_number, settings.max_retry_delay)
    return after if after <= settings.max_retry_delay else None


def conclude(settings: Settings, request: Request, outcome: Union[Response, _Failure], attempts: int) -> Any:
    """The parsed JSON of a success, or the error that ends the call."""
    if isinstance(outcome, _Failure):
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        what = (
            "; the call may or may not have been applied: sending the same tool_use id again is safe"
            if request.method == "POST"
            else ""
        )
        raise APIConnectionError(
            f"memgit server at {settings.base_url} could not be reached{tries} ({outcome}){what}", url=request.url
        )
    if 200 <= outcome.status < 300:
        return outcome.json()
    raise status_error(request, outcome)


def status_error(request: Request, response: Response) -> APIStatusError:
    text = response.body.decode("utf-8", "replace")
    error_type = _TYPE_BY_STATUS.get(response.status, "api_error")
    message = text[:500] if text else f"HTTP {response.status}"
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict):  # the server's own answers: {"error": {"type", "message"}}
            error_type = str(error.get("type") or error_type)
            message = str(error.get("message") or message)
        elif isinstance(error, str):  # the read API's page errors: {"error": "...", "status": 404}
            message = error
    cls = status_error_class(response.status)
    return cls(
        status=response.status,
        type=error_type,
        message=message,
        method=request.method,
        url=request.url,
        retry_after=retry_after_seconds(response.headers),
        request_id=response.headers.get("x-request-id"),
    )


def send(settings: Settings, request: Request) -> Any:
    """Send with retries, blocking."""
    number = 0
    while True:
        outcome: Union[Response, _Failure]
        try:
            outcome = attempt(settings, request)
        except _Failure as failure:
            outcome = failure
        wait = next_wait(settings, request, number, outcome)
        if wait is None:
            return conclude(settings, request, outcome, number + 1)
        time.sleep(wait)
        number += 1


async def send_async(settings: Settings, request: Request) -> Any:
    """Send with retries from asyncio: each attempt runs in the loop's default thread executor (the standard
    library has no asyncio HTTP client); the waits between attempts are asyncio sleeps. Cancelling the task
    stops the retries; an attempt already in its thread finishes there and its answer is dropped."""
    loop = asyncio.get_running_loop()
    number = 0
    while True:
        outcome: Union[Response, _Failure]
        try:
            outcome = await loop.run_in_executor(None, attempt, settings, request)
        except _Failure as failure:
            outcome = failure
        wait = next_wait(settings, request, number, outcome)
        if wait is None:
            return conclude(settings, request, outcome, number + 1)
        await asyncio.sleep(wait)
        number += 1


def json_body(value: Any) -> bytes:
    # ASCII with \u escapes: the model's input reaches the server as it is, an unpaired surrogate included
    # (the contract answers it with its own error), where UTF-8 could not encode it.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def quote_segment(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def split_memory_path(path: str) -> Tuple[str, ...]:
    """A memory path as URL segments relative to /memories: `/memories/a/b.md`, `a/b.md` -> ("a", "b.md")."""
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, got {type(path).__name__}")
    rest = path
    if rest == "/memories" or rest == "/memories/":
        rest = ""
    elif rest.startswith("/memories/"):
        rest = rest[len("/memories/") :]
    rest = rest.strip("/")
    segments = tuple(rest.split("/")) if rest else ()
    if any(segment in ("", ".", "..") for segment in segments):
        raise ValueError(f"malformed memory path {path!r}")
    return segments
