#!/usr/bin/env bash
# Property-based API testing: schemathesis against the running service, from
# its own OpenAPI document, on SQLite and on Postgres + Redis (side by side).
#   .ci/schemathesis.sh [sqlite] [postgres]      (default: both)
# Every operation gets generated valid and invalid inputs; the checks are
# not_a_server_error, status_code_conformance, content_type_conformance,
# response_schema_conformance and response_headers_conformance. No
# operation is excluded (the visitor widget's public `/widget…` ones
# included; the widget's per-IP limits are raised for the run). Before them, boundary_values.py sends the edges of
# every date and number query parameter (far-out dates, years 0001, 1969 and
# 10000, `from` after `to`, limits and offsets past 64 bits, negative,
# fractional, non-numeric) to every documented GET: no 5xx, and a refused
# value is 400 `validation_failed` naming the parameter.
set -euo pipefail
cd "$(dirname "$0")/.."

ST_VERSION=4.32.5
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/supportdesk-target}"
# SUPPORTDESK_BIN: a service binary already built (.ci/run passes the one
# its test build made); otherwise build one.
BIN="${SUPPORTDESK_BIN:-$CARGO_TARGET_DIR/debug/supportdesk}"
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-60}"
PG_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
REDIS_URL_ST="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
CHECKS=not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance

if ! schemathesis --version 2>/dev/null | grep -q "$ST_VERSION"; then
  python3 -m pip install --quiet --disable-pip-version-check "schemathesis==$ST_VERSION"
fi
[ -n "${SUPPORTDESK_BIN:-}" ] || cargo build --quiet --bin supportdesk

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

run_backend() {
  local backend=$1 port=$2 dir db="" pid rc=0
  dir=$(mktemp -d)
  (
    export SUPPORTDESK_DATA_DIR="$dir" SUPPORTDESK_BIND="127.0.0.1:$port" RUST_LOG="${RUST_LOG:-warn}"
    # Every request comes from one IP: with the widget's per-IP limits as
    # shipped, most widget operations would be fuzzed into their
    # (documented) 429 instead of their handlers.
    export SUPPORTDESK_WIDGET_REQUEST_RATE=1000000/60s SUPPORTDESK_WIDGET_SESSION_RATE=1000000/60s
    export SUPPORTDESK_VISITOR_UPLOAD_RATE=1000000/60s
    case "$backend" in
      sqlite)
        export DATABASE_URL="sqlite://$dir/schemathesis.db?mode=rwc"
        unset REDIS_URL ;;
      postgres)
        db="sdst_$$_$RANDOM"
        psql "$PG_URL" -qc "create database $db" >/dev/null
        export DATABASE_URL="${PG_URL%/*}/$db" REDIS_URL="$REDIS_URL_ST"
        export SUPPORTDESK_REDIS_PREFIX="sdst:$db:" ;;
    esac
    "$BIN" migrate >/dev/null
    company=$("$BIN" companies create --name "Schemathesis" --json | json_field id)
    "$BIN" entities create --company "$company" --name "Main" --json >/dev/null
    new_key() {
      "$BIN" keys create --company "$company" --type test --scopes all \
        --rate-limit 100000000 --json | json_field key
    }
    "$BIN" serve >"$dir/service.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
      sleep 0.1
    done
    # One worker: with two, CPython 3.11's parser can fail inside hypothesis
    # ("AST constructor recursion depth mismatch"), an error of the tool.
    st() {
      (cd "$dir" && schemathesis run "http://127.0.0.1:$port/api/v1/openapi.json" \
        --checks "$CHECKS" \
        --max-examples "$MAX_EXAMPLES" \
        --phases examples,coverage,fuzzing,stateful \
        --workers 1 \
        --request-timeout 30 \
        --suppress-health-check all \
        --no-color \
        "$@")
    }
    # Two runs with a key each, every operation in one of them: the
    # /api-keys operations may deactivate, revoke or throttle the key they
    # are given (its id is in GET /api-keys), so they run last, on a key of
    # their own, instead of starving every other operation of a key.
    echo "boundary values on $backend"
    python3 .ci/boundary_values.py "http://127.0.0.1:$port" "$(new_key)" || rc=$?
    echo "schemathesis on $backend (port $port, max $MAX_EXAMPLES examples per operation)"
    st --header "X-API-Key: $(new_key)" --exclude-path-regex '^/api/v1/api-keys' || rc=$?
    st --header "X-API-Key: $(new_key)" --include-path-regex '^/api/v1/api-keys' || rc=$?
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if grep -q "panicked" "$dir/service.log"; then
      echo "the service panicked:"; grep -A5 panicked "$dir/service.log" | head -40; rc=1
    fi
    if [ "$rc" != 0 ]; then
      echo "--- service log (last 40 lines)"; tail -n 40 "$dir/service.log"
    fi
    if [ -n "$db" ]; then
      psql "$PG_URL" -qc "drop database if exists $db with (force)" >/dev/null 2>&1 || true
      redis-cli -u "$REDIS_URL_ST" --scan --pattern "sdst:$db:*" 2>/dev/null \
        | xargs -r redis-cli -u "$REDIS_URL_ST" del >/dev/null 2>&1 || true
    fi
    exit "$rc"
  ) || rc=$?
  rm -rf "$dir"
  return "$rc"
}

backends=("$@")
[ ${#backends[@]} -eq 0 ] && backends=(sqlite postgres)
# The backends run side by side (each its own service, port and database;
# schemathesis is one Python process each), their output kept apart and
# printed one after the other.
logs=$(mktemp -d)
pids=()
ports=()
for backend in "${backends[@]}"; do
  # A free port each, distinct from the ones already handed out.
  port=$(free_port)
  while [[ " ${ports[*]} " == *" $port "* ]]; do port=$(free_port); done
  ports+=("$port")
  run_backend "$backend" "$port" >"$logs/$backend.log" 2>&1 &
  pids+=("$!")
done
status=0
for i in "${!backends[@]}"; do
  wait "${pids[$i]}" || status=1
  echo "=== schemathesis: ${backends[$i]}"
  cat "$logs/${backends[$i]}.log"
done
rm -rf "$logs"
exit "$status"
