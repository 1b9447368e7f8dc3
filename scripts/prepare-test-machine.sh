#!/usr/bin/env bash
# What some tests need beyond Node.js, Java and Maven: from Debian's packages,
# Chromium (the audit console's browser test, driven by playwright-core) and
# openssl (the TLS tests' certificates); as root, installs what is missing,
# otherwise names it, and the tests that need it say so when they fail. Then
# the Python environment (scripts/python-env.sh) the Python example runs in.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=()
command -v openssl >/dev/null || missing+=(openssl)
[[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]] || missing+=(chromium)

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "[test machine] installing ${missing[*]} from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
      { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
  else
    echo "[test machine] missing: ${missing[*]}; the tests that need them will fail until they are installed" >&2
    echo "[test machine]   as root: apt-get install -y --no-install-recommends ${missing[*]}" >&2
  fi
fi

# The Python example runs in the project's Python environment (pinned packages and the toolhistory-client package):
# made here, so that its test does not spend its time limit on pip.
bash scripts/python-env.sh >/dev/null ||
  echo "[test machine] the Python environment could not be made (above: why); the Python example's test will fail" >&2
