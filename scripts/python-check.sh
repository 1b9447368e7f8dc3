#!/usr/bin/env bash
# The Python client's checks and unit tests (`npm run test:python`): its
# pinned environment (scripts/python-env.sh, the package installed as a user
# installs it), the generated stubs and schema copy current, ruff (lint and
# format), mypy --strict, then pytest's unit tests (not the integration
# tests: test/client/python-package.e2e-spec.ts runs those against the
# service). Runs every step even when one fails, and exits non-zero if any
# did. pytest's report: .cache/pytest-unit.xml.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python="$(bash scripts/python-env.sh)" || { echo "[python] the environment could not be made" >&2; exit 1; }
bin="$(dirname "$python")"
failed=()
step() {
  local name="$1"
  shift
  echo "[python] $name"
  (cd clients/python && "$@") || failed+=("$name")
}

step "generated files current" "$python" scripts/generate.py --check
step "ruff check" "$bin/ruff" check .
step "ruff format --check" "$bin/ruff" format --check .
step "mypy --strict" "$bin/mypy"
mkdir -p .cache
rm -f .cache/pytest-unit.xml
step "pytest (unit)" "$python" -m pytest -m "not integration" -p no:cacheprovider --junitxml=../../.cache/pytest-unit.xml tests/unit

if ((${#failed[@]} > 0)); then
  echo "[python] failed: ${failed[*]}" >&2
  exit 1
fi
echo "[python] all checks passed"
