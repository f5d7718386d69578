#!/bin/sh
# The virtual environment the Python example's test runs in (test/examples/python.test.ts): the official
# `anthropic` package, installed by pip. The test makes it itself when it is missing (through this script,
# test/support/python-venv.ts); run it by hand to make or repair it. Usage: scripts/python-venv.sh [DIR]
# (default: .venv-test in the checkout). pip runs with --retries 0: an unreachable index fails at once.
set -eu
dir=${1:-"$(dirname "$0")/../.venv-test"}
python3 -m venv "$dir"
"$dir/bin/pip" install --retries 0 --quiet --disable-pip-version-check anthropic
"$dir/bin/python" -c 'import anthropic; print("anthropic", anthropic.__version__)'
# Read by the tests: the environment is complete (written last, so an interrupted run is made again).
echo anthropic > "$dir/.memgit-ready"
