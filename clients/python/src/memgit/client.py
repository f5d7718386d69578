"""`MemgitClient` and `AsyncMemgitClient`: memory calls and the read API of a `memgit server`.

    client = MemgitClient("http://127.0.0.1:8080", key)
    store = client.store("acme-1")
    answer = store.tool_call(tool_use, session="sess_20261202T140312_k3f9")
    answer["tool_result"]   # the tool_result block to send back to the model, exactly as the server made it
    answer["commit"]        # the commit it made, or None (a view, an error result)
    store.commits(session="sess_20261202T140312_k3f9")["rows"]

Everything the server answers is plain JSON (dicts and lists, typed in `memgit.types`). Errors are the
classes of `memgit.errors`, carrying the server's error `type` and `message`.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Dict, Iterator, List, Mapping, Optional, Union, cast

from . import _http
from ._http import DEFAULT_MAX_RETRY_DELAY, DEFAULT_RETRIES, DEFAULT_TIMEOUT, QueryValue, Request, Settings
from .types import (
    CommitPage,
    CommitRow,
    CommitsPage,
    FilePage,
    Overview,
    SearchPage,
    Session,
    SessionPage,
    ToolCallResult,
    TreePage,
)

__all__ = ["MemgitClient", "AsyncMemgitClient", "Store", "AsyncStore", "tool_use_block"]

ToolUseLike = Union[Mapping[str, Any], Any]


def tool_use_block(tool_use: ToolUseLike) -> Dict[str, Any]:
    """A Messages API tool_use block as JSON: a dict is sent as it is (the server validates it and answers a
    malformed one with the contract's error); an SDK block (`BetaToolUseBlock`, `ToolUseBlock`) gives its
    `id`, `name` and `input`."""
    if isinstance(tool_use, Mapping):
        return dict(tool_use)
    try:
        return {"type": "tool_use", "id": tool_use.id, "name": tool_use.name, "input": tool_use.input}
    except AttributeError:
        raise TypeError(
            f"tool_use must be a tool_use block (a dict, or the SDK's block with id, name and input), got {type(tool_use).__name__}"
        ) from None


def _settings(url: str, key: str, timeout: float, retries: int, max_retry_delay: float) -> Settings:
    if not isinstance(key, str) or not key:
        raise TypeError("key must be a memgit key (mgk_...), as `memgit keys create` prints it")
    if not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    if not max_retry_delay >= 0:
        raise ValueError(f"max_retry_delay must be >= 0 seconds, got {max_retry_delay!r}")
    return Settings(_http.normalise_base_url(url), key, float(timeout), retries, float(max_retry_delay))


def _store_path(store_id: str) -> str:
    if not isinstance(store_id, str) or not store_id:
        raise TypeError("the store id must be a non-empty string, e.g. 'acme-1'")
    return f"/api/v1/stores/{_http.quote_segment(store_id)}"


class _Requests:
    """The requests of one store's API, shared by the sync and async stores."""

    def __init__(self, settings: Settings, store_id: str) -> None:
        self.settings = settings
        self.store_id = store_id
        self.base = _store_path(store_id)

    def get(self, path: str, query: Optional[Mapping[str, QueryValue]] = None) -> Request:
        return Request("GET", self.settings.url(self.base + path, query))

    def tool_call(self, tool_use: ToolUseLike, session: str) -> Request:
        if not isinstance(session, str) or not session:
            raise TypeError("session must be a session id such as 'sess_20261202T140312_k3f9'")
        body = {"tool_use": tool_use_block(tool_use), "session": session}
        # Safe to send again: the server recognises the tool_use id and never applies a call twice.
        return Request("POST", self.settings.url(self.base + "/tool-calls"), _http.json_body(body), retry_safe=True)

    def commits(self, **query: QueryValue) -> Request:
        return self.get("/commits", query)

    def commit(self, ref: str) -> Request:
        return self.get("/commits/" + _segment(ref, "ref"))

    def call(self, tool_use_id: str) -> Request:
        return self.get("/calls/" + _segment(tool_use_id, "tool_use_id"))

    def session(self, session_id: str, start: Optional[int]) -> Request:
        # The query form, which also reaches ids a URL path would resolve away (`.`, `..`).
        if not isinstance(session_id, str) or not session_id:
            raise TypeError("the session id must be a non-empty string")
        return self.get("/sessions", {"id": session_id, "from": start})

    def file(self, path: str, at: Optional[str], blame: bool) -> Request:
        segments = _http.split_memory_path(path)
        if not segments:
            raise ValueError("file() needs a file's path, e.g. /memories/notes.md; for a directory use tree()")
        return self.get("/files/" + "/".join(_http.quote_segment(s) for s in segments), {"at": at, "blame": None if blame else False})

    def tree(self, path: str, at: Optional[str]) -> Request:
        return self.get("/tree", {"dir": "/".join(_http.split_memory_path(path)), "at": at})

    def search(self, q: str, start: Optional[int]) -> Request:
        if not isinstance(q, str) or not q:
            raise ValueError("search() needs the text to look for")
        return self.get("/search", {"q": q, "from": start})


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a non-empty string")
    return _http.quote_segment(value)


def _commit_filters(
    session: Optional[str],
    path: Optional[str],
    command: Optional[str],
    since: Optional[str],
    until: Optional[str],
    text: Optional[str],
    flagged: Optional[bool],
) -> Dict[str, QueryValue]:
    return {"session": session, "path": path, "command": command, "since": since, "until": until, "text": text, "flagged": flagged}


class Store:
    """One store of the server (blocking calls). Made by `MemgitClient.store(id)`."""

    def __init__(self, settings: Settings, store_id: str) -> None:
        self._requests = _Requests(settings, store_id)

    @property
    def id(self) -> str:
        return self._requests.store_id

    def __repr__(self) -> str:
        return f"Store({self.id!r} at {self._requests.settings.base_url})"

    def _send(self, request: Request) -> Any:
        return _http.send(self._requests.settings, request)

    def tool_call(self, tool_use: ToolUseLike, session: str) -> ToolCallResult:
        """Execute one memory `tool_use` block (key scope write). Returns `{"tool_result", "commit"}`: the
        tool_result to send back to the model unchanged, and the commit it made (None for a view or an error
        result). Retried with the same tool_use id on connection errors, 429 and 503."""
        return cast(ToolCallResult, self._send(self._requests.tool_call(tool_use, session)))

    def overview(self) -> Overview:
        """The store's head, totals, files and latest commits."""
        return cast(Overview, self._send(self._requests.get("")))

    def commits(
        self,
        *,
        session: Optional[str] = None,
        path: Optional[str] = None,
        command: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        text: Optional[str] = None,
        flagged: Optional[bool] = None,
        before: Optional[str] = None,
        after: Optional[str] = None,
    ) -> CommitsPage:
        """One page (50) of commits, newest first, filtered; `page["older"]` is the `before` of the next page."""
        query = _commit_filters(session, path, command, since, until, text, flagged)
        return cast(CommitsPage, self._send(self._requests.commits(**query, before=before, after=after)))

    def iter_commits(
        self,
        *,
        session: Optional[str] = None,
        path: Optional[str] = None,
        command: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        text: Optional[str] = None,
        flagged: Optional[bool] = None,
    ) -> Iterator[CommitRow]:
        """Every commit matching the filters, newest first, page after page."""
        query = _commit_filters(session, path, command, since, until, text, flagged)
        before: Optional[str] = None
        while True:
            page = cast(CommitsPage, self._send(self._requests.commits(**query, before=before)))
            yield from page.get("rows", [])
            before = page.get("older")
            if not before:
                return

    def commit(self, ref: str) -> CommitPage:
        """One commit (by commit id or prefix) with its message and diff."""
        return cast(CommitPage, self._send(self._requests.commit(ref)))

    def call(self, tool_use_id: str) -> CommitPage:
        """The commit a memory call made, by its tool_use id."""
        return cast(CommitPage, self._send(self._requests.call(tool_use_id)))

    def sessions(self) -> List[Session]:
        """Every session of the store (those that only read or failed too, as `logOnly`)."""
        return cast(List[Session], self._send(self._requests.get("/sessions"))["sessions"])

    def session(self, session_id: str, *, start: Optional[int] = None) -> SessionPage:
        """One session: its calls, a page of steps from step `start` (1-based; `page["nextFrom"]` continues)."""
        return cast(SessionPage, self._send(self._requests.session(session_id, start)))

    def file(self, path: str, *, at: Optional[str] = None, blame: bool = True) -> FilePage:
        """A file (`/memories/notes.md` or `notes.md`) at a point in history (default HEAD): lines, blame, revisions."""
        return cast(FilePage, self._send(self._requests.file(path, at, blame)))

    def tree(self, path: str = "/memories", *, at: Optional[str] = None) -> TreePage:
        """A directory of the memory at a point in history (default HEAD)."""
        return cast(TreePage, self._send(self._requests.tree(path, at)))

    def search(self, q: str, *, start: Optional[int] = None) -> SearchPage:
        """Files whose path or content holds `q` (a page of them), and the calls that introduced it."""
        return cast(SearchPage, self._send(self._requests.search(q, start)))


class AsyncStore:
    """One store of the server, for asyncio. Made by `AsyncMemgitClient.store(id)`. See `Store`."""

    def __init__(self, settings: Settings, store_id: str) -> None:
        self._requests = _Requests(settings, store_id)

    @property
    def id(self) -> str:
        return self._requests.store_id

    def __repr__(self) -> str:
        return f"AsyncStore({self.id!r} at {self._requests.settings.base_url})"

    async def _send(self, request: Request) -> Any:
        return await _http.send_async(self._requests.settings, request)

    async def tool_call(self, tool_use: ToolUseLike, session: str) -> ToolCallResult:
        """See `Store.tool_call`."""
        return cast(ToolCallResult, await self._send(self._requests.tool_call(tool_use, session)))

    async def overview(self) -> Overview:
        return cast(Overview, await self._send(self._requests.get("")))

    async def commits(
        self,
        *,
        session: Optional[str] = None,
        path: Optional[str] = None,
        command: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        text: Optional[str] = None,
        flagged: Optional[bool] = None,
        before: Optional[str] = None,
        after: Optional[str] = None,
    ) -> CommitsPage:
        query = _commit_filters(session, path, command, since, until, text, flagged)
        return cast(CommitsPage, await self._send(self._requests.commits(**query, before=before, after=after)))

    async def iter_commits(
        self,
        *,
        session: Optional[str] = None,
        path: Optional[str] = None,
        command: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        text: Optional[str] = None,
        flagged: Optional[bool] = None,
    ) -> AsyncIterator[CommitRow]:
        query = _commit_filters(session, path, command, since, until, text, flagged)
        before: Optional[str] = None
        while True:
            page = cast(CommitsPage, await self._send(self._requests.commits(**query, before=before)))
            for row in page.get("rows", []):
                yield row
            before = page.get("older")
            if not before:
                return

    async def commit(self, ref: str) -> CommitPage:
        return cast(CommitPage, await self._send(self._requests.commit(ref)))

    async def call(self, tool_use_id: str) -> CommitPage:
        return cast(CommitPage, await self._send(self._requests.call(tool_use_id)))

    async def sessions(self) -> List[Session]:
        return cast(List[Session], (await self._send(self._requests.get("/sessions")))["sessions"])

    async def session(self, session_id: str, *, start: Optional[int] = None) -> SessionPage:
        return cast(SessionPage, await self._send(self._requests.session(session_id, start)))

    async def file(self, path: str, *, at: Optional[str] = None, blame: bool = True) -> FilePage:
        return cast(FilePage, await self._send(self._requests.file(path, at, blame)))

    async def tree(self, path: str = "/memories", *, at: Optional[str] = None) -> TreePage:
        return cast(TreePage, await self._send(self._requests.tree(path, at)))

    async def search(self, q: str, *, start: Optional[int] = None) -> SearchPage:
        return cast(SearchPage, await self._send(self._requests.search(q, start)))


class MemgitClient:
    """A `memgit server`, reached with a key (blocking calls; `AsyncMemgitClient` for asyncio).

    `retries`: attempts after the first on connection errors, 429 and 503 (default 4), for requests that are
    safe to repeat (reads, memory calls by their tool_use id). `max_retry_delay`: the longest wait honoured
    (a `Retry-After` beyond it ends the retries; the error's `retry_after` has it). `timeout`: seconds per attempt.
    """

    def __init__(
        self,
        url: str,
        key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
    ) -> None:
        self._settings = _settings(url, key, timeout, retries, max_retry_delay)

    @property
    def url(self) -> str:
        return self._settings.base_url

    def __repr__(self) -> str:  # never the key
        return f"MemgitClient({self.url!r})"

    def store(self, store_id: str) -> Store:
        """One store by its id (no request is made until a call)."""
        return Store(self._settings, store_id)

    def stores(self) -> List[str]:
        """The ids of the stores this key may read."""
        return cast(List[str], _http.send(self._settings, Request("GET", self._settings.url("/api/v1/stores")))["stores"])

    def health(self) -> Dict[str, Any]:
        """`GET /healthz` (no key needed): `{"status": "ok", "openStores": ..., "replication": {...}}`."""
        return cast(Dict[str, Any], _http.send(self._settings, Request("GET", self._settings.url("/healthz"))))


class AsyncMemgitClient:
    """`MemgitClient` for asyncio: the same calls as coroutines. The standard library has no asyncio HTTP client,
    so each attempt runs in the event loop's default thread executor; waits between retries are asyncio sleeps."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
    ) -> None:
        self._settings = _settings(url, key, timeout, retries, max_retry_delay)

    @property
    def url(self) -> str:
        return self._settings.base_url

    def __repr__(self) -> str:
        return f"AsyncMemgitClient({self.url!r})"

    def store(self, store_id: str) -> AsyncStore:
        return AsyncStore(self._settings, store_id)

    async def stores(self) -> List[str]:
        answer = await _http.send_async(self._settings, Request("GET", self._settings.url("/api/v1/stores")))
        return cast(List[str], answer["stores"])

    async def health(self) -> Dict[str, Any]:
        return cast(Dict[str, Any], await _http.send_async(self._settings, Request("GET", self._settings.url("/healthz"))))
