"""MemgitMemoryTool through the Anthropic SDK's own tool runner, sync and async, streamed and not: what the
model receives (recorded by the scripted Messages API) and the commits (read with git)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any, Dict, List

import anthropic
import pytest

import memgit
from memgit import (
    AsyncMemgitMemoryTool,
    MemgitClient,
    MemgitMemoryTool,
    MemoryCall,
    PermissionDeniedError,
    ToolUseIdUnavailableError,
    UnsupportedAnthropicVersionError,
)
from conftest import Env, Scripted, git_log, text, tool_results, tool_use

MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}
EMPTY_LISTING = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4K\t/memories"
MUTATING = {"create", "str_replace", "insert", "delete", "rename"}

# The conversation of the runner tests: a view, a create and a failing str_replace in one turn, an insert.
TURNS = [
    {"content": [text("Let me look."), tool_use("toolu_py01", {"command": "view", "path": "/memories"})]},
    {
        "content": [
            tool_use("toolu_py02", {"command": "create", "path": "/memories/acme.md", "file_text": "Deploys on Fridays.\nÜmlaut ✓\n"}),
            tool_use("toolu_py03", {"command": "str_replace", "path": "/memories/acme.md", "old_str": "Mondays", "new_str": "x"}),
        ]
    },
    {"content": [tool_use("toolu_py04", {"command": "insert", "path": "/memories/acme.md", "insert_line": 0, "insert_text": "# Acme\n"})]},
    {"content": [text("Noted: Fridays.")]},
]
EXPECTED_RESULTS = [
    [{"type": "tool_result", "tool_use_id": "toolu_py01", "content": EMPTY_LISTING}],
    [
        {"type": "tool_result", "tool_use_id": "toolu_py02", "content": "File created successfully at: /memories/acme.md"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_py03",
            "content": "No replacement was performed, old_str `Mondays` did not appear verbatim in /memories/acme.md.",
            "is_error": True,
        },
    ],
    [{"type": "tool_result", "tool_use_id": "toolu_py04", "content": "The file /memories/acme.md has been edited."}],
]


def run_sync(env: Env, tool: Any, prompt: str, stream: bool) -> Any:
    with anthropic.Anthropic(api_key="sk-ant-test-not-a-real-key", base_url=env.anthropic_url, max_retries=0) as client:
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=512, tools=[tool], messages=[{"role": "user", "content": prompt}], stream=stream
        )
        if stream:
            for reply in runner:
                for _event in reply:
                    pass
        return runner.until_done()


async def run_async(env: Env, tool: Any, prompt: str, stream: bool) -> Any:
    async with anthropic.AsyncAnthropic(api_key="sk-ant-test-not-a-real-key", base_url=env.anthropic_url, max_retries=0) as client:
        runner = client.beta.messages.tool_runner(
            model="claude-test", max_tokens=512, tools=[tool], messages=[{"role": "user", "content": prompt}], stream=stream
        )
        if stream:
            async for reply in runner:
                async for _event in reply:
                    pass
        return await runner.until_done()


@pytest.mark.parametrize("mode", ["sync", "sync-stream", "async", "async-stream"])
def test_the_runner_sends_the_contract_texts_and_every_write_is_a_commit_named_by_its_tool_use_id(
    env: Env, scripted: Scripted, store_id: str, mode: str
) -> None:
    scripted.script(TURNS)
    session = f"sess_20261203T090000_{mode.replace('-', '')}"
    calls: List[MemoryCall] = []
    stream = mode.endswith("stream")
    if mode.startswith("async"):
        tool = AsyncMemgitMemoryTool(url=env.url, key=env.write_key, store=store_id, session=session, on_call=calls.append)
        final = asyncio.run(run_async(env, tool, "Remember Acme", stream))
    else:
        tool = MemgitMemoryTool(url=env.url, key=env.write_key, store=store_id, session=session, on_call=calls.append)
        final = run_sync(env, tool, "Remember Acme", stream)

    assert [block.text for block in final.content if block.type == "text"] == ["Noted: Fridays."]
    requests = scripted.requests()
    assert len(requests) == len(TURNS)
    assert all(request["tools"] == [MEMORY_TOOL] for request in requests)
    assert [tool_results(request) for request in requests[1:]] == EXPECTED_RESULTS

    commits = git_log(env.root / store_id)
    assert [c.subject for c in commits] == ["memgit: initialise store", "toolu_py02", "toolu_py04"]
    # (The server may add trailers of its own, such as the key a call came with: these three are the call's.)
    call_trailers = lambda commit: {name: commit.trailers.get(name) for name in ("Memory-Command", "Memory-Path", "Memory-Session")}  # noqa: E731
    assert call_trailers(commits[1]) == {"Memory-Command": "create", "Memory-Path": "/memories/acme.md", "Memory-Session": session}
    assert call_trailers(commits[2]) == {"Memory-Command": "insert", "Memory-Path": "/memories/acme.md", "Memory-Session": session}
    head = subprocess.run(["git", "-C", str(env.root / store_id), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert [(c.tool_use_id, c.commit is not None) for c in calls] == [
        ("toolu_py01", False),
        ("toolu_py02", True),
        ("toolu_py03", False),
        ("toolu_py04", True),
    ]
    assert calls[3].commit == head
    assert calls[2].result["is_error"] is True


def all_vectors(env: Env) -> List[Dict[str, Any]]:
    vectors = json.loads(env.vectors.read_text("utf-8"))
    # A vector with options (createMode "error") sets up a store the server does not make: the server's
    # stores overwrite on create, as memgit's default. Exactly one such vector exists.
    with_options = [v["name"] for v in vectors if v.get("options")]
    assert with_options == ["create_existing_file_error_in_strict_mode"]
    return [v for v in vectors if not v.get("options")]


def encodable(vector: Dict[str, Any]) -> bool:
    try:
        json.dumps(vector["input"], ensure_ascii=False).encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def load_vectors(env: Env) -> List[Dict[str, Any]]:
    """The vectors a tool runner can carry: the Python SDK cannot send back a conversation whose tool_use input
    holds an unpaired surrogate (its JSON encoder writes UTF-8), so that one vector goes through
    `tool.tool_result()` below instead."""
    vectors = all_vectors(env)
    assert [v["name"] for v in vectors if not encodable(v)] == ["insert_text_lone_surrogate"]
    return [v for v in vectors if encodable(v)]


def test_an_unpaired_surrogate_in_the_input_reaches_the_server_as_it_is(env: Env, store_id: str) -> None:
    [vector] = [v for v in all_vectors(env) if not encodable(v)]
    set_up(env, store_id, vector)
    tool = MemgitMemoryTool(url=env.url, key=env.write_key, store=store_id)
    result = tool.tool_result(tool_use("toolu_surrogate", vector["input"]))
    assert result == {"type": "tool_result", "tool_use_id": "toolu_surrogate", "content": vector["expect"]["text"], "is_error": True}


def head_of(env: Env, store: str) -> str:
    return subprocess.run(["git", "-C", str(env.root / store), "log", "-1", "--format=%H %s"], capture_output=True, text=True, check=True).stdout.strip()


def check_vectors(env: Env, scripted: Scripted, vectors: List[Dict[str, Any]], outcomes: List[Dict[str, Any]]) -> None:
    requests = scripted.requests()
    assert len(requests) == 2 * len(vectors)
    for i, vector in enumerate(vectors):
        expected = {"type": "tool_result", "tool_use_id": "toolu_vector", "content": vector["expect"]["text"]}
        if vector["expect"]["is_error"]:
            expected["is_error"] = True
        assert tool_results(requests[2 * i + 1]) == [expected], vector["name"]
        outcome = outcomes[i]
        if outcome["commit"] is not None:
            assert vector["input"]["command"] in MUTATING and not vector["expect"]["is_error"], vector["name"]
            assert outcome["head_after"] == f"{outcome['commit']} toolu_vector", vector["name"]
        else:
            assert outcome["head_after"] == outcome["head_before"], vector["name"]


def set_up(env: Env, store: str, vector: Dict[str, Any]) -> None:
    writer = MemgitClient(env.url, env.write_key).store(store)
    for j, command in enumerate(vector["setup"]):
        answer = writer.tool_call(tool_use(f"toolu_setup_{j}", command), "sess_vectors_setup")
        assert not answer["tool_result"].get("is_error"), (vector["name"], answer)


def script_vectors(scripted: Scripted, vectors: List[Dict[str, Any]]) -> None:
    steps: List[Dict[str, Any]] = []
    for vector in vectors:
        steps.append({"content": [tool_use("toolu_vector", vector["input"])]})
        steps.append({"content": [text("ok")]})
    scripted.script(steps)


def test_every_conformance_vector_through_the_sync_runner_gives_the_model_the_exact_text(env: Env, scripted: Scripted) -> None:
    vectors = load_vectors(env)
    script_vectors(scripted, vectors)
    outcomes = []
    for i, vector in enumerate(vectors):
        store = f"py-vector-sync-{i}"
        set_up(env, store, vector)
        before = head_of(env, store) if vector["setup"] else None
        seen: List[MemoryCall] = []
        tool = MemgitMemoryTool(url=env.url, key=env.write_key, store=store, session="sess_vectors", on_call=seen.append)
        run_sync(env, tool, vector["name"], stream=False)
        assert len(seen) == 1, vector["name"]
        outcomes.append({"commit": seen[0].commit, "head_before": before, "head_after": head_of(env, store) if (vector["setup"] or seen[0].commit) else None})
    check_vectors(env, scripted, vectors, outcomes)


def test_every_conformance_vector_through_the_async_streaming_runner_gives_the_model_the_exact_text(env: Env, scripted: Scripted) -> None:
    vectors = load_vectors(env)
    script_vectors(scripted, vectors)

    async def run_all() -> List[Dict[str, Any]]:
        outcomes = []
        for i, vector in enumerate(vectors):
            store = f"py-vector-async-{i}"
            set_up(env, store, vector)
            before = head_of(env, store) if vector["setup"] else None
            seen: List[MemoryCall] = []
            tool = AsyncMemgitMemoryTool(url=env.url, key=env.write_key, store=store, session="sess_vectors", on_call=seen.append)
            await run_async(env, tool, vector["name"], stream=True)
            assert len(seen) == 1, vector["name"]
            outcomes.append({"commit": seen[0].commit, "head_before": before, "head_after": head_of(env, store) if (vector["setup"] or seen[0].commit) else None})
        return outcomes

    check_vectors(env, scripted, vectors, asyncio.run(run_all()))


def test_called_outside_the_runner_the_tool_refuses_and_sends_nothing(env: Env, store_id: str) -> None:
    tool = MemgitMemoryTool(url=env.url, key=env.write_key, store=store_id)
    with pytest.raises(ToolUseIdUnavailableError, match="without the tool_use block"):
        tool.call({"command": "create", "path": "/memories/x.md", "file_text": "x"})
    with pytest.raises(TypeError, match="tool_result\\(tool_use\\)"):
        tool.create(None)
    atool = AsyncMemgitMemoryTool(url=env.url, key=env.write_key, store=store_id)
    with pytest.raises(ToolUseIdUnavailableError):
        asyncio.run(atool.call({"command": "create", "path": "/memories/x.md", "file_text": "x"}))
    # Nothing reached the server: the store was never even created.
    assert not (env.root / store_id).exists()


def test_a_loop_of_your_own_passes_the_block_and_a_retried_id_is_not_applied_twice(env: Env, store_id: str) -> None:
    tool = MemgitMemoryTool(url=env.url, key=env.write_key, store=store_id, session="sess_own_loop")
    block = tool_use("toolu_own_1", {"command": "create", "path": "/memories/own.md", "file_text": "one\n"})
    first = tool.tool_result(block)
    again = tool.tool_result(block)
    assert first == again == {"type": "tool_result", "tool_use_id": "toolu_own_1", "content": "File created successfully at: /memories/own.md"}
    assert [c.subject for c in git_log(env.root / store_id)] == ["memgit: initialise store", "toolu_own_1"]

    async def async_loop() -> Any:
        atool = AsyncMemgitMemoryTool(url=env.url, key=env.write_key, store=store_id, session="sess_own_loop")
        return await atool.tool_result(tool_use("toolu_own_2", {"command": "view", "path": "/memories/own.md"}))

    assert asyncio.run(async_loop()) == {
        "type": "tool_result",
        "tool_use_id": "toolu_own_2",
        "content": "Here's the content of /memories/own.md with line numbers:\n     1\tone\n     2\t",
    }


def test_an_on_call_hook_that_raises_does_not_change_what_the_model_hears(env: Env, scripted: Scripted, store_id: str, caplog: pytest.LogCaptureFixture) -> None:
    scripted.script([{"content": [tool_use("toolu_hook", {"command": "create", "path": "/memories/h.md", "file_text": "h\n"})]}, {"content": [text("ok")]}])

    def broken(call: MemoryCall) -> None:
        raise RuntimeError("the log is full")

    run_sync(env, MemgitMemoryTool(url=env.url, key=env.write_key, store=store_id, on_call=broken), "hi", stream=False)
    assert tool_results(scripted.requests()[1]) == [{"type": "tool_result", "tool_use_id": "toolu_hook", "content": "File created successfully at: /memories/h.md"}]
    assert [c.subject for c in git_log(env.root / store_id)] == ["memgit: initialise store", "toolu_hook"]
    assert "on_call raised for toolu_hook" in caplog.text


def test_a_server_error_reaches_the_model_as_an_error_and_commits_nothing(env: Env, scripted: Scripted, store_id: str) -> None:
    # A read key may not write: the server answers 403; the runner gives the model an is_error result.
    scripted.script([{"content": [tool_use("toolu_denied", {"command": "create", "path": "/memories/x.md", "file_text": "x"})]}, {"content": [text("ok")]}])
    tool = MemgitMemoryTool(url=env.url, key=env.read_key, store=store_id, retries=0)
    run_sync(env, tool, "hi", stream=False)
    [result] = tool_results(scripted.requests()[1])
    assert result["is_error"] is True
    assert "memgit server answered 403 permission_error: this key (scope read) may not" in result["content"]
    assert not (env.root / store_id).exists()
    with pytest.raises(PermissionDeniedError) as raised:
        tool.tool_result(tool_use("toolu_denied", {"command": "view", "path": "/memories"}))
    assert (raised.value.status, raised.value.type, raised.value.applied) == (403, "permission_error", False)


@pytest.mark.parametrize("version", ["1.12.9", "1.14.0", "2.0.0", "garbage"])
def test_an_unsupported_anthropic_version_is_refused_loudly(env: Env, monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    monkeypatch.setattr(anthropic, "__version__", version)
    with pytest.raises(UnsupportedAnthropicVersionError, match=f"anthropic {version} is installed"):
        MemgitMemoryTool(url=env.url, key=env.write_key, store="py-never")
    with pytest.raises(UnsupportedAnthropicVersionError):
        AsyncMemgitMemoryTool(url=env.url, key=env.write_key, store="py-never")


def test_the_installed_anthropic_is_a_supported_one() -> None:
    # The version these tests ran with is the one the package declares (memgit[anthropic]).
    memgit.memory_tool.check_anthropic()
    assert memgit.SUPPORTED_ANTHROPIC == ">=1.13,<1.14"
    assert anthropic.__version__.startswith("1.13.")


def test_the_tool_definition_and_options(env: Env) -> None:
    tool = MemgitMemoryTool(url=env.url, key=env.write_key, store="py-def", cache_control={"type": "ephemeral"})
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory", "cache_control": {"type": "ephemeral"}}
    assert tool.name == "memory"
    assert tool.session.startswith("sess_") and len(tool.session) == len("sess_20261202T140312_k3f9")
    assert env.write_key not in repr(tool)
    client = MemgitClient(env.url, env.write_key)
    assert MemgitMemoryTool(client=client, store="py-def", session="sess_x").session == "sess_x"
    with pytest.raises(TypeError, match="not both"):
        MemgitMemoryTool(client=client, url=env.url, store="py-def")
    with pytest.raises(TypeError, match="needs url= and key="):
        MemgitMemoryTool(url=env.url, store="py-def")
    with pytest.raises(TypeError, match="AsyncMemgitClient"):
        AsyncMemgitMemoryTool(client=client, store="py-def")  # type: ignore[arg-type]

