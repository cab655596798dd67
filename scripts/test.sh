#!/usr/bin/env bash
# The one test command: installs what the tests need (into .venv) and runs every suite.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e '.[test]'
.venv/bin/ruff check kiln tests bench
.venv/bin/pytest -n 2 -q "$@"
