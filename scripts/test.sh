#!/usr/bin/env bash
# The one test command (README, CI): installs what the tests need into .venv-test, then
# runs ruff, mypy --strict (and its Any-expressions gate), the import-layer contracts, the
# performance gate, the documentation build (mkdocs build --strict) and every suite (unit,
# functional, integration) with pytest-xdist.
# The tests have their own environment so that a `kiln serve` running from the README's
# first command (.venv) keeps its installation while this reinstalls Kiln.
#
#   bash scripts/test.sh                 # everything
#   bash scripts/test.sh lint            # only ruff, mypy --strict, lint-imports, mkdocs
#   bash scripts/test.sh tests/unit -x   # arguments go straight to one pytest run (no ruff/mypy)
#
# Environment: PYTHON (interpreter for a new .venv-test, default python3; needs >= 3.11),
# KILN_TEST_VENV (the tests' environment, default .venv-test),
# KILN_TEST_WORKERS (xdist workers, default 2), KILN_REQUIRE_SERVICES=1 (CI: a missing
# PostgreSQL/MariaDB fails instead of skipping).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
WORKERS=${KILN_TEST_WORKERS:-2}
VENV=${KILN_TEST_VENV:-.venv-test}

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

pytest=("$VENV/bin/pytest" -p no:cacheprovider -n "$WORKERS" --durations=10 -q)

lint_only=false
if [ "${1:-}" = lint ] && [ $# -eq 1 ]; then
    lint_only=true
elif [ $# -gt 0 ]; then
    exec "${pytest[@]}" "$@"
fi

# Every step runs even when an earlier one failed, so one run reports every problem; the
# exit status is the first failure's.
status=0
failed=()
step() {
    local name=$1; shift
    echo "== $name"
    set +e
    "$@"
    local rc=$?
    set -e
    if [ $rc -ne 0 ]; then
        failed+=("$name")
        if [ $status -eq 0 ]; then status=$rc; fi
    fi
    return 0
}
# the static checks (no tests, no performance gate): the whole of `scripts/test.sh lint`,
# and the first steps of a full run
lint_steps() {
    step "ruff" "$VENV/bin/ruff" check kiln tests bench
    # the same run reports each package's share of Any expressions, gated below
    any_report=$(mktemp -d)
    step "mypy --strict" "$VENV/bin/mypy" --any-exprs-report "$any_report"
    step "Any expressions (kiln.engine under 5%)" \
        "$VENV/bin/python" scripts/any_exprs.py "$any_report" --max kiln.engine=5
    rm -rf "$any_report"
    step "import layers (lint-imports)" "$VENV/bin/lint-imports" --no-cache
    # the documentation site (mkdocs.yml): a broken link, anchor or nav entry fails (seconds)
    docs_site=$(mktemp -d)
    step "docs (mkdocs build --strict)" "$VENV/bin/mkdocs" build --strict --site-dir "$docs_site"
    rm -rf "$docs_site"
}
report() {
    if [ $status -ne 0 ]; then
        echo "scripts/test.sh: FAILED: ${failed[*]}" >&2
    else
        echo "scripts/test.sh: all passed"
    fi
    exit $status
}
if $lint_only; then
    lint_steps
    report
fi
suite() {
    "${pytest[@]}" "tests/$1"
    local rc=$?
    if [ $rc -eq 5 ]; then
        echo "scripts/test.sh: no tests were collected in tests/$1; that is a failure" >&2
        return 1
    fi
    return $rc
}

# The real Keystone the identity tests run (tests/support/keystone.py) is installed once
# per machine into ~/.cache/kiln-test; a cold install (~40 s) overlaps the linters.
keystone_log=$(mktemp)
"$VENV/bin/python" -m tests.support.keystone > "$keystone_log" 2>&1 &
keystone_install=$!
# Debian's chromium and firefox-esr for the dashboard's browser tests, installed (as root,
# via apt-get) in the same window when missing; tests/support/browser.py and firefox.py
# report what went wrong.
chromium_log=$(mktemp)
bash tests/support/install_browsers.sh > "$chromium_log" 2>&1 &
chromium_install=$!
# Heat's in-instance agents (tests/functional/agents, tests/support/agents.py), likewise:
# a cold install (a minute or more) overlaps the linters and the unit tests.
agents_log=$(mktemp)
"$VENV/bin/python" -m tests.support.agents > "$agents_log" 2>&1 &
agents_install=$!

# The cloud suite (tests/cloud: real Keystone, Neutron, Nova, Glance, Cinder) needs a
# cloud that takes minutes to install the first time and 25-80 s to start, and mostly
# waits on it: it runs in the background, beside the other steps, on one pytest process
# sharing one cloud, and reports at the end.
cloud_log=$(mktemp)
cloud_suite() {
    # a failed start is reported by the suite itself (skip, or fail under
    # KILN_REQUIRE_SERVICES=1), with the reason
    "$VENV/bin/python" -m tests.support.cloud start || true
    "$VENV/bin/pytest" -p no:cacheprovider -p no:xdist --durations=10 -q tests/cloud
    local rc=$?
    "$VENV/bin/python" -m tests.support.cloud stop >/dev/null 2>&1 || true
    if [ $rc -eq 5 ]; then
        echo "scripts/test.sh: no tests were collected in tests/cloud; that is a failure" >&2
        return 1
    fi
    return $rc
}
cloud_suite > "$cloud_log" 2>&1 &
cloud_pid=$!
cloud_result() {
    local rc=0
    wait "$cloud_pid" || rc=$?
    cat "$cloud_log"
    rm -f "$cloud_log"
    return $rc
}

lint_steps
# instruction counts of the hot paths (callgrind) against bench/perf_baseline.json: fails
# on a case 25% slower or starting processes it did not (bench/README.md, "The gate")
step "performance gate (scripts/perf_gate.py)" "$VENV/bin/python" scripts/perf_gate.py

wait "$keystone_install" || true   # a failure is reported by the tests that need it
cat "$keystone_log"; rm -f "$keystone_log"
wait "$chromium_install" || tail -3 "$chromium_log"
rm -f "$chromium_log"
for s in unit functional integration; do
    if [ "$s" = functional ]; then
        wait "$agents_install" || true   # a failure is reported by the agent tests
        cat "$agents_log"; rm -f "$agents_log"
    fi
    step "pytest tests/$s" suite "$s"
done
step "pytest tests/cloud (ran in the background)" cloud_result
report
