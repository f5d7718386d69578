"""The Python blocks of docs/python.md, each run as a program (in order, against one store) with a real
memgit server and `memgit sandbox` as the Messages API, as a reader would run them after the guide's setup."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import List

from conftest import Env, git_log


def python_blocks(markdown: str) -> List[str]:
    return [match.group(1) for match in re.finditer(r"^```python\n(.*?)^```$", markdown, flags=re.S | re.M)]


def test_every_python_block_of_the_guide_runs(env: Env) -> None:
    blocks = python_blocks(env.python_guide.read_text("utf-8"))
    assert len(blocks) == 4
    store = "py-docs-guide"
    run_env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MEMGIT_URL": env.url,
        "MEMGIT_KEY": env.write_key,
        "MEMGIT_STORE": store,
        "ANTHROPIC_BASE_URL": env.sandbox_url,
        "ANTHROPIC_API_KEY": "sandbox",
    }
    outputs = []
    for i, block in enumerate(blocks):
        done = subprocess.run([sys.executable, "-c", block], env=run_env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"block {i + 1} of docs/python.md failed:\n{block}\n{done.stdout}{done.stderr}"
        outputs.append(done.stdout)
    noted = "Noted in /memories/notes.md: “{}” (memgit sandbox: a scripted stand-in for Claude; nothing left this machine.)"
    assert outputs[0].startswith(noted.format("Remember that I prefer tabs.") + "\nsession sess_")
    assert outputs[1] == "Let me check my memory first.\n" + noted.format("Remember that we deploy on Fridays.") + "\n"
    assert outputs[2].startswith("Here're the files and directories up to 2 levels deep in /memories")
    assert outputs[3].startswith("File created successfully at: /memories/deploys.md ")
    commits = git_log(env.root / store)
    assert [(c.trailers.get("Memory-Command"), c.trailers.get("Memory-Path")) for c in commits[1:]] == [
        ("create", "/memories/notes.md"),
        ("insert", "/memories/notes.md"),
        ("create", "/memories/deploys.md"),
    ]
    assert commits[3].subject == "toolu_01DocsClient"
    assert all(re.fullmatch(r"toolu_01[A-Za-z0-9]{22}", c.subject) for c in commits[1:3])
    assert (env.root / store / "memories" / "notes.md").read_text("utf-8") == "# Notes\n- Remember that we deploy on Fridays.\n- Remember that I prefer tabs.\n"
