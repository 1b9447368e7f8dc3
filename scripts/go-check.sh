#!/usr/bin/env bash
# The Go load generator's checks and tests (`npm run test:go`): bench/floodgen
# (the overload benchmark's load generator) formatted (gofmt), vetted
# (go vet), then its tests with the race detector against a real gRPC server
# on loopback. Runs every step even when one fails, and exits non-zero if any
# did. go test's verbose report: .cache/go-test.log. Needs Go 1.26 or later
# on PATH; its modules come from the Go module proxy on first use.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v go >/dev/null 2>&1; then
  echo "[go] no go on PATH: bench/floodgen needs Go 1.26 or later" >&2
  exit 1
fi
echo "[go] $(go version)"
failed=()
step() {
  local name="$1"
  shift
  echo "[go] $name"
  (cd bench/floodgen && "$@") || failed+=("$name")
}
unformatted() {
  local files
  files="$(gofmt -l .)"
  [[ -z "$files" ]] || { echo "not formatted (gofmt -w): $files" >&2; return 1; }
}

step "gofmt" unformatted
step "go vet" go vet ./...
mkdir -p .cache
rm -f .cache/go-test.log
step "go test -race" bash -c 'set -o pipefail; go test -count=1 -race -v ./... 2>&1 | tee ../../.cache/go-test.log'

if ((${#failed[@]} > 0)); then
  echo "[go] failed: ${failed[*]}" >&2
  exit 1
fi
echo "[go] all checks passed"
