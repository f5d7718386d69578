"""A Claude agent in Python whose memory lives in a memgit server.

The official `anthropic` package runs the conversation with its own tool runner; memgit's `MemgitMemoryTool`
is the memory tool. Every change Claude makes to /memories is one commit of the store, named by the model's
tool_use id, and every result reaches Claude exactly as the server wrote it.

    pip install './clients/python[anthropic]'          # from the memgit checkout
    export ANTHROPIC_API_KEY=sk-ant-...
    export MEMGIT_URL=http://127.0.0.1:8080 MEMGIT_KEY=mgk_... MEMGIT_STORE=acme-1
    python examples/python/agent.py "I'm Dana from Acme. We only deploy on Fridays; remember that."

No API key? `memgit sandbox` serves a scripted stand-in for Claude: set ANTHROPIC_BASE_URL to the URL it
prints and ANTHROPIC_API_KEY to any value.
"""

import os
import sys

import anthropic

from memgit import MemgitError, MemgitMemoryTool, MemoryCall, new_session_id


def log_call(call: MemoryCall) -> None:
    """One line on stderr per memory call: its command, whether it failed, and its tool_use id."""
    command = call.input.get("command") if isinstance(call.input, dict) else None
    outcome = "error" if call.result.get("is_error") else "ok" + (f", commit {call.commit[:12]}" if call.commit else "")
    print(f"memory {command}: {outcome} ({call.tool_use_id})", file=sys.stderr)


def run(prompt: str, memory: MemgitMemoryTool, model: str, max_tokens: int = 2048) -> None:
    client = anthropic.Anthropic()  # ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL from the environment
    runner = client.beta.messages.tool_runner(
        model=model,
        max_tokens=max_tokens,
        tools=[memory],
        messages=[{"role": "user", "content": prompt}],
    )
    # Each assistant turn as it arrives; the runner executes the memory calls between turns.
    for message in runner:
        for block in message.content:
            if block.type == "text":
                print(block.text, flush=True)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit('usage: agent.py "your message"  (env: MEMGIT_URL, MEMGIT_KEY, MEMGIT_STORE, ANTHROPIC_API_KEY)')
    missing = [name for name in ("MEMGIT_KEY", "MEMGIT_STORE") if not os.environ.get(name)]
    if missing:
        sys.exit(f"agent.py: set {', '.join(missing)} (memgit keys create --stores ... --scope write prints a key)")
    session = os.environ.get("MEMGIT_SESSION") or new_session_id()
    print(f"session {session}", file=sys.stderr)
    memory = MemgitMemoryTool(
        url=os.environ.get("MEMGIT_URL", "http://127.0.0.1:8080"),
        key=os.environ["MEMGIT_KEY"],
        store=os.environ["MEMGIT_STORE"],
        session=session,
        on_call=log_call,
    )
    try:
        run(" ".join(sys.argv[1:]), memory, os.environ.get("MEMGIT_MODEL", "claude-sonnet-5-5"))
    except (anthropic.APIError, MemgitError) as error:
        sys.exit(f"agent.py: {error}")


if __name__ == "__main__":
    main()
