#!/usr/bin/env bash
# Runs a command on the project's Node.js (.nvmrc) whatever Node.js started npm:
# that Node.js's bin directory goes first on PATH, so `node`, and every tool
# whose script starts with `#!/usr/bin/env node` (jest, nest, vite, a nested
# `npm run`), runs on it. The npm scripts start with it.
#   bash scripts/with-node.sh node dist/apps/toolhistory/src/main.js
set -euo pipefail
bin="$(bash "$(dirname "${BASH_SOURCE[0]}")/node-runtime.sh")"
PATH="$bin:$PATH"
export PATH
exec "$@"
