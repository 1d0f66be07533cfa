#!/usr/bin/env bash
# npm test's PostgreSQL phases, on one throwaway cluster (postgres-cluster.sh) removed afterwards:
#   store      the store-facing unit suites with MARQUEE_TEST_DATABASE_URL on PostgreSQL
#   e2e        the acceptance flows (Playwright: media uploaded and played on glass, pairing, dashboard
#              upload, fleet control) with each e2e server on a PostgreSQL database of its own
#   replicas   two server processes on one PostgreSQL and one bucket behind a loopback nginx
#   all        the three, in that order (what `npm test` runs last)
# Without Debian's postgresql (or nginx, for the replica test) the phases are skipped with a notice,
# so `npm test` stays true on a machine that has only Node and Chromium; MARQUEE_REQUIRE_POSTGRES=1
# (set by .ci/run and by `npm run test:postgres`) makes that a failure instead. PG_BIN names another
# PostgreSQL bin directory (as for postgres-cluster.sh).
# The e2e phase needs the builds `npm test` made before it (build:web, build:kiosk, build:cli).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
phase="${1:-all}"
# Anything after the phase goes to the replica test (`-- directory`: blobs in one shared directory).
replica_args=("${@:2}")

# The suites whose behaviour depends on the engine: the store, and the features whose queries lock,
# count or page (idempotency, leases, quotas, fan-outs), as `npm run test:postgres` has run them.
STORE_SUITES=(server/store server/events server/replicas server/media server/playlists server/kv server/tenants
  server/screens server/manifests server/pairing server/fleet server/operators server/runtime/egress-budgets.test.ts
  server/agents/agents.test.ts server/invitations server/operations server/comments server/sign-in/resets.test.ts
  server/applications/applications.test.ts)
E2E_SPECS=(e2e/cli-quick-start.spec.ts e2e/playback/images-and-video.spec.ts e2e/pairing.spec.ts e2e/dashboard/media-upload.spec.ts
  e2e/fleet-control.spec.ts)

pg_bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
missing=()
[ -x "$pg_bin/initdb" ] || missing+=(postgresql)
if [ "$phase" = all ] || [ "$phase" = replicas ]; then command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx); fi
if [ "${#missing[@]}" -gt 0 ]; then
  message="the PostgreSQL phases ($phase) need Debian's ${missing[*]} (apt-get install ${missing[*]})"
  if [ "${MARQUEE_REQUIRE_POSTGRES:-}" = 1 ]; then
    echo "postgres-phases: FAILED: $message" >&2
    exit 1
  fi
  echo "postgres-phases: SKIPPED: $message; the SQLite phases above ran" >&2
  exit 0
fi

run_store() {
  echo "postgres-phases: store-facing suites on PostgreSQL" >&2
  npx vitest run --project unit "${STORE_SUITES[@]}"
}
run_e2e() {
  echo "postgres-phases: acceptance flows on PostgreSQL" >&2
  npx playwright test -c e2e/playwright.config.ts "${E2E_SPECS[@]}"
}
run_replicas() {
  echo "postgres-phases: replica test" >&2
  # Starts a cluster of its own (its database is made by hand, not per test).
  node --import tsx server/testing/replica-test.ts ${replica_args[@]+"${replica_args[@]}"}
}

if [ "$phase" = replicas ]; then
  run_replicas
  exit 0
fi

eval "$("$here/postgres-cluster.sh" start "${MARQUEE_TEST_PG_PORT:-55439}")"
trap '"$here/postgres-cluster.sh" stop "$MARQUEE_TEST_PG_DIR"' EXIT
case "$phase" in
  store) run_store ;;
  e2e) run_e2e ;;
  all)
    run_store
    run_e2e
    run_replicas
    ;;
  *)
    echo "usage: $0 [store|e2e|replicas|all]" >&2
    exit 2
    ;;
esac
