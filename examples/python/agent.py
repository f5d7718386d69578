"""A Claude agent in Python whose memory lives in a memgit server.

The official `anthropic` package runs the Messages API loop; every memory tool_use block is sent, as is,
to `POST /api/v1/stores/{store}/tool-calls`, and the tool_result the server answers goes back to Claude
unchanged. Only the standard library is used for HTTP.

    pip install anthropic
    export ANTHROPIC_API_KEY=sk-ant-...
    export MEMGIT_URL=http://127.0.0.1:8080 MEMGIT_KEY=mgk_... MEMGIT_STORE=acme-1
    python examples/python/agent.py "I'm Dana from Acme. We only deploy on Fridays; remember that."
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from secrets import token_hex

import anthropic

MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}


class MemgitStore:
    """One store of a memgit server, reached with a key of scope write."""

    def __init__(self, url, key, store, session, retries=4):
        self.endpoint = f"{url.rstrip('/')}/api/v1/stores/{urllib.request.quote(store, safe='')}/tool-calls"
        self.key = key
        self.session = session
        self.retries = retries

    def execute(self, block):
        """Send one memory tool_use block; return the server's tool_result block (a dict)."""
        body = json.dumps(
            {
                "tool_use": {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input},
                "session": self.session,
            }
        ).encode("utf-8")
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(
                self.endpoint,
                data=body,
                method="POST",
                headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    return json.loads(response.read().decode("utf-8"))["tool_result"]
            except urllib.error.HTTPError as error:
                # 503 (a busy store, a restart) and 429 are safe to retry: the same tool_use id is never
                # applied twice.
                if error.code in (429, 503) and attempt < self.retries:
                    time.sleep(min(5.0, float(error.headers.get("Retry-After") or 0.2 * 2**attempt)))
                    continue
                detail = error.read().decode("utf-8", "replace")
                raise RuntimeError(f"memgit server answered {error.code}: {detail}") from None
            except urllib.error.URLError:
                if attempt < self.retries:
                    time.sleep(0.2 * 2**attempt)
                    continue
                raise


def new_session_id():
    return "sess_" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "_" + token_hex(2)


def run(prompt, store, model, max_tokens=2048):
    client = anthropic.Anthropic()  # ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL from the environment
    messages = [{"role": "user", "content": prompt}]
    while True:
        message = client.beta.messages.create(model=model, max_tokens=max_tokens, messages=messages, tools=[MEMORY_TOOL])
        for block in message.content:
            if block.type == "text":
                print(block.text)
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in message.content]})
        tool_uses = [block for block in message.content if block.type == "tool_use"]
        if message.stop_reason != "tool_use" or not tool_uses:
            return message
        results = []
        for block in tool_uses:
            if block.name == "memory":
                result = store.execute(block)
                print(f"memory {block.input.get('command')}: {'error' if result.get('is_error') else 'ok'} ({block.id})", file=sys.stderr)
                results.append(result)
            else:
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": f"Error: unknown tool {block.name}", "is_error": True})
        messages.append({"role": "user", "content": results})


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: agent.py "your message"  (env: MEMGIT_URL, MEMGIT_KEY, MEMGIT_STORE, ANTHROPIC_API_KEY)')
    missing = [name for name in ("MEMGIT_KEY", "MEMGIT_STORE") if not os.environ.get(name)]
    if missing:
        sys.exit(f"agent.py: set {', '.join(missing)} (memgit keys create --stores ... --scope write prints a key)")
    session = os.environ.get("MEMGIT_SESSION") or new_session_id()
    print(f"session {session}", file=sys.stderr)
    store = MemgitStore(os.environ.get("MEMGIT_URL", "http://127.0.0.1:8080"), os.environ["MEMGIT_KEY"], os.environ["MEMGIT_STORE"], session)
    run(" ".join(sys.argv[1:]), store, os.environ.get("MEMGIT_MODEL", "claude-sonnet-5-5"))


if __name__ == "__main__":
    main()
