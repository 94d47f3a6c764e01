#!/usr/bin/env bash
# Installs the Debian packages the tests use (real ZooKeeper 3.8.0 server jars, the Java client and
# Curator for interop checks, openssl for TLS certificates, dnsmasq-base as a real DNS server for the
# resolver tests). apt-get runs only when one is missing,
# quietly: one line, apt's output in a log file.
set -euo pipefail

PACKAGES=(zookeeper libzookeeper-java libcurator-recipes-java openssl python3-kazoo gnuplot-nox krb5-kdc krb5-admin-server krb5-user dnsmasq-base)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "[install-deps] Debian packages present: ${PACKAGES[*]}"
else
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  log="${ZK_LINES_CACHE:-$HOME/.cache/zookeeper-ts}/apt-install.log"
  mkdir -p "$(dirname "$log")"
  echo "[install-deps] installing ${missing[*]} with apt-get (output in $log)"
  { "${sudo[@]}" apt-get update &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; } >>"$log" 2>&1 ||
    { echo "[install-deps] apt-get failed; last lines of $log:" >&2; tail -n 20 "$log" >&2; exit 1; }
fi

# The other server lines (3.4.13, 3.9.3, newest 3.9) and Curator 5.7.1 from Debian's archive, into a
# private cache (nothing installed system-wide); a no-op when cached.
bash "$(dirname "${BASH_SOURCE[0]}")/fetch-zk-lines.sh"
