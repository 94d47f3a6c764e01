#!/usr/bin/env bash
# Fetches other ZooKeeper server lines (and Curator 5.7.1) from Debian's own archive without installing
# anything system-wide: a private apt configuration (sources, lists, archives, caches) under
#   ${ZK_LINES_CACHE:-$HOME/.cache/zookeeper-ts}/debian
# then `apt-get download NAME/SUITE` (never a pinned version: a suite moves on) and `dpkg-deb -x` of each
# .deb into lines/<line>/root. The server jar is copied with its manifest Class-Path removed (it points at
# /usr/share/java, the system's 3.8.0 jars) and lines/<line>/classpath lists every jar explicitly.
#
#   bash scripts/fetch-zk-lines.sh [3.4] [3.9.3] [3.9] [curator-5.7.1]   (no argument: all of them)
#
# Quiet: prints one line per line fetched; apt's and dpkg's output go to debian/fetch.log.
# Idempotent and cached (lines/<line>/READY); a flock makes parallel callers wait for one fetch.
set -euo pipefail

CACHE="${ZK_LINES_CACHE:-$HOME/.cache/zookeeper-ts}/debian"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=http://deb.debian.org/debian
LOG="$CACHE/fetch.log"
mkdir -p "$CACHE/lists/partial" "$CACHE/archives/partial" "$CACHE/cache" "$CACHE/lines"

# Packages per line, from the Debian suite that carries it (bullseye has 3.4.13, trixie 3.9.3 and Curator 5.7.1, sid the newest 3.9).
suite_of() {
  case $1 in
    3.4) echo bullseye ;; 3.9.3 | curator-5.7.1) echo trixie ;; 3.9) echo sid ;;
    *) echo "unknown line '$1' (known: 3.4 3.9.3 3.9 curator-5.7.1)" >&2; return 1 ;;
  esac
}
packages_of() {
  case $1 in
    3.4) echo libjline-java liblog4j1.2-java libslf4j-java libxerces2-java libxml-commons-external-java \
      libxml-commons-resolver1.1-java libzookeeper-java zookeeper ;;
    3.9.3) echo libcommons-cli-java libcommons-io-java libdropwizard-metrics-java libfindbugs-annotations-java \
      libguava-java libjackson2-annotations-java libjackson2-core-java libjackson2-databind-java libjetty9-java \
      libjetty9-extra-java libnetty-java libnetty-tcnative-java liblog4j1.2-java libservlet-api-java libslf4j-java \
      libsnappy-java libjsr305-java liberror-prone-java libzookeeper-java zookeeper ;;
    3.9) echo libcommons-cli-java libcommons-io-java libdropwizard-metrics-java libfindbugs-annotations-java \
      libguava-java libjackson2-annotations-java libjackson2-core-java libjackson2-databind-java libjetty9-java \
      libjetty9-extra-java libnetty-java libnetty-buffer-java libnetty-common-java libnetty-tcnative-java \
      liblog4j1.2-java libservlet-api-java libslf4j-java libsnappy-java libzookeeper-java zookeeper ;;
    curator-5.7.1) echo libcurator-recipes-java libcurator-framework-java libcurator-client-java libguava-java \
      libzookeeper-java libslf4j-java libnetty-java libjsr305-java liberror-prone-java ;;
  esac
}

APT=(apt-get -q -o "Dir::Etc::sourcelist=$CACHE/sources.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::State::Lists=$CACHE/lists" -o "Dir::Cache=$CACHE/cache" -o "Dir::Cache::Archives=$CACHE/archives"
  -o Dir::Etc::preferencesparts=/nonexistent -o APT::Sandbox::User=root)

update_lists() {
  if [ ! -f "$CACHE/lists.ready" ]; then
    : >"$CACHE/sources.list"
    for s in bullseye trixie sid; do echo "deb [signed-by=$KEYRING] $MIRROR $s main" >>"$CACHE/sources.list"; done
    "${APT[@]}" update >>"$LOG" 2>&1 || { echo "[zk-lines] apt-get update failed; see $LOG" >&2; return 1; }
    touch "$CACHE/lists.ready"
  fi
}

# Copies a jar without its manifest's Class-Path entry (and its continuation lines).
strip_classpath() {
  local src=$1 dst=$2 tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && unzip -q -o "$src" META-INF/MANIFEST.MF)
  awk 'BEGIN{skip=0} /^Class-Path:/{skip=1; next} skip && /^ /{next} {skip=0; print}' \
    "$tmp/META-INF/MANIFEST.MF" >"$tmp/MANIFEST.MF"
  cp "$src" "$dst"
  chmod u+w "$dst"
  (cd "$tmp" && mv MANIFEST.MF META-INF/MANIFEST.MF && zip -q "$dst" META-INF/MANIFEST.MF)
  rm -rf "$tmp"
}

