#!/usr/bin/env bash
# The Python client's test environment: a virtual environment in
# .cache/python-venv with clients/python/requirements-test.txt (pinned) and
# the package itself installed as a user would (`pip install
# ./clients/python[...]`, every extra). Re-running it is cheap: the
# requirements are installed again only when their file changed. Prints the
# environment's python on stdout.
#   --editable  installs the package in editable mode instead (for working on it)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=.cache/python-venv
requirements=clients/python/requirements-test.txt
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
  echo "[python] creating $venv with $("$python" --version 2>&1)" >&2
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
  echo "[python] installing $requirements" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements" >&2
  echo "$wanted" >"$stamp"
fi

extras='[openai-agents,langchain,pydantic-ai,adk,agent-framework]'
if [[ "${1:-}" == "--editable" ]]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e "./clients/python$extras" >&2
else
  # Not editable: the tests import the package as pip installed it, so a file left out of the wheel fails them.
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "./clients/python$extras" >&2
  # Its dependencies come from the pinned file above; this checks that they satisfy the package's own ranges.
  "$venv/bin/python" -m pip check >&2
fi
echo "$(pwd)/$venv/bin/python"
