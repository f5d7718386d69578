"""What the tests run against, made by test/clients/python.test.ts (run by `npm test`):

- a real `memgit server` (MEMGIT_TEST_URL) over the folder MEMGIT_TEST_ROOT, with a write key and a read key
  for the stores `py-*`; a second server limited to one request a minute per key (MEMGIT_TEST_LIMITED_URL);
- memgit's scripted Messages API (MEMGIT_TEST_ANTHROPIC_URL, src/agent/scripted-server.ts), which answers
  with the steps a test scripts through MEMGIT_TEST_CONTROL_URL and records what the SDK sent;
- `memgit sandbox`'s conversation (MEMGIT_TEST_SANDBOX_URL), for the guide's examples (MEMGIT_TEST_PYTHON_GUIDE).

Commits are checked with the real git CLI in the stores' folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List

import pytest

REQUIRED = [
    "MEMGIT_TEST_URL",
    "MEMGIT_TEST_ROOT",
    "MEMGIT_TEST_WRITE_KEY",
    "MEMGIT_TEST_READ_KEY",
    "MEMGIT_TEST_LIMITED_URL",
    "MEMGIT_TEST_LIMITED_KEY",
    "MEMGIT_TEST_ANTHROPIC_URL",
    "MEMGIT_TEST_CONTROL_URL",
    "MEMGIT_TEST_VECTORS",
    "MEMGIT_TEST_SANDBOX_URL",
    "MEMGIT_TEST_PYTHON_GUIDE",
]


@dataclass(frozen=True)
class Env:
    url: str
    root: Path
    write_key: str
    read_key: str
    limited_url: str
    limited_key: str
    anthropic_url: str
    control_url: str
    vectors: Path
    sandbox_url: str
    python_guide: Path


@pytest.fixture(scope="session")
def env() -> Env:
    missing = [name for name in REQUIRED if not os.environ.get(name)]
    if missing:
        pytest.fail(
            f"missing {', '.join(missing)}: these tests run through npm test (test/clients/python.test.ts), "
            "which starts the servers they need",
            pytrace=False,
        )
    e = os.environ
    return Env(
        url=e["MEMGIT_TEST_URL"],
        root=Path(e["MEMGIT_TEST_ROOT"]),
        write_key=e["MEMGIT_TEST_WRITE_KEY"],
        read_key=e["MEMGIT_TEST_READ_KEY"],
        limited_url=e["MEMGIT_TEST_LIMITED_URL"],
        limited_key=e["MEMGIT_TEST_LIMITED_KEY"],
        anthropic_url=e["MEMGIT_TEST_ANTHROPIC_URL"],
        control_url=e["MEMGIT_TEST_CONTROL_URL"],
        vectors=Path(e["MEMGIT_TEST_VECTORS"]),
        sandbox_url=e["MEMGIT_TEST_SANDBOX_URL"],
        python_guide=Path(e["MEMGIT_TEST_PYTHON_GUIDE"]),
    )


class Scripted:
    """The scripted Messages API: what the model answers next, and what the SDK sent it."""

    def __init__(self, control_url: str) -> None:
        self.control_url = control_url

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.control_url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read().decode("utf-8"))

    def script(self, steps: List[Dict[str, Any]]) -> None:
        """The model's next replies, in order (the previous script must be used up); forgets recorded requests."""
        self._call("POST", "/script", {"steps": steps})

    def requests(self) -> List[Dict[str, Any]]:
        """The bodies of the Messages requests since the last script."""
        return self._call("GET", "/requests")["requests"]

    def remaining(self) -> int:
        return self._call("GET", "/requests")["remaining"]


@pytest.fixture()
def scripted(env: Env) -> Scripted:
    control = Scripted(env.control_url)
    yield control
    assert control.remaining() == 0, "the test left scripted replies unused"


@pytest.fixture()
def store_id(request: pytest.FixtureRequest) -> str:
    """A fresh store id for the test, `py-<test name>`."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
    return f"py-{name[:80]}-{hashlib.sha256(request.node.name.encode()).hexdigest()[:8]}"


def tool_use(id: str, input: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": "memory", "input": input}


def text(value: str) -> Dict[str, Any]:
    return {"type": "text", "text": value}


def tool_results(request: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The tool_result blocks a Messages request ends with (its last message, when that is a user turn)."""
    last = request["messages"][-1]
    if last["role"] != "user" or isinstance(last["content"], str):
        return []
    return [block for block in last["content"] if block.get("type") == "tool_result"]


@dataclass(frozen=True)
class GitCommit:
    subject: str
    body: str
    trailers: Dict[str, str]


def git_log(store_dir: Path) -> List[GitCommit]:
    """The store's commits, oldest first, read with the git CLI (`git fsck` must be clean)."""
    fsck = subprocess.run(["git", "-C", str(store_dir), "fsck", "--full"], capture_output=True, text=True)
    assert fsck.returncode == 0 and fsck.stdout == "", fsck.stdout + fsck.stderr
    out = subprocess.run(
        ["git", "-C", str(store_dir), "log", "--reverse", "--format=%x1e%s%x1f%B%x1f%(trailers:only,unfold)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    commits = []
    for record in out.split("\x1e")[1:]:
        subject, body, trailers = record.split("\x1f")
        pairs = dict(line.split(": ", 1) for line in trailers.strip().splitlines() if ": " in line)
        commits.append(GitCommit(subject, body, pairs))
    return commits
