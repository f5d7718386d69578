"""The package as pip installed it: typed, importable without `anthropic`, its version."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import subprocess
import sys
from pathlib import Path

import memgit


def test_it_is_the_installed_package_and_it_is_typed() -> None:
    # Imported from the virtual environment's site-packages (pip install ./clients/python), not the source tree.
    assert "site-packages" in Path(memgit.__file__).parts
    assert importlib.resources.files("memgit").joinpath("py.typed").is_file()
    assert memgit.__version__ == importlib.metadata.version("memgit") == "0.1.0"
    requirements = importlib.metadata.requires("memgit") or []
    assert requirements == ['anthropic<1.14,>=1.13; extra == "anthropic"']


def test_the_client_needs_no_anthropic_package() -> None:
    script = (
        "import sys; sys.modules['anthropic'] = None\n"  # as if it were not installed
        "import memgit\n"
        "memgit.MemgitClient('http://127.0.0.1:1', 'mgk_x').store('s')\n"
        "try:\n"
        "    memgit.MemgitMemoryTool\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("MemgitMemoryTool needs the anthropic package: pip install 'memgit[anthropic]'")
