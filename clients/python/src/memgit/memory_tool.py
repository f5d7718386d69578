"""`MemgitMemoryTool`: the memory tool (`memory_20250818`) of a memgit store, for the Anthropic SDK's tool runner.

    tool = MemgitMemoryTool(url="http://127.0.0.1:8080", key=key, store="acme-1")
    runner = client.beta.messages.tool_runner(model=..., max_tokens=..., tools=[tool], messages=[...])
    runner.until_done()

The model's input goes to the server as it is, with the model's tool_use id: every write is one commit
named by that id. A result goes back to the model exactly as the server made it (the contract's text); an
error result is raised as the SDK's `ToolError`, which the runner sends with `is_error: true`.

How the tool_use id is found
----------------------------
The SDK's runner calls a tool with the block's input only (`tool.call(tool_use.input)`), and offers no
public way for a tool to learn the block it answers. The runner's `_run_tool(tool, tool_use)` holds it, so
the tool reads `tool_use` from that caller's frame, and accepts it only when it is the runner's own
`BetaToolUseBlock` whose `input` is the very object the tool was called with (an identity check: never a
guess from equal inputs). Anything else (another caller, a changed runner) raises
`ToolUseIdUnavailableError` before anything is sent, so no commit is ever named by an invented id. As this
reads the SDK's internals, only the `anthropic` versions tested with this package are accepted
(`SUPPORTED_ANTHROPIC`); outside them the tool refuses to be made (`UnsupportedAnthropicVersionError`).
In a loop of your own, `tool.tool_result(tool_use)` takes the block itself.
"""

from __future__ import annotations

import inspect
import logging
import re
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Callable, Optional, Tuple

try:
    import anthropic
    from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
    from anthropic.lib.tools import _beta_runner
    from anthropic.types.beta import BetaCacheControlEphemeralParam, BetaToolUseBlock
except ImportError as error:  # pragma: no cover - exercised by users without the extra
    raise ImportError(
        "MemgitMemoryTool needs the anthropic package: pip install 'memgit[anthropic]' "
        f"(or pip install 'anthropic>=1.13,<1.14'): {error}"
    ) from error

from .client import AsyncMemgitClient, AsyncStore, MemgitClient, Store, ToolUseLike, tool_use_block
from .errors import ToolUseIdUnavailableError, UnsupportedAnthropicVersionError
from .session import new_session_id
from .types import ToolResult
from ._http import DEFAULT_MAX_RETRY_DELAY, DEFAULT_RETRIES, DEFAULT_TIMEOUT

__all__ = ["MemgitMemoryTool", "AsyncMemgitMemoryTool", "MemoryCall", "SUPPORTED_ANTHROPIC", "check_anthropic"]

#: The `anthropic` releases whose tool runner this package reads the tool_use id from, as a pip specifier.
SUPPORTED_ANTHROPIC = ">=1.13,<1.14"
_SUPPORTED_RANGE = ((1, 13), (1, 14))
_RUNNER_MODULE = _beta_runner.__name__
# How many frames above `call` the runner's _run_tool may be (it calls `tool.call` itself: one).
_FRAMES_TO_SEARCH = 3
_log = logging.getLogger("memgit")


@dataclass(frozen=True)
class MemoryCall:
    """One memory call as the server answered it, given to `on_call` (for logging, say)."""

    tool_use_id: str
    input: Any
    result: ToolResult
    #: The commit the call made, None for a view or an error result.
    commit: Optional[str]


OnCall = Callable[[MemoryCall], None]


