#!/bin/sh
# The virtual environment the Python example's test runs in (test/examples/python.test.ts):
# the official `anthropic` package, installed by pip (on CI machines from a local wheel set).
set -eu
cd "$(dirname "$0")/.."
python3 -m venv .venv-test
.venv-test/bin/pip install --retries 0 --quiet anthropic
.venv-test/bin/python -c 'import anthropic; print("anthropic", anthropic.__version__, "in .venv-test")'
