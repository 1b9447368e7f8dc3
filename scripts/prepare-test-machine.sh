#!/usr/bin/env bash
# What some tests need beyond Node.js, Java and Maven, from Debian's packages:
# Chromium (the audit console's browser test, driven by playwright-core),
# openssl (the TLS tests' certificates), and the Python example's packages
# (examples/python-agent/run-example.sh --prepare). As root, installs what is
# missing; otherwise names it, and the tests that need it say so when they fail.
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

if command -v dpkg-query >/dev/null; then
  bash examples/python-agent/run-example.sh --prepare >/dev/null ||
    echo "[test machine] the Python example is not ready (above: what it lacks); its test will fail" >&2
fi
