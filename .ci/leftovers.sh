#!/usr/bin/env bash
# Fails (exit 1) when a process started by this CI run outlived it: ZooKeeper JVMs, participants
# (node/bun/deno/java), watchdogs, anything. .ci/run exports ZKTS_CI_RUN=<id> and every process the
# tests start inherits it, so only this run's processes match (other users' servers on a shared
# machine do not). Waits a few seconds first (the watchdogs poll every second), then lists what is
# left, kills it and fails.
set -u
marker="ZKTS_CI_RUN=${1:?usage: leftovers.sh <run id>}"
mine() {
  local f pid
  for f in $(grep -lzxF "$marker" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${f#/proc/}
    pid=${pid%/environ}
    # Skip this script, .ci/run (its parent) and this script's own subshells.
    [ "$pid" = "$$" ] || [ "$pid" = "$PPID" ] && continue
    [ "$(awk '{print $4}' 2>/dev/null < "/proc/$pid/stat")" = "$$" ] && continue
    echo "$pid"
  done
}
for _ in $(seq 1 10); do
  left=$(mine)
  [ -z "$left" ] && { echo "[ci] no process of this run is left"; exit 0; }
  sleep 1
done
# Only what is still alive now counts: a pid listed a moment ago may have exited meanwhile.
alive=""
for pid in $(mine); do [ -r "/proc/$pid/cmdline" ] && alive="$alive $pid"; done
[ -z "$alive" ] && { echo "[ci] no process of this run is left"; exit 0; }
echo "[ci] FAILED: processes started by this run are still running after it:" >&2
for pid in $alive; do echo "[ci]   $pid $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-200)" >&2; done
for pid in $alive; do kill -CONT "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
exit 1
