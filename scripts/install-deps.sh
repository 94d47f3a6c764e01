#!/usr/bin/env bash
# Installs the Debian packages the tests use (real ZooKeeper 3.8.0 server jars, the Java client and
# Curator for interop checks, openssl for TLS certificates). apt-get runs only when one is missing.
set -euo pipefail

PACKAGES=(zookeeper libzookeeper-java libcurator-recipes-java openssl gnuplot-nox)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "[install-deps] Debian packages present: ${PACKAGES[*]}"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "[install-deps] installing: ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