def _version_tuple(text: str) -> Optional[Tuple[int, int]]:
    match = re.match(r"^(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def check_anthropic() -> None:
    """Raise `UnsupportedAnthropicVersionError` unless the installed `anthropic` is one this package supports:
    a tested version, whose runner calls a tool from `_run_tool(self, tool, tool_use)`."""
    installed = getattr(anthropic, "__version__", "unknown")
    version = _version_tuple(installed)
    low, high = _SUPPORTED_RANGE
    if version is None or not (low <= version < high):
        raise UnsupportedAnthropicVersionError(
            f"MemgitMemoryTool supports anthropic{SUPPORTED_ANTHROPIC}, and anthropic {installed} is installed: "
            "the SDK's tool runner gives a tool no public way to learn its tool_use id, which names every commit, "
            "so this package reads it from the runner as the tested versions call tools. Install a supported "
            f"version (pip install 'anthropic{SUPPORTED_ANTHROPIC}'), or use MemgitClient.store(...).tool_call(block, session) "
            "in a loop of your own."
        )
    for runner in (_beta_runner.BaseSyncToolRunner, _beta_runner.BaseAsyncToolRunner):
        run_tool = getattr(runner, "_run_tool", None)
        parameters = list(inspect.signature(run_tool).parameters) if run_tool is not None else []
        if parameters[:3] != ["self", "tool", "tool_use"]:
            raise UnsupportedAnthropicVersionError(
                f"anthropic {installed}: {runner.__name__}._run_tool is not (self, tool, tool_use) as in the tested "
                "versions, so MemgitMemoryTool cannot learn the tool_use id of a call"
            )


def _tool_use_of_call(caller: Optional[FrameType], input: object, name: str) -> BetaToolUseBlock:
    """The tool_use block the runner is answering with this very `input` object (see the module's docstring)."""
    frame = caller
    try:
        for _ in range(_FRAMES_TO_SEARCH):
            if frame is None:
                break
            if frame.f_code.co_name == "_run_tool" and frame.f_globals.get("__name__") == _RUNNER_MODULE:
                tool_use = frame.f_locals.get("tool_use")
                if isinstance(tool_use, BetaToolUseBlock) and tool_use.input is input and tool_use.name == name:
                    return tool_use
                break
            frame = frame.f_back
    finally:
        del frame, caller
    raise ToolUseIdUnavailableError(
        "the memory tool was called without the tool_use block it answers (not by the SDK's Messages tool runner, "
        "client.beta.messages.tool_runner); nothing was sent. In a loop of your own call tool.tool_result(tool_use)."
    )


def _notify(on_call: Optional[OnCall], call: MemoryCall) -> None:
    """Tell `on_call` about a call that has been answered. Its failure is logged, never turned into the call's:
    the call was applied (or not) already, and the model must hear what the server said."""
    if on_call is None:
        return
    try:
        on_call(call)
    except Exception:
        _log.exception("memgit: on_call raised for %s; the call's result goes to the model unchanged", call.tool_use_id)


def _content(result: ToolResult) -> str:
    if result.get("is_error"):
        # The runner sends a ToolError's content as it is, with is_error: true: the contract's exact text.
        raise ToolError(result["content"])
    return result["content"]


def _client_options(
    url: Optional[str], key: Optional[str], client: Any, kinds: Tuple[type, ...], make: Callable[..., Any], **settings: Any
) -> Any:
    if client is not None:
        if url is not None or key is not None:
            raise TypeError("give either client=, or url= and key=, not both")
        if not isinstance(client, kinds):
            raise TypeError(f"client must be a {' or '.join(k.__name__ for k in kinds)}, got {type(client).__name__}")
        return client
    if url is None or key is None:
        raise TypeError("MemgitMemoryTool needs url= and key= (a key of scope write from `memgit keys create`), or client=")
    return make(url, key, **settings)


class MemgitMemoryTool(BetaAbstractMemoryTool):
    """The memory tool of one memgit store, for `client.beta.messages.tool_runner(tools=[...])` (sync runner;
    `AsyncMemgitMemoryTool` for `AsyncAnthropic`).

    `store`: the store id (created by its first call when the key allows it). `session`: recorded on every
    commit (default: a new `sess_...` id, in `tool.session`). `on_call`: called with a `MemoryCall` after each
    call. `cache_control`: sent with the tool definition. `timeout`, `retries`, `max_retry_delay`: as
    `MemgitClient` (a retry sends the same tool_use id, which the server never applies twice).
    """

    def __init__(
        self,
        *,
        store: str,
        url: Optional[str] = None,
        key: Optional[str] = None,
        session: Optional[str] = None,
        client: Optional[MemgitClient] = None,
        on_call: Optional[OnCall] = None,
        cache_control: Optional[BetaCacheControlEphemeralParam] = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
    ) -> None:
        check_anthropic()
        super().__init__(cache_control=cache_control)
        memgit = _client_options(url, key, client, (MemgitClient,), MemgitClient, timeout=timeout, retries=retries, max_retry_delay=max_retry_delay)
        self.store: Store = memgit.store(store)
        self.session: str = session if session is not None else new_session_id()
        self.on_call = on_call

    def __repr__(self) -> str:
        return f"MemgitMemoryTool(store={self.store.id!r}, session={self.session!r})"

    def call(self, input: object) -> str:
        """Called by the SDK's tool runner with the block's input; see the module's docstring for the id."""
        tool_use = _tool_use_of_call(sys._getframe(1), input, self.name)
        return _content(self._execute(tool_use))

    def tool_result(self, tool_use: ToolUseLike) -> ToolResult:
        """Execute one memory tool_use block (a dict or the SDK's block) and return the tool_result block to send
        back to the model, for a loop that calls `messages.create` itself."""
        return self._execute(tool_use)

    def _execute(self, tool_use: ToolUseLike) -> ToolResult:
        block = tool_use_block(tool_use)
        answer = self.store.tool_call(block, self.session)
        result = answer["tool_result"]
        _notify(self.on_call, MemoryCall(str(block.get("id")), block.get("input"), result, answer.get("commit")))
        return result

    # The runner calls `call` with the model's input as it is; the per-command methods of the SDK's abstract
    # tool (which would need a parsed command, and no id) are not a way in.
    def execute(self, command: Any) -> Any:
        raise _not_by_command()

    def view(self, command: Any) -> Any:
        raise _not_by_command()

    def create(self, command: Any) -> Any:
        raise _not_by_command()

    def str_replace(self, command: Any) -> Any:
        raise _not_by_command()

    def insert(self, command: Any) -> Any:
        raise _not_by_command()

    def delete(self, command: Any) -> Any:
        raise _not_by_command()

    def rename(self, command: Any) -> Any:
        raise _not_by_command()


class AsyncMemgitMemoryTool(BetaAsyncAbstractMemoryTool):
    """`MemgitMemoryTool` for `AsyncAnthropic().beta.messages.tool_runner(...)` (the async runner)."""

    def __init__(
        self,
        *,
        store: str,
        url: Optional[str] = None,
        key: Optional[str] = None,
        session: Optional[str] = None,
        client: Optional[AsyncMemgitClient] = None,
        on_call: Optional[OnCall] = None,
        cache_control: Optional[BetaCacheControlEphemeralParam] = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
    ) -> None:
        check_anthropic()
        super().__init__(cache_control=cache_control)
        memgit = _client_options(url, key, client, (AsyncMemgitClient,), AsyncMemgitClient, timeout=timeout, retries=retries, max_retry_delay=max_retry_delay)
        self.store: AsyncStore = memgit.store(store)
        self.session: str = session if session is not None else new_session_id()
        self.on_call = on_call

    def __repr__(self) -> str:
        return f"AsyncMemgitMemoryTool(store={self.store.id!r}, session={self.session!r})"

    async def call(self, input: object) -> str:
        # A coroutine's caller frame is the coroutine that awaits it: the runner's _run_tool.
        tool_use = _tool_use_of_call(sys._getframe(1), input, self.name)
        return _content(await self._execute(tool_use))

    async def tool_result(self, tool_use: ToolUseLike) -> ToolResult:
        return await self._execute(tool_use)

    async def _execute(self, tool_use: ToolUseLike) -> ToolResult:
        block = tool_use_block(tool_use)
        answer = await self.store.tool_call(block, self.session)
        result = answer["tool_result"]
        _notify(self.on_call, MemoryCall(str(block.get("id")), block.get("input"), result, answer.get("commit")))
        return result

    async def execute(self, command: Any) -> Any:
        raise _not_by_command()

    async def view(self, command: Any) -> Any:
        raise _not_by_command()

    async def create(self, command: Any) -> Any:
        raise _not_by_command()

    async def str_replace(self, command: Any) -> Any:
        raise _not_by_command()

    async def insert(self, command: Any) -> Any:
        raise _not_by_command()

    async def delete(self, command: Any) -> Any:
        raise _not_by_command()

    async def rename(self, command: Any) -> Any:
        raise _not_by_command()


def _not_by_command() -> TypeError:
    return TypeError(
        "MemgitMemoryTool executes the model's tool_use blocks with their ids: let the SDK's tool runner call it, "
        "or call tool.tool_result(tool_use) with the block"
    )

