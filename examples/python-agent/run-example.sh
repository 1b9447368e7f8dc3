#!/usr/bin/env bash
# Runs the Python agent example as CI does: with the project's Python
# environment (scripts/python-env.sh: pinned dependencies and the
# toolhistory-client package, installed as pip installs it), passing the
# environment (KAFKA_BROKERS, TOOL_EVENTS_TOPIC, TOOLHISTORY_ADDRESS, ...) and
# the arguments through to agent.py. Exits with agent.py's code.
# With --prepare it only makes the environment.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$(bash "$here/../../scripts/python-env.sh")"

[[ "${1:-}" == "--prepare" ]] && exit 0
exec "$python" "$here/agent.py" "$@"
