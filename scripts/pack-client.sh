#!/usr/bin/env bash
# Builds @toolhistory/client (CommonJS, ES modules, declarations) and packs it.
# The tarball's absolute path is the last line printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.cache/client-package"
mkdir -p "$out"
cd "$root/libs/client"
"$root/node_modules/.bin/tsup" >&2
tarball="$(npm pack --silent --pack-destination "$out" | tail -n1)"
echo "$out/$tarball"
