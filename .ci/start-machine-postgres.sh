#!/usr/bin/env bash
# Starts the machine's installed PostgreSQL cluster (Debian's postgresql-common)
# when it is down, and gives the tests a role of their own on it with a
# password, leaving the cluster's authentication as Debian set it (peer on the
# socket, scram-sha-256 over TCP). Prints the tests' URL on stdout, or nothing
# when there is no installed cluster or this is not root: the tests then open
# a database by their own rule (a local trust PostgreSQL, else an embedded one).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "[ci postgres] $*" >&2; }

if [[ $(id -u) -ne 0 ]] || ! command -v pg_lsclusters >/dev/null; then
  say "no installed cluster to start here (needs root and Debian's postgresql-common)"
  exit 0
fi
read -r version cluster port status _ < <(pg_lsclusters --no-header | sort -V | tail -n1) || true
if [[ -z "${version:-}" ]]; then
  say "PostgreSQL is installed but has no cluster"
  exit 0
fi
if [[ $status != online ]]; then
  say "starting cluster $version/$cluster on port $port"
  pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start >&2
fi
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$port" >&2

# One random password per machine, kept in the repository's ignored cache.
password_file=.cache/ci-postgres/password
if [[ ! -s $password_file ]]; then
  mkdir -p "$(dirname "$password_file")"
  (umask 077 && openssl rand -hex 24 >"$password_file")
fi
password="$(cat "$password_file")"
# Over stdin, so the password is in no process's arguments.
runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -q -d postgres >/dev/null <<SQL
SELECT set_config('ci.password', '$password', false);
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'toolhistory_ci') THEN
    EXECUTE format('CREATE ROLE toolhistory_ci LOGIN SUPERUSER PASSWORD %L', current_setting('ci.password'));
  ELSE
    EXECUTE format('ALTER ROLE toolhistory_ci LOGIN SUPERUSER PASSWORD %L', current_setting('ci.password'));
  END IF;
END
\$\$;
SQL
say "the tests use role toolhistory_ci (password authentication) on 127.0.0.1:$port"
echo "postgres://toolhistory_ci:$password@127.0.0.1:$port/toolhistory_test"
