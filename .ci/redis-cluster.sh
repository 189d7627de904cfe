#!/usr/bin/env bash
# A throwaway 3-master Redis Cluster on loopback for the cluster tests:
#   .ci/redis-cluster.sh start   # prints the REDIS_URL to use
#   .ci/redis-cluster.sh stop
# Both are idempotent. Ports default to 7301-7303 (and 17301-17303 for the
# cluster bus), away from the usual 6379 and 7000-7005 of local setups;
# REDIS_CLUSTER_PORT moves the first. No replicas: a failover needs one per
# master and several seconds of node timeouts, so it is left out of CI.
set -euo pipefail

first="${REDIS_CLUSTER_PORT:-7301}"
ports=("$first" "$((first + 1))" "$((first + 2))")
dir="${REDIS_CLUSTER_DIR:-${TMPDIR:-/tmp}/supportdesk-redis-cluster}"

up() { redis-cli -h 127.0.0.1 -p "$1" ping >/dev/null 2>&1; }

cluster_ok() {
  redis-cli -h 127.0.0.1 -p "${ports[0]}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'
}

start() {
  mkdir -p "$dir"
  for port in "${ports[@]}"; do
    up "$port" && continue
    # A node config left by an earlier cluster would make this node
    # rejoin it; the cluster is created afresh instead.
    rm -f "$dir/nodes-$port.conf" "$dir/$port.log"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$port" \
      --cluster-enabled yes --cluster-config-file "nodes-$port.conf" \
      --cluster-node-timeout 5000 --save "" --appendonly no \
      --dir "$dir" --logfile "$dir/$port.log" --pidfile "$dir/$port.pid"
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 1 50); do up "$port" && break; sleep 0.1; done
    up "$port" || { echo "redis-server on port $port did not start (see $dir/$port.log)" >&2; exit 1; }
  done
  if ! cluster_ok; then
    # Nodes that know only themselves: forget any half-made cluster first.
    for port in "${ports[@]}"; do
      redis-cli -h 127.0.0.1 -p "$port" flushall >/dev/null 2>&1 || true
      redis-cli -h 127.0.0.1 -p "$port" cluster reset hard >/dev/null 2>&1 || true
    done
    redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
    for _ in $(seq 1 100); do cluster_ok && break; sleep 0.1; done
    cluster_ok || { echo "the Redis Cluster did not reach cluster_state:ok" >&2; exit 1; }
  fi
  echo "redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
}

stop() {
  for port in "${ports[@]}"; do
    up "$port" && redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
  done
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
