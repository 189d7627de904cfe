#!/usr/bin/env bash
# Browser tests of the web demo: builds the service (debug), starts it on a
# free port with SQLite in a temp dir and the demo enabled (its made-up shop
# on a second free port: another origin), creates a company, an entity and a
# TEST key with the CLI (--json), then runs every *.test.js file here, one
# after the other in the order of their names (each file stands alone: it
# makes its own records and takes its agents offline at its end), node's
# test runner driving Debian's headless Chromium through playwright-core (no
# browser is downloaded). Agents sign in to the console at /app/ with passwords the
# tests set with the CLI, or through SSO against the real OpenID provider of
# tests/oidc (which the service may reach on loopback). Screenshots land in
# web-demo/tests/screenshots/.
#
#   bash web-demo/tests/run.sh
#   SD_TESTS=widget.test.js bash web-demo/tests/run.sh   # one file
#
# Needs: cargo, node >= 18 with npm, /usr/bin/chromium (or CHROMIUM=...).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/supportdesk-target}"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

if [ ! -x "$CHROMIUM" ]; then
  echo "browser tests: no Chromium at $CHROMIUM (apt-get install chromium)" >&2
  exit 1
fi

# SUPPORTDESK_BIN: a service binary already built (CI passes the one its
# test build made); otherwise build one.
BIN="${SUPPORTDESK_BIN:-}"
if [ -z "$BIN" ]; then
  echo "browser tests: building the service"
  (cd "$ROOT" && cargo build --quiet --bin supportdesk)
  BIN="$CARGO_TARGET_DIR/debug/supportdesk"
fi

cd "$HERE"
if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "browser tests: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
# The OpenID provider the SSO sign-in test starts (CI installs it already).
if [ ! -d "$ROOT/tests/oidc/node_modules/oidc-provider" ]; then
  echo "browser tests: npm ci in tests/oidc"
  (cd "$ROOT/tests/oidc" && npm ci --no-audit --no-fund --loglevel=error)
fi

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The service under test: its own SQLite file and data dir, in-process
# realtime (no Redis), nothing from the caller's environment.
unset REDIS_URL SMTP_URL DATABASE_URL
export SUPPORTDESK_DATA_DIR="$WORK/data"
export DATABASE_URL="sqlite://$WORK/demo.db?mode=rwc"
mkdir -p "$SUPPORTDESK_DATA_DIR"

json_field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined)process.exit(1);console.log(v)})' "$1"; }

# The demo's shop and its identity-token route stand only for the demo
# company: the oldest company, under the name the demo gives it.
COMPANY_JSON="$("$BIN" companies create --name "Demo Company" --json)"
COMPANY_ID="$(printf '%s' "$COMPANY_JSON" | json_field id)"
# The tests set agents' passwords with the CLI: the same binary and database.
export SD_COMPANY_ID="$COMPANY_ID" SD_BIN="$BIN"
ENTITY_JSON="$("$BIN" entities create --company "$COMPANY_ID" --name "Northwind Support" --json)"
export SD_ENTITY_ID="$(printf '%s' "$ENTITY_JSON" | json_field id)"
export SD_WIDGET_KEY="$(printf '%s' "$ENTITY_JSON" | json_field widgetKeyTest)"
# A generous rate limit: one test creates a thousand tickets with this key.
KEY_JSON="$("$BIN" keys create --company "$COMPANY_ID" --type test --scopes all --rate-limit 100000 --name "Browser tests" --json)"
export SD_API_KEY="$(printf '%s' "$KEY_JSON" | json_field key)"

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
PORT="$(free_port)"
SHOP_PORT="$(free_port)"
while [ "$SHOP_PORT" = "$PORT" ]; do SHOP_PORT="$(free_port)"; done
export SD_BASE_URL="http://127.0.0.1:$PORT"
export SD_SHOP_URL="http://127.0.0.1:$SHOP_PORT"
export SD_MAIL_DIR="$SUPPORTDESK_DATA_DIR/mail"
export SD_SCREENSHOTS="$HERE/screenshots"
mkdir -p "$SD_SCREENSHOTS"

# Every test's visitor starts chats from 127.0.0.1: the per-IP budget for
# starting chats (10, then one every 2 minutes) would refuse the later ones.
# The SLA scheduler passes every second, so a breach shows within a second
# of its due time (SLA targets are whole minutes: a test still waits one).
# The SSO test's OpenID provider listens on loopback, which the service's
# outbound guard refuses unless told otherwise.
SUPPORTDESK_WIDGET_SESSION_RATE=1000/60s SUPPORTDESK_RULES_INTERVAL_SECS=1 SUPPORTDESK_WEBHOOK_ALLOW_PRIVATE=true \
SUPPORTDESK_BIND="127.0.0.1:$PORT" SUPPORTDESK_DEMO=true SUPPORTDESK_DEMO_SHOP_BIND="127.0.0.1:$SHOP_PORT" RUST_LOG="${RUST_LOG:-warn}" "$BIN" serve >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
  if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$SD_BASE_URL/healthz"; then
    break
  fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "browser tests: the service did not start" >&2
    cat "$WORK/server.log" >&2
    exit 1
  fi
  sleep 0.2
done

echo "browser tests: service on $SD_BASE_URL, demo shop on $SD_SHOP_URL, $("$CHROMIUM" --version 2>/dev/null | head -n1)"
echo "browser tests: screenshots go to $SD_SCREENSHOTS"
status=0
node --test --test-concurrency=1 --test-timeout=300000 ${SD_TESTS:-*.test.js} || status=$?
if [ "$status" -ne 0 ]; then
  echo "browser tests: failed; the end of the service log follows" >&2
  tail -n 80 "$WORK/server.log" >&2
fi
exit "$status"
