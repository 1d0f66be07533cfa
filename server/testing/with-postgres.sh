#!/usr/bin/env bash
# Runs a command with MARQUEE_TEST_DATABASE_URL pointing at a throwaway PostgreSQL cluster on
# 127.0.0.1 (postgres-cluster.sh), and removes the cluster afterwards whatever the command did.
# Usage: server/testing/with-postgres.sh npx vitest run --project unit server/store …
set -euo pipefail
here="$(dirname "$0")"
port="${MARQUEE_TEST_PG_PORT:-55439}"
eval "$("$here/postgres-cluster.sh" start "$port")"
trap '"$here/postgres-cluster.sh" stop "$MARQUEE_TEST_PG_DIR"' EXIT
"$@"
