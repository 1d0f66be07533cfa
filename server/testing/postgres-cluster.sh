#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store-facing suites, on 127.0.0.1 only, in a temp dir.
#   start [port]   initdb + pg_ctl start; prints MARQUEE_TEST_DATABASE_URL=… and the data dir
#   stop <dir>     stops that cluster and removes its dir
# Usage: eval "$(server/testing/postgres-cluster.sh start)"; npx vitest run …; server/testing/postgres-cluster.sh stop "$MARQUEE_TEST_PG_DIR"
# Durability is off (fsync, full pages): the data lives as long as the test run.
set -euo pipefail

PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
if [ ! -x "$PG_BIN/initdb" ]; then
  echo "postgres-cluster: no PostgreSQL server binaries (apt-get install postgresql)" >&2
  exit 1
fi

# PostgreSQL refuses to run as root: run its binaries as the postgres user then.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    port="${2:-55432}"
    dir="$(mktemp -d "${TMPDIR:-/tmp}/marquee-pg-XXXXXX")"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$PG_BIN/initdb" -D "$dir/data" -U marquee --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log"
    as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start -o \
      "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=off -c full_page_writes=off -c synchronous_commit=off" \
      >/dev/null
    echo "export MARQUEE_TEST_DATABASE_URL=postgres://marquee@127.0.0.1:$port/postgres"
    echo "export MARQUEE_TEST_PG_DIR=$dir"
    ;;
  stop)
    dir="${2:?usage: postgres-cluster.sh stop <dir>}"
    as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start [port] | stop <dir>" >&2
    exit 2
    ;;
esac
