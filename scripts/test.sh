#!/usr/bin/env bash
# The one test command (README, CI): installs what the tests need into .venv, then runs
# ruff, mypy --strict and every suite (unit, functional, integration) with pytest-xdist.
#
#   bash scripts/test.sh                 # everything
#   bash scripts/test.sh tests/unit -x   # pass arguments straight to one pytest run
#
# Environment: PYTHON (interpreter for a new .venv, default python3; needs >= 3.11),
# KILN_TEST_WORKERS (xdist workers, default 2), KILN_REQUIRE_SERVICES=1 (CI: a missing
# PostgreSQL/MariaDB fails instead of skipping).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
WORKERS=${KILN_TEST_WORKERS:-2}
VENV=.venv

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
        echo "scripts/test.sh: Python >= 3.11 is required (set PYTHON=...)" >&2; exit 2; }
    "$PYTHON" -m venv "$VENV"
fi

# Reinstall only when the declared dependencies changed (or nothing is installed yet).
stamp="$VENV/.kiln-test-deps"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -x "$VENV/bin/kiln" ]; then
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e '.[test]'
    echo "$want" > "$stamp"
fi

echo "== ruff"
"$VENV/bin/ruff" check kiln tests bench
echo "== mypy --strict"
"$VENV/bin/mypy"

pytest=("$VENV/bin/pytest" -p no:cacheprovider -n "$WORKERS" --durations=10 -q)

if [ $# -gt 0 ]; then
    exec "${pytest[@]}" "$@"
fi

status=0
for suite in unit functional integration; do
    echo "== pytest tests/$suite"
    set +e
    "${pytest[@]}" "tests/$suite"
    rc=$?
    set -e
    if [ $rc -eq 5 ]; then
        echo "scripts/test.sh: no tests were collected in tests/$suite; that is a failure" >&2
        rc=1
    fi
    if [ $rc -ne 0 ] && [ $status -eq 0 ]; then
        status=$rc
    fi
done
exit $status
