# shellcheck shell=bash
# Sourced by the scripts that run a Java server for the tests (scripts/kafka.sh,
# scripts/elasticmq.sh), after they set SERVICE (their name in messages): log and fail
# under that name, one starter at a time per cache folder, and the server's jars (an
# artifact and its runtime dependencies) fetched once from Maven Central through
# `mvn dependency:copy-dependencies` into the cache folder, which later runs and other
# clones reuse.

DEPENDENCY_PLUGIN_VERSION="3.6.1"
# Where the services' cache folders and state live (as in scripts/setup.sh).
STATE_DIR="${ETP_STATE_DIR:-/var/tmp/etp-services}"

log() { printf '[%s] %s\n' "$SERVICE" "$*" >&2; }
fail() {
  printf '[%s] ERROR: %s\n' "$SERVICE" "$*" >&2
  exit 1
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# Checks that java runs ($3 says which version the server needs), then holds the lock of
# the cache folder $1 on fd 9 (the server started later must get `9>&-`, or it would hold
# the lock for life), waiting at most $2 seconds for another holder: one starter at a time.
begin_java_server() {
  command -v java >/dev/null || fail "java is not installed ($3)"
  mkdir -p "$1"
  exec 9>"$1/.lock"
  flock -w "$2" 9 || fail "timed out waiting for another $SERVICE.sh ($1/.lock)"
}

# fetch_jars LIBS BUILD WHAT JAR GROUP:ARTIFACT:VERSION...: the artifacts and their runtime
# dependencies into LIBS (BUILD holds the generated pom and Maven's log); JAR is the file
# that must be there after; nothing happens once LIBS is complete.
fetch_jars() {
  local libs=$1 build=$2 what=$3 jar=$4 t0 coordinate group artifact version
  shift 4
  [[ -f "$libs/.complete" ]] && return 0
  command -v mvn >/dev/null || fail "mvn is not installed; it is needed once to fetch $what from Maven Central"
  log "fetching $what and its dependencies from Maven Central"
  t0=$(date +%s%N)
  rm -rf "$build" "$libs"
  mkdir -p "$build"
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
    printf '  <modelVersion>4.0.0</modelVersion>\n  <groupId>local.etp</groupId>\n'
    printf '  <artifactId>%s-server-runtime</artifactId>\n  <version>1</version>\n  <packaging>pom</packaging>\n' "$SERVICE"
    printf '  <dependencies>\n'
    for coordinate in "$@"; do
      IFS=: read -r group artifact version <<<"$coordinate"
      printf '    <dependency>\n      <groupId>%s</groupId>\n      <artifactId>%s</artifactId>\n      <version>%s</version>\n    </dependency>\n' \
        "$group" "$artifact" "$version"
    done
    printf '  </dependencies>\n</project>\n'
  } >"$build/pom.xml"
  if ! mvn -B -q -Dstyle.color=never -f "$build/pom.xml" \
    "org.apache.maven.plugins:maven-dependency-plugin:$DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
    -DincludeScope=runtime -DoutputDirectory="$libs" >"$build/mvn.log" 2>&1; then
    grep -m 5 'ERROR' "$build/mvn.log" >&2 || tail -n 20 "$build/mvn.log" >&2
    fail "Maven could not resolve $* (full log: $build/mvn.log)"
  fi
  [[ -f "$libs/$jar" ]] || fail "Maven finished but $libs has no $jar"
  touch "$libs/.complete"
  log "fetched $(find "$libs" -name '*.jar' | wc -l) jars ($(du -sh "$libs" | cut -f1)) in $(ms_since "$t0") ms"
}

# Whether the pid file $1 names a live process whose command line matches $2 (not one that reused its pid).
pid_running() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ -r "/proc/$pid/cmdline" ]] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q "$2"
}

# wait_up DEADLINE PIDFILE PATTERN LOG WHAT CHECK...: runs CHECK until it succeeds; fails
# naming LOG when the server (pid_running PIDFILE PATTERN) exits first, or when the clock
# passes DEADLINE (epoch seconds) before it would WHAT.
wait_up() {
  local deadline=$1 pidfile=$2 pattern=$3 logfile=$4 what=$5
  shift 5
  until "$@"; do
    pid_running "$pidfile" "$pattern" || {
      tail -n 30 "$logfile" >&2
      fail "the server exited during start-up (log: $logfile)"
    }
    (($(date +%s) < deadline)) || fail "the server did not $what within the start-up timeout (log: $logfile)"
    sleep 0.2
  done
}
