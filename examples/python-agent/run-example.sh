#!/usr/bin/env bash
# Runs the Python agent example end to end, as CI does: makes sure Debian's
# packages are installed (installs the missing ones when running as root),
# generates the gRPC stubs, and runs agent.py with Debian's interpreter.
# The environment passes through to agent.py (KAFKA_BROKERS,
# TOOL_EVENTS_TOPIC, TOOLHISTORY_ADDRESS, TOOLHISTORY_TOKEN, TENANT_ID,
# CONVERSATION_ID, ...); so do the arguments. Exits with agent.py's code.
# With --prepare it only installs the packages and generates the stubs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${DEBIAN_PYTHON:-/usr/bin/python3}"
packages=(python3 python3-confluent-kafka python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc libprotobuf-dev)

if ! command -v dpkg-query > /dev/null; then
  echo "run-example.sh: this example uses Debian's packages, and dpkg-query is missing: not a Debian system?" >&2
  exit 2
fi

missing=()
for package in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2> /dev/null)" != "installed" ]; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "run-example.sh: missing Debian packages: ${missing[*]}" >&2
    echo "  install them as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 2
  fi
  echo "run-example.sh: installing ${missing[*]}" >&2
  # apt's output goes to stderr: stdout is the example's.
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi

"$here/generate-stubs.sh"

# Debian's python3-* packages live in Debian's interpreter's dist-packages;
# another python3 earlier on PATH (pyenv, a virtualenv) does not see them.
if ! "$python" -c 'import confluent_kafka, grpc, google.protobuf' 2> /dev/null; then
  echo "run-example.sh: $python cannot import confluent_kafka, grpc and google.protobuf (set DEBIAN_PYTHON to Debian's interpreter)" >&2
  exit 2
fi

[ "${1:-}" = "--prepare" ] && exit 0
exec "$python" "$here/agent.py" "$@"