fetch_line() {
  local line=$1 suite dir debs
  suite=$(suite_of "$line")
  dir="$CACHE/lines/$line"
  [ -f "$dir/READY" ] && return 0
  rm -rf "$dir"
  mkdir -p "$dir/debs" "$dir/root" "$dir/jars"
  update_lists
  local pkgs=()
  for p in $(packages_of "$line"); do pkgs+=("$p/$suite"); done
  # Lists older than a day may name .debs the archive has dropped (sid moves daily): refresh then.
  if [ -n "$(find "$CACHE/lists.ready" -mmin +1440 2>/dev/null)" ]; then rm -f "$CACHE/lists.ready"; update_lists; fi
  if ! (cd "$dir/debs" && "${APT[@]}" download "${pkgs[@]}") >>"$LOG" 2>&1; then
    rm -f "$CACHE/lists.ready" && update_lists # stale lists: one retry with fresh ones
    (cd "$dir/debs" && "${APT[@]}" download "${pkgs[@]}") >>"$LOG" 2>&1 ||
      { echo "[zk-lines] apt-get download for $line failed; see $LOG" >&2; return 1; }
  fi
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root" >>"$LOG" 2>&1; done
  local java="$dir/root/usr/share/java"
  # Real jar files only (Debian adds unversioned symlinks); slf4j bindings are chosen below.
  find "$java" -maxdepth 1 -type f -name '*.jar' | sort >"$dir/all-jars"
  local cp=() logger=()
  while read -r jar; do
    case $(basename "$jar") in
      zookeeper-[0-9]*.jar)
        strip_classpath "$jar" "$dir/jars/zookeeper.jar"
        cp+=("$dir/jars/zookeeper.jar") ;;
      slf4j-simple*.jar) logger+=("$jar") ;;
      slf4j-log4j12*.jar) if [ "$line" = 3.4 ]; then logger=("$jar" "${logger[@]}"); fi ;;
      slf4j-api*.jar) cp+=("$jar") ;;
      zookeeper-it-* | zookeeper-contrib-* | zookeeper-recipes-* | xercesSamples*) ;; # not the server's
      slf4j-* | jcl-over-slf4j* | log4j-over-slf4j* | jul-to-slf4j*) ;; # other bindings and bridges
      *) cp+=("$jar") ;;
    esac
  done <"$dir/all-jars"
  # One binding: slf4j-log4j12 for 3.4 (its server logs through log4j 1.2), slf4j-simple otherwise.
  [ ${#logger[@]} -gt 0 ] && cp+=("${logger[0]}")
  # Any other jar whose manifest chains /usr/share/java (Curator's do) is copied without it, too.
  local i
  for i in "${!cp[@]}"; do
    case ${cp[$i]} in "$dir/jars/"*) continue ;; esac
    if unzip -p "${cp[$i]}" META-INF/MANIFEST.MF 2>/dev/null | grep -q '^Class-Path:'; then
      strip_classpath "${cp[$i]}" "$dir/jars/$(basename "${cp[$i]}")"
      cp[$i]="$dir/jars/$(basename "${cp[$i]}")"
    fi
  done
  printf '%s\n' "${cp[@]}" >"$dir/classpath"
  # 3.4 logs through log4j 1.2 itself: without a configuration it prints nothing to server.log.
  if [ "$line" = 3.4 ]; then
    printf '%s\n' "log4j.rootLogger=INFO, CONSOLE" "log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender" \
      "log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout" \
      "log4j.appender.CONSOLE.layout.ConversionPattern=%d{HH:mm:ss.SSS} [%t] %-5p %c{1} - %m%n" >"$dir/log4j.properties"
  fi
  local version
  version=$(dpkg-deb -f "$(ls "$dir"/debs/zookeeper_*.deb "$dir"/debs/libcurator-recipes-java_*.deb 2>/dev/null | head -n1)" Version)
  echo "$version" >"$dir/version"
  rm -rf "$dir/debs" # the extracted tree is what we use; the archive cache keeps the .debs
  touch "$dir/READY"
  echo "[zk-lines] fetched ZooKeeper line $line ($suite $version) into $dir (apt output: $LOG)"
}

lines=("$@")
[ ${#lines[@]} -eq 0 ] && lines=(3.4 3.9.3 3.9 curator-5.7.1)
exec 9>"$CACHE/.lock"
flock 9
for l in "${lines[@]}"; do fetch_line "$l"; done
