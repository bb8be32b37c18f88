#!/usr/bin/env bash
# Removes what the network-fault harness (test/netfault) made: every process inside each network namespace
# whose name starts with the prefix (by its id: TERM, then KILL), the namespace itself (its veths go with it)
# and the PostgreSQL data directories under ${TMPDIR:-/tmp} with that prefix. The test calls it with its own
# run's prefix; .ci/run's trap with the default, after an interrupted run.
set -u
prefix="${1:-netfault-}"
case "$prefix" in netfault-*) ;; *) echo "cleanup.sh: refusing prefix '$prefix'" >&2; exit 2 ;; esac
command -v ip >/dev/null 2>&1 || exit 0
spaces=$(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${prefix}" || true)
for ns in $spaces; do
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
done
for ns in $spaces; do
  for _ in $(seq 1 50); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
done
for ns in $spaces; do
  for _ in $(seq 1 20); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
  ip netns del "$ns" 2>/dev/null || true
done
find "${TMPDIR:-/tmp}" -maxdepth 1 -name "${prefix}*" -type d -exec rm -rf {} + 2>/dev/null
exit 0
