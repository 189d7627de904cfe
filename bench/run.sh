#!/usr/bin/env bash
# The supportdesk benchmark, one command:
#
#   bench/run.sh                 # every scenario, 3 runs each (about 30 minutes)
#   bench/run.sh --only 1,2      # some scenarios, 1 run each (--runs N for more);
#                                # any `sdbench all` option works
#   bench/run.sh --only 5 --peers   # scenario 5 also against Socket.IO (npm ci
#                                   # in bench/peers/socketio first)
#   bench/run.sh --only 3,5 --ab-bin PATH   # two service builds, A vs B
#   bench/run.sh --soak 30m      # one service under a mixed load that long (90s, 10m, 1h);
#                                # writes bench/SOAK.md and bench/SOAK.png
#
# Needs Postgres (trust auth) and Redis running locally; installs pgbench,
# psql and redis-cli with apt-get when they are missing. Builds the service
# and the load generator in release, creates a fresh database (dropped at the
# end) and a Redis key prefix of its own (deleted at the end), runs each
# scenario beside its baseline, and writes bench/RESULTS.md.
#
# Environment: BENCH_PG (default postgres://postgres@127.0.0.1:5432),
# BENCH_REDIS (default redis://127.0.0.1:6379), CARGO_TARGET_DIR (the
# service's build, default ./target), BENCH_TARGET_DIR (the load generator's,
# default bench/target), BENCH_KEEP_DB=1 keeps the database for inspection,
# BENCH_SERVICE_BIN=path runs that service binary instead of building one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
pg_base=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
redis_url=${BENCH_REDIS:-redis://127.0.0.1:6379}
stamp=$(date -u +%Y%m%d_%H%M%S)
db="bench_${stamp}"
prefix="bench_${stamp}:"
out="$root/bench/out/$stamp"

say() { printf '== %s\n' "$*" >&2; }

missing=()
command -v psql >/dev/null || missing+=(postgresql-client)
command -v pgbench >/dev/null || missing+=(postgresql)
command -v redis-cli >/dev/null || missing+=(redis-tools)
if ((${#missing[@]})); then
    say "installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

psql "$pg_base/postgres" -qtAc 'SELECT 1' >/dev/null || { echo "Postgres is not reachable at $pg_base" >&2; exit 1; }
redis-cli -u "$redis_url" PING >/dev/null || { echo "Redis is not reachable at $redis_url" >&2; exit 1; }

# 10,000 sockets on each side: raise the open-file limit as far as allowed.
hard=$(ulimit -Hn)
if [[ "$hard" == unlimited ]]; then ulimit -n 65536; else ulimit -n "$hard"; fi
say "open-file limit $(ulimit -n)"

if [[ -n "${BENCH_SERVICE_BIN:-}" ]]; then
    service_bin=$BENCH_SERVICE_BIN
    say "using the service binary $service_bin"
else
    say "building the service (release)"
    service_target=${CARGO_TARGET_DIR:-$root/target}
    CARGO_TARGET_DIR="$service_target" cargo build --release --quiet --bin supportdesk
    service_bin=$service_target/release/supportdesk
fi
if [[ " $* " == *" --peers "* ]]; then
    say "installing Socket.IO (bench/peers/socketio, pinned by its package-lock.json)"
    (cd "$root/bench/peers/socketio" && npm ci --no-audit --no-fund --loglevel=error)
fi
say "building the load generator (release)"
bench_target=${BENCH_TARGET_DIR:-$root/bench/target}
CARGO_TARGET_DIR="$bench_target" cargo build --release --quiet --manifest-path "$root/bench/Cargo.toml"

cleanup() {
    if [[ "${BENCH_KEEP_DB:-0}" == 1 ]]; then
        say "kept database $db"
    else
        psql "$pg_base/postgres" -qtAc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    fi
    redis-cli -u "$redis_url" --scan --pattern "${prefix}*" 2>/dev/null \
        | xargs -r -n 500 redis-cli -u "$redis_url" DEL >/dev/null 2>&1 || true
}
trap cleanup EXIT
say "database $db, Redis prefix $prefix, logs in $out"
psql "$pg_base/postgres" -qtAc "CREATE DATABASE $db" >/dev/null

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ "${1:-}" == --soak ]]; then
    [[ -n "${2:-}" ]] || { echo "usage: bench/run.sh --soak DURATION (e.g. 30m)" >&2; exit 2; }
    soak_duration=$2
    shift 2
    exec_soak=("$bench_target/release/sdbench" soak --duration "$soak_duration"
        --service-bin "$service_bin" --database-url "$pg_base/$db" --redis-url "$redis_url"
        --redis-prefix "$prefix" --sql-dir "$root/bench/sql" --out-dir "$out"
        --report "$root/bench/SOAK.md" --commit "$commit"
        --command "bench/run.sh --soak $soak_duration${*:+ $*}" "$@")
    "${exec_soak[@]}"
    exit
fi
"$bench_target/release/sdbench" all \
    --service-bin "$service_bin" \
    --database-url "$pg_base/$db" \
    --redis-url "$redis_url" \
    --redis-prefix "$prefix" \
    --sql-dir "$root/bench/sql" \
    --out-dir "$out" \
    --results "$root/bench/RESULTS.md" \
    --peers-dir "$root/bench/peers" \
    --commit "$commit" \
    --command "bench/run.sh${*:+ $*}" \
    "$@"
