"""MemgitClient and AsyncMemgitClient against a real memgit server: memory calls, the read API, typed errors,
and retries of the same tool_use id (through a small proxy in front of the server that answers 503/429 or
drops the connection, as a load balancer or a restart would)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple

import pytest

from memgit import (
    APIConnectionError,
    AsyncMemgitClient,
    AuthenticationError,
    BadRequestError,
    MemgitClient,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    new_session_id,
)
from conftest import Env, git_log, tool_use

SESSION = "sess_20261203T100000_read"


def write(env: Env, store_id: str, calls: List[Tuple[str, Dict[str, Any]]], session: str = SESSION) -> None:
    store = MemgitClient(env.url, env.write_key).store(store_id)
    for id, input in calls:
        answer = store.tool_call(tool_use(id, input), session)
        assert not answer["tool_result"].get("is_error"), answer


HISTORY = [
    ("toolu_r1", {"command": "create", "path": "/memories/acme.md", "file_text": "Deploys on Fridays.\n"}),
    ("toolu_r2", {"command": "str_replace", "path": "/memories/acme.md", "old_str": "Fridays", "new_str": "Fridays only"}),
    ("toolu_r3", {"command": "create", "path": "/memories/people/dana.md", "file_text": "Dana, CTO of Acme.\n"}),
    ("toolu_r4", {"command": "view", "path": "/memories"}),
]


def test_tool_call_answers_the_tool_result_and_the_commit(env: Env, store_id: str) -> None:
    store = MemgitClient(env.url, env.write_key).store(store_id)
    created = store.tool_call(tool_use("toolu_c1", {"command": "create", "path": "/memories/a.md", "file_text": "a\n"}), "sess_c")
    head = git_log(env.root / store_id)[-1]
    assert created["tool_result"] == {"type": "tool_result", "tool_use_id": "toolu_c1", "content": "File created successfully at: /memories/a.md"}
    assert head.subject == "toolu_c1"
    viewed = store.tool_call(tool_use("toolu_c2", {"command": "view", "path": "/memories/missing.md"}), "sess_c")
    assert viewed == {
        "tool_result": {
            "type": "tool_result",
            "tool_use_id": "toolu_c2",
            "content": "The path /memories/missing.md does not exist. Please provide a valid path.",
            "is_error": True,
        },
        "commit": None,
    }
    # The same id again: the first answer, no second commit.
    again = store.tool_call(tool_use("toolu_c1", {"command": "create", "path": "/memories/a.md", "file_text": "a\n"}), "sess_c")
    assert again == created
    assert [c.subject for c in git_log(env.root / store_id)] == ["memgit: initialise store", "toolu_c1"]


def test_the_read_api(env: Env, store_id: str) -> None:
    write(env, store_id, HISTORY)
    client = MemgitClient(env.url, env.read_key)
    store = client.store(store_id)
    assert store_id in client.stores()
    assert client.health()["status"] == "ok"

    page = store.commits()
    assert [row["toolUseId"] for row in page["rows"]] == ["toolu_r3", "toolu_r2", "toolu_r1", None]
    assert page["rows"][0]["schema"] == "memgit.commit/1"
    assert page["rows"][0]["session"] == SESSION and page["older"] is None
    assert [row["toolUseId"] for row in store.commits(path="/memories/acme.md")["rows"]] == ["toolu_r2", "toolu_r1"]
    assert [row["toolUseId"] for row in store.iter_commits(command="create")] == ["toolu_r3", "toolu_r1"]

    call = store.call("toolu_r2")
    assert call["commit"]["toolUseId"] == "toolu_r2" and call["commit"]["command"] == "str_replace"
    assert store.commit(call["commit"]["commit"][:12])["commit"]["commit"] == call["commit"]["commit"]

    [session] = store.sessions()
    assert (session["schema"], session["id"], session["calls"]) == ("memgit.session/1", SESSION, 3)
    steps = store.session(SESSION)
    assert [step["toolUseId"] for step in steps["page"]] == ["toolu_r1", "toolu_r2", "toolu_r3"]
    assert [c["id"] for c in steps["allCalls"]] == ["toolu_r1", "toolu_r2", "toolu_r3", "toolu_r4"]
    assert steps["allCalls"][3]["kind"] == "read"

    file = store.file("/memories/acme.md")
    assert [line["text"] for line in file["lines"]] == ["Deploys on Fridays only."]
    assert [rev["toolUseId"] for rev in file["history"]] == ["toolu_r2", "toolu_r1"]
    assert store.file("acme.md", at="toolu_r1", blame=False)["lines"][0]["text"] == "Deploys on Fridays."
    assert {row["name"] for row in store.tree()["rows"]} == {"acme.md", "people"}
    assert [row["name"] for row in store.tree("/memories/people")["rows"]] == ["dana.md"]
    found = store.search("Fridays")
    assert [f["rel"] for f in found["files"]] == ["acme.md"]
    assert store.overview()["totals"]["commits"] == 4


def test_the_async_client(env: Env, store_id: str) -> None:
    write(env, store_id, HISTORY[:1])

    async def main() -> Tuple[Any, ...]:
        client = AsyncMemgitClient(env.url, env.write_key)
        store = client.store(store_id)
        answer = await store.tool_call(tool_use("toolu_a2", {"command": "insert", "path": "/memories/acme.md", "insert_line": 0, "insert_text": "# Acme"}), "sess_async")
        rows = [row async for row in store.iter_commits()]
        sessions = await store.sessions()
        file = await store.file("/memories/acme.md")
        with pytest.raises(NotFoundError):
            await store.call("toolu_never")
        return answer, rows, sessions, file, await client.stores()

    answer, rows, sessions, file, stores = asyncio.run(main())
    assert answer["tool_result"]["content"] == "The file /memories/acme.md has been edited."
    assert answer["commit"] == rows[0]["commit"]
    assert [row["toolUseId"] for row in rows] == ["toolu_a2", "toolu_r1", None]
    assert sorted(s["id"] for s in sessions) == sorted([SESSION, "sess_async"])
    assert [line["text"] for line in file["lines"]] == ["# Acme", "Deploys on Fridays."]
    assert store_id in stores


def test_errors_carry_the_server_type_and_message(env: Env, store_id: str) -> None:
    write(env, store_id, HISTORY[:1])
    with pytest.raises(AuthenticationError) as bad_key:
        MemgitClient(env.url, "mgk_not_a_key").store(store_id).commits()
    assert (bad_key.value.status, bad_key.value.type, bad_key.value.message) == (401, "authentication_error", "this key is not valid (unknown or revoked)")
    assert bad_key.value.request_id

    with pytest.raises(PermissionDeniedError) as read_only:
        MemgitClient(env.url, env.read_key).store(store_id).tool_call(tool_use("toolu_x", {"command": "view", "path": "/memories"}), "s")
    assert read_only.value.type == "permission_error" and "scope read" in read_only.value.message

    with pytest.raises(NotFoundError) as no_store:
        MemgitClient(env.url, env.read_key).store("py-no-such-store").commits()
    assert (no_store.value.type, no_store.value.message) == ("not_found_error", 'no store "py-no-such-store"')

    # A store the key does not cover is not found (its existence is not told).
    with pytest.raises(NotFoundError):
        MemgitClient(env.url, env.read_key).store("other-store").commits()

    with pytest.raises(NotFoundError) as no_call:
        MemgitClient(env.url, env.read_key).store(store_id).call("toolu_never_made")
    assert no_call.value.type == "not_found_error" and "toolu_never_made" in no_call.value.message

    with pytest.raises(BadRequestError) as malformed:
        MemgitClient(env.url, env.write_key).store(store_id).tool_call({"type": "tool_use", "id": "toolu_bad", "name": "bash", "input": {}}, "s")
    assert malformed.value.type == "invalid_request_error" and malformed.value.applied is False
    assert malformed.value.message == 'expected the memory tool (name "memory"), got "bash"'

    with pytest.raises(BadRequestError) as bad_filter:
        MemgitClient(env.url, env.read_key).store(store_id).commits(command="erase")
    assert "command must be one of" in bad_filter.value.message

    with pytest.raises(ValueError):
        MemgitClient(env.url, env.read_key).store(store_id).file("/memories/../etc/passwd")
    with pytest.raises(ValueError):
        MemgitClient("ftp://example", env.read_key)
    with pytest.raises(TypeError):
        MemgitClient(env.url, "")
    assert env.read_key not in repr(MemgitClient(env.url, env.read_key))


def test_a_real_429_ends_the_retries_when_its_retry_after_is_beyond_the_bound(env: Env) -> None:
    # This server allows one request a minute per key: the second is a 429 with Retry-After (seconds).
    client = MemgitClient(env.limited_url, env.limited_key, max_retry_delay=0.5)
    client.stores()
    started = time.monotonic()
    with pytest.raises(RateLimitError) as limited:
        client.stores()
    assert time.monotonic() - started < 30  # it did not wait out the window
    assert limited.value.status == 429 and limited.value.type == "rate_limit_error"
    assert limited.value.retry_after is not None and 1 <= limited.value.retry_after <= 60


class Proxy:
    """An HTTP proxy in front of the memgit server that answers each request as planned: a status with headers,
    `forward`, or `drop` (forward, then close the connection without answering: the answer is lost)."""

    def __init__(self, upstream: str, plan: List[Any]) -> None:
        self.upstream = upstream
        self.plan = list(plan)
        self.arrivals: List[Tuple[float, bytes]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.handle_any()

            def do_POST(self) -> None:
                self.handle_any()

            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.arrivals.append((time.monotonic(), body))
                action = proxy.plan.pop(0) if proxy.plan else "forward"
                if isinstance(action, tuple):
                    status, headers = action
                    payload = json.dumps({"error": {"type": "overloaded_error" if status == 503 else "rate_limit_error", "message": "planned"}}).encode()
                    self.send_response(status)
                    for name, value in {**headers, "Content-Type": "application/json", "Content-Length": str(len(payload))}.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                request = urllib.request.Request(proxy.upstream + self.path, data=body if self.command == "POST" else None, method=self.command)
                for name in ("Authorization", "Content-Type", "Accept"):
                    if self.headers.get(name):
                        request.add_header(name, self.headers[name])
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:
                        status, payload, kind = answer.status, answer.read(), answer.headers.get("Content-Type", "")
                except urllib.error.HTTPError as error:
                    status, payload, kind = error.code, error.read(), error.headers.get("Content-Type", "")
                if action == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def proxies(env: Env) -> Any:
    made: List[Proxy] = []

    def make(plan: List[Any]) -> Proxy:
        proxy = Proxy(env.url, plan)
        made.append(proxy)
        return proxy

    yield make
    for proxy in made:
        proxy.close()


CREATE = {"command": "create", "path": "/memories/retry.md", "file_text": "once\n"}


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_503_and_429_are_retried_with_the_same_id_after_retry_after(env: Env, store_id: str, proxies: Any, flavour: str) -> None:
    proxy = proxies([(503, {"Retry-After": "1"}), (429, {"Retry-After": "1"}), "forward"])
    block = tool_use("toolu_retry", CREATE)
    if flavour == "sync":
        answer = MemgitClient(proxy.url, env.write_key).store(store_id).tool_call(block, "sess_retry")
    else:
        answer = asyncio.run(AsyncMemgitClient(proxy.url, env.write_key).store(store_id).tool_call(block, "sess_retry"))
    assert answer["tool_result"]["content"] == "File created successfully at: /memories/retry.md"
    assert len(proxy.arrivals) == 3
    assert len({body for _, body in proxy.arrivals}) == 1  # the same request, the same tool_use id, each time
    (t0, _), (t1, _), (t2, _) = proxy.arrivals
    assert t1 - t0 >= 0.95 and t2 - t1 >= 0.95  # Retry-After: 1 was honoured
    assert [c.subject for c in git_log(env.root / store_id)] == ["memgit: initialise store", "toolu_retry"]


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_lost_answer_is_retried_and_the_call_applied_once(env: Env, store_id: str, proxies: Any, flavour: str) -> None:
    proxy = proxies(["drop", "forward"])
    block = tool_use("toolu_lost", CREATE)
    if flavour == "sync":
        answer = MemgitClient(proxy.url, env.write_key).store(store_id).tool_call(block, "sess_lost")
    else:
        answer = asyncio.run(AsyncMemgitClient(proxy.url, env.write_key).store(store_id).tool_call(block, "sess_lost"))
    assert len(proxy.arrivals) == 2
    commits = git_log(env.root / store_id)
    assert [c.subject for c in commits] == ["memgit: initialise store", "toolu_lost"]
    head = MemgitClient(env.url, env.read_key).store(store_id).call("toolu_lost")["commit"]["commit"]
    assert answer == {"tool_result": {"type": "tool_result", "tool_use_id": "toolu_lost", "content": "File created successfully at: /memories/retry.md"}, "commit": head}


def test_retries_are_bounded(env: Env, store_id: str, proxies: Any) -> None:
    # A Retry-After beyond max_retry_delay ends the retries at once, with the wait in the error.
    proxy = proxies([(503, {"Retry-After": "120"})])
    with pytest.raises(OverloadedError) as busy:
        MemgitClient(proxy.url, env.write_key, max_retry_delay=5).store(store_id).tool_call(tool_use("toolu_b1", CREATE), "sess_b")
    assert (busy.value.retry_after, busy.value.applied, len(proxy.arrivals)) == (120.0, None, 1)
    # At most `retries` attempts after the first.
    proxy = proxies([(503, {"Retry-After": "0"})] * 5)
    with pytest.raises(OverloadedError):
        MemgitClient(proxy.url, env.write_key, retries=2).store(store_id).tool_call(tool_use("toolu_b2", CREATE), "sess_b")
    assert len(proxy.arrivals) == 3
    assert not (env.root / store_id).exists()


def test_an_unreachable_server_is_a_connection_error_after_the_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = MemgitClient(f"http://127.0.0.1:{port}", "mgk_whatever", retries=2)
    started = time.monotonic()
    with pytest.raises(APIConnectionError) as unreachable:
        client.store("py-x").tool_call(tool_use("toolu_u", CREATE), "sess_u")
    assert time.monotonic() - started >= 0.2 + 0.4 - 0.05  # backed off 0.2 s, then 0.4 s
    assert "could not be reached after 3 attempts" in str(unreachable.value)
    assert "sending the same tool_use id again is safe" in str(unreachable.value)


def test_session_ids() -> None:
    session = new_session_id()
    assert session.startswith("sess_") and len(session) == len("sess_20261202T140312_k3f9")
    assert new_session_id() != session

