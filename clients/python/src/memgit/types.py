"""The JSON the server answers, as typed dictionaries.

The records (`Commit`, `Call`, `Session`, `FileRevision`) are memgit's one JSON shape, documented in
docs/records.md: camelCase names, ISO 8601 UTC times, `None` for what does not apply, and a `schema`
marker. The pages (`CommitsPage`, `FilePage`, ...) are the audit UI's JSON twins; they name their main
fields here, and a reader must ignore fields it does not know (new ones may be added).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional

if sys.version_info >= (3, 11):
    from typing import Literal, NotRequired, TypedDict
else:  # pragma: no cover - older Pythons
    from typing import Literal, TypedDict

    try:
        from typing_extensions import NotRequired
    except ImportError:  # typing only; the package needs no dependency at run time
        NotRequired = Optional  # type: ignore[assignment,misc]

__all__ = [
    "ToolResult",
    "ToolCallResult",
    "Commit",
    "CommitRow",
    "Call",
    "Session",
    "FileRevision",
    "CommitsPage",
    "CommitPage",
    "SessionPage",
    "FilePage",
    "TreePage",
    "SearchPage",
    "Overview",
]


class ToolResult(TypedDict):
    """The Messages API `tool_result` block to send back to the model, exactly as the server answered it."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str
    is_error: NotRequired[bool]


class ToolCallResult(TypedDict):
    """The answer to a memory call: the `tool_result`, and the commit it made (None for a view or an error)."""

    tool_result: ToolResult
    commit: Optional[str]


class Commit(TypedDict):
    """`memgit.commit/1` (with `position`, the commit's index in history, as the HTTP API adds it)."""

    schema: Literal["memgit.commit/1"]
    commit: str
    parent: Optional[str]
    time: str
    toolUseId: Optional[str]
    title: str
    session: Optional[str]
    command: Optional[str]
    path: Optional[str]
    newPath: Optional[str]
    paths: List[str]
    actor: Optional[str]
    reverts: List[str]
    reason: Optional[str]
    position: NotRequired[int]


class CommitRow(Commit):
    """A row of the commits list: a commit with the lines it added and removed."""

    added: int
    removed: int


class Call(TypedDict):
    """`memgit.call/1`: one memory call as the call log records it (reads and failed calls too)."""

    schema: Literal["memgit.call/1"]
    id: str
    session: str
    time: str
    command: Optional[str]
    paths: List[str]
    ok: bool
    kind: Literal["read", "write", "failed"]
    error: Optional[str]
    commit: Optional[str]
    readAt: Optional[str]


class Session(TypedDict):
    """`memgit.session/1`."""

    schema: Literal["memgit.session/1"]
    id: str
    calls: int
    first: Optional[str]
    last: Optional[str]
    files: int
    writes: NotRequired[int]
    reverted: NotRequired[int]
    reads: NotRequired[int]
    failed: NotRequired[int]
    logOnly: NotRequired[bool]


# `memgit.file-revision/1`: one revision of one file (`from`, a Python keyword, is why this is spelled as a call).
FileRevision = TypedDict(
    "FileRevision",
    {
        "schema": Literal["memgit.file-revision/1"],
        "commit": str,
        "parent": Optional[str],
        "time": str,
        "toolUseId": Optional[str],
        "title": str,
        "session": Optional[str],
        "command": Optional[str],
        "actor": Optional[str],
        "reverts": List[str],
        "reason": Optional[str],
        "path": str,
        "kind": Literal["created", "modified", "renamed", "deleted"],
        # For a rename: the path it came from.
        "from": Optional[str],
        "position": NotRequired[int],
    },
)


class CommitsPage(TypedDict, total=False):
    """`GET .../commits`: 50 commits a page, newest first; `older` / `newer` are cursors (commit ids)."""

    filter: Dict[str, Any]
    rows: List[CommitRow]
    older: Optional[str]
    newer: Optional[str]
    partial: bool
    total: int
    flags: Dict[str, Any]


class CommitPage(TypedDict, total=False):
    """`GET .../commits/{id}` and `.../calls/{tool_use id}`: one commit with its message and diff."""

    commit: Commit
    message: str
    diffs: List[Dict[str, Any]]
    sessionStep: Optional[int]
    sessionCalls: int
    prevInSession: Optional[Commit]
    nextInSession: Optional[Commit]
    revertedBy: List[Commit]
    flag: Optional[Dict[str, Any]]
    rewrittenFrom: Optional[Dict[str, str]]


class SessionPage(TypedDict, total=False):
    """`GET .../sessions/{id}`: a session's calls, a page of steps at a time (`from`, `nextFrom`)."""

    id: str
    calls: int
    logOnly: bool
    reads: int
    failed: int
    first: Optional[Commit]
    last: Optional[Commit]
    before: Optional[str]
    page: List[Dict[str, Any]]
    nextFrom: Optional[int]
    prevFrom: Optional[int]
    allCalls: List[Call]


class FilePage(TypedDict, total=False):
    """`GET .../files/{path}`: a file at a point in history, its lines (with blame) and its revisions."""

    rel: str
    path: str
    at: Commit
    pinned: bool
    exists: bool
    current: Optional[FileRevision]
    size: int
    lineCount: int
    lines: List[Dict[str, Any]]
    truncated: bool
    origins: Dict[str, Commit]
    blamed: bool
    history: List[FileRevision]
    revisionCount: int
    deletedBy: Optional[Commit]


class TreePage(TypedDict, total=False):
    """`GET .../tree`: a directory of the memory at a point in history."""

    at: Commit
    pinned: bool
    dir: str
    path: str
    rows: List[Dict[str, Any]]
    truncated: bool


class SearchPage(TypedDict, total=False):
    """`GET .../search?q=`: files whose path or text holds `q` (a page of them), and the calls that introduced it."""

    q: str
    files: List[Dict[str, Any]]
    stoppedBy: Optional[str]
    next: Optional[int]
    truncated: bool
    history: Optional[CommitsPage]


class Overview(TypedDict, total=False):
    """`GET /api/v1/stores/{store}`: the store's head, totals, files and latest commits."""

    head: Optional[Commit]
    totals: Dict[str, int]
    files: List[Dict[str, Any]]
    filesTruncated: bool
    latest: List[Commit]
