#!/usr/bin/env bash
# The real Temporal server (go.temporal.io/server, pinned) on the local PostgreSQL: one
# node, or a cluster of several nodes on loopback that share the database and find each
# other through its cluster_membership table. Built once with `go install` from the Go
# module proxy into a cache outside the repository (TEMPORAL_SERVER_HOME, default
# /var/tmp/etp-services/temporal-server), which later runs and other clones reuse.
#
#   scripts/temporal-server.sh build
#   scripts/temporal-server.sh start  [--name temporal] [--port 7233] [--nodes 1] [--shards 4] [--fresh]
#                                     [--ui-port 8233]
#   scripts/temporal-server.sh stop   [--name temporal] [--node K]
#   scripts/temporal-server.sh status [--name temporal]
#   scripts/temporal-server.sh pid    [--name temporal] [--node K]
#
# `start` is idempotent: it creates the databases NAME and NAME_visibility and applies the
# schemas (the module's schema/postgresql/v12 folders, through its sql tool), starts every
# node that is not running, waits until each frontend answers, and registers the `default`
# namespace and our search attributes; with --ui-port it also serves the Temporal Web UI
# (temporalio/ui-server) there. It prints the first frontend's address on stdout.
# Node K (0-based) listens on PORT+50*K (frontend), +1 history, +2 matching, +6 worker,
# +10 HTTP API, +20 Prometheus metrics, and PORT+50*K-300.. for membership (all below
# 32768: the server stores them as smallint). `--fresh`
# stops the nodes and drops both databases first. State and logs:
# $TEMPORAL_SERVER_HOME/NAME/node-K/.
set -euo pipefail

VERSION="1.32.2"
UI_VERSION="2.58.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE_DIR="${ETP_STATE_DIR:-/var/tmp/etp-services}"
HOME_DIR="${TEMPORAL_SERVER_HOME:-$STATE_DIR/temporal-server}"
DIST="$HOME_DIR/v$VERSION"
PG_HOST="${TS_PG_HOST:-127.0.0.1}"
PG_PORT="${TS_PG_PORT:-5432}"
PG_USER="${TS_PG_USER:-webhooks}"
PG_PASSWORD="${TS_PG_PASSWORD:-webhooks}"
START_TIMEOUT_S=90

log() { printf '[temporal-server] %s\n' "$*" >&2; }
fail() {
  printf '[temporal-server] ERROR: %s\n' "$*" >&2
  exit 1
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
temporal_cli() {
  local cli="${TEMPORAL_CLI_PATH:-$ROOT/.tools/temporal}"
  [[ -x "$cli" ]] || cli=temporal
  "$cli" "$@"
}

usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

# --- build -------------------------------------------------------------------------------

build() {
  [[ -f "$DIST/.complete" ]] && return 0
  command -v go >/dev/null || fail "Go is not installed; it is needed once to build Temporal server $VERSION"
  mkdir -p "$HOME_DIR"
  exec 8>"$HOME_DIR/.build.lock"
  flock -w 1200 8 || fail "timed out waiting for another build ($HOME_DIR/.build.lock)"
  [[ -f "$DIST/.complete" ]] && return 0
  local t0 modcache
  t0=$(date +%s)
  log "building Temporal server $VERSION and its sql tool (go install from the Go module proxy; about 4 minutes on 2 cores the first time)"
  rm -rf "$DIST"
  mkdir -p "$DIST/bin"
  GOBIN="$DIST/bin" GOTOOLCHAIN=auto go install \
    "go.temporal.io/server/cmd/server@v$VERSION" "go.temporal.io/server/cmd/tools/sql@v$VERSION" ||
    fail "go install go.temporal.io/server/cmd/server@v$VERSION failed"
  build_ui
  modcache=$(GOTOOLCHAIN=auto go env GOMODCACHE)
  cp -r "$modcache/go.temporal.io/server@v$VERSION/schema/postgresql/v12" "$DIST/schema"
  chmod -R u+w "$DIST/schema"
  touch "$DIST/.complete"
  log "built in $(($(date +%s) - t0)) s into $DIST"
}

# The Web UI server. The module proxy here refuses two of the exact versions its go.mod
# asks for (go.temporal.io/api v1.64.0, github.com/labstack/echo/v4 v4.16.1), so it is
# built from a module of ours that pins the nearest served ones.
build_ui() {
  local mod="$DIST/ui-build"
  mkdir -p "$mod"
  cat >"$mod/go.mod" <<MOD
module local/temporal-ui

go 1.26.11

require github.com/temporalio/ui-server/v2 v$UI_VERSION

replace go.temporal.io/api => go.temporal.io/api v1.63.5

replace github.com/labstack/echo/v4 => github.com/labstack/echo/v4 v4.16.0
MOD
  (cd "$mod" && GOTOOLCHAIN=auto GOFLAGS=-mod=mod go build -o "$DIST/bin/ui-server" \
    "github.com/temporalio/ui-server/v2/cmd/server") || fail "building the Temporal Web UI $UI_VERSION failed"
}

# --- databases ---------------------------------------------------------------------------

sql_tool() { # db args...
  local db="$1"
  shift
  SQL_PLUGIN=postgres12 SQL_HOST="$PG_HOST" SQL_PORT="$PG_PORT" SQL_USER="$PG_USER" SQL_PASSWORD="$PG_PASSWORD" \
    "$DIST/bin/sql" --db "$db" "$@"
}

psql_admin() { # sql
  PGPASSWORD="$PG_PASSWORD" PGOPTIONS="--client-min-messages=warning" psql -qtA -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -c "$1"
}

database_ready() { # db schema-folder
  local db="$1" schema="$DIST/schema/$2/versioned"
  if [[ -z "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]]; then
    log "creating database $db"
    sql_tool "$db" create-database >/dev/null 2>&1 || fail "could not create database $db as $PG_USER"
  fi
  if [[ -z "$(PGPASSWORD="$PG_PASSWORD" psql -qtA -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$db" \
    -c "SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_version'")" ]]; then
    sql_tool "$db" setup-schema -v 0.0 >/dev/null 2>&1 || fail "setup-schema of $db failed"
  fi
  sql_tool "$db" update-schema -d "$schema" >"$HOME_DIR/schema-$db.log" 2>&1 ||
    fail "update-schema of $db failed (see $HOME_DIR/schema-$db.log)"
}

drop_databases() { # name
  psql_admin "DROP DATABASE IF EXISTS \"$1\" WITH (FORCE)" >/dev/null
  psql_admin "DROP DATABASE IF EXISTS \"$1_visibility\" WITH (FORCE)" >/dev/null
}

# --- nodes -------------------------------------------------------------------------------

node_dir() { echo "$HOME_DIR/$NAME/node-$1"; }
node_pid() { # k → pid of a live node, or nothing
  local file
  file="$(node_dir "$1")/server.pid"
  [[ -f "$file" ]] && kill -0 "$(cat "$file")" 2>/dev/null && cat "$file"
  return 0
}
frontend_port() { echo $((PORT + 50 * $1)); }

start_node() { # k
  local k="$1" dir base
  dir=$(node_dir "$k")
  base=$(frontend_port "$k")
  mkdir -p "$dir"
  [[ -n "$(node_pid "$k")" ]] && return 0
  port_open "$base" && fail "port $base is taken by another process: choose another --port"
  log "starting node $k of $NAME (frontend 127.0.0.1:$base, log $dir/server.log)"
  (
    export TS_DB="$NAME" TS_VISIBILITY_DB="${NAME}_visibility" TS_PG_ADDR="$PG_HOST:$PG_PORT" \
      TS_PG_USER="$PG_USER" TS_PG_PASSWORD="$PG_PASSWORD" TS_HISTORY_SHARDS="$SHARDS" \
      TS_DYNAMIC_CONFIG="$ROOT/scripts/temporal-server/dynamicconfig.yaml" \
      TS_FRONTEND_PORT="$base" TS_HISTORY_PORT=$((base + 1)) TS_MATCHING_PORT=$((base + 2)) \
      TS_WORKER_PORT=$((base + 6)) TS_HTTP_PORT=$((base + 10)) TS_METRICS_PORT=$((base + 20)) \
      TS_FRONTEND_MEMBERSHIP_PORT=$((base - 300)) TS_HISTORY_MEMBERSHIP_PORT=$((base - 299)) \
      TS_MATCHING_MEMBERSHIP_PORT=$((base - 298)) TS_WORKER_MEMBERSHIP_PORT=$((base - 294))
    cd "$dir"
    nohup "$DIST/bin/server" --config-file "$ROOT/scripts/temporal-server/development.yaml" \
      --allow-no-auth start >>"$dir/server.log" 2>&1 8>&- 9>&- & # the locks stay with this script
    echo $! >"$dir/server.pid"
  )
}

wait_frontend() { # k
  local k="$1" port deadline
  port=$(frontend_port "$k")
  deadline=$(($(date +%s) + START_TIMEOUT_S))
  until temporal_cli operator cluster health --address "127.0.0.1:$port" >/dev/null 2>&1; do
    [[ -n "$(node_pid "$k")" ]] || fail "node $k of $NAME exited; its log: $(tail -n 5 "$(node_dir "$k")/server.log")"
    (($(date +%s) < deadline)) || fail "node $k of $NAME did not answer on 127.0.0.1:$port within ${START_TIMEOUT_S}s"
    sleep 0.5
  done
}

retry_for() { # seconds what command...
  local deadline=$(($(date +%s) + $1)) what="$2"
  shift 2
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) < deadline)) || fail "$what"
    sleep 0.5
  done
}

register() { # address
  local address="$1" args=() sa
  local ns=(--address "$address" --namespace default)
  if ! temporal_cli operator namespace describe "${ns[@]}" >/dev/null 2>&1; then
    temporal_cli operator namespace create "${ns[@]}" --retention 72h >/dev/null ||
      fail "could not create the default namespace on $address"
  fi
  # A namespace created a moment ago reaches the frontend's cache within seconds.
  retry_for 30 "namespace default not usable on $address after 30 s" \
    temporal_cli operator search-attribute list "${ns[@]}"
  # Name=Type pairs, the same list the dev server gets (workflows/search-attributes.ts).
  for sa in WebhookConfigId=Keyword WebhookId=Keyword WebhookEventType=Keyword WebhookEndpointHost=Keyword \
    WebhookDeliveryStatus=Keyword WebhookAttemptCount=Int WebhookTenantId=Keyword; do
    args+=(--name "${sa%%=*}" --type "${sa#*=}")
  done
  if ! temporal_cli operator search-attribute list "${ns[@]}" | grep -q WebhookTenantId; then
    retry_for 30 "could not register the search attributes on $address" \
      temporal_cli operator search-attribute create "${ns[@]}" "${args[@]}"
  fi
  retry_for 30 "namespace default cannot list workflows on $address after 30 s" \
    temporal_cli workflow list "${ns[@]}" --limit 1
}

start_ui() { # port
  local dir="$HOME_DIR/$NAME/ui" pid
  mkdir -p "$dir"
  [[ -f "$dir/ui.pid" ]] && pid=$(cat "$dir/ui.pid") && kill -0 "$pid" 2>/dev/null && return 0
  port_open "$1" && fail "port $1 (--ui-port) is taken by another process"
  (
    export TS_UI_TEMPORAL_ADDRESS="127.0.0.1:$PORT" TS_UI_PORT="$1"
    cd "$dir"
    nohup "$DIST/bin/ui-server" --root "$ROOT/scripts/temporal-server" --config ui --env development start \
      >>"$dir/ui.log" 2>&1 8>&- 9>&- &
    echo $! >"$dir/ui.pid"
  )
  retry_for 30 "the Web UI did not answer on 127.0.0.1:$1 (see $dir/ui.log)" port_open "$1"
}

stop_pid() { # pid: TERM, then KILL after 10 s
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null || true
}

stop_ui() {
  local file="$HOME_DIR/$NAME/ui/ui.pid"
  [[ -f "$file" ]] || return 0
  stop_pid "$(cat "$file")"
  rm -f "$file"
}

stop_node() { # k
  local pid
  pid=$(node_pid "$1")
  [[ -n "$pid" ]] && stop_pid "$pid"
  return 0
}

known_nodes() { # the node folders of NAME
  local d
  for d in "$HOME_DIR/$NAME"/node-*; do [[ -d "$d" ]] && echo "${d##*-}"; done
  return 0
}

# --- commands ----------------------------------------------------------------------------

CMD="${1:-}"
[[ $# -gt 0 ]] && shift
NAME=temporal PORT="" NODES=1 SHARDS=4 FRESH=0 ONLY="" UI_PORT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) NAME="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --nodes) NODES="$2"; shift 2 ;;
    --shards) SHARDS="$2"; shift 2 ;;
    --node) ONLY="$2"; shift 2 ;;
    --ui-port) UI_PORT="$2"; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail "unknown argument $1 (see --help)" ;;
  esac
done
[[ "$NAME" =~ ^[a-z][a-z0-9_]*$ ]] || fail "--name must be a lower-case identifier (it names the databases): $NAME"
# Without --port, the port NAME was last started on (so stop/status/pid find its nodes).
[[ -z "$PORT" && -f "$HOME_DIR/$NAME/port" ]] && PORT=$(cat "$HOME_DIR/$NAME/port")
PORT="${PORT:-7233}"

# The server records its nodes' ports in a smallint column (cluster_membership).
last_port=$((PORT + 50 * (NODES - 1) + 20))
[[ "$PORT" =~ ^[0-9]+$ && $PORT -ge 1324 && $last_port -le 32767 ]] ||
  fail "--port $PORT: every node's ports (up to $last_port) must lie in 1024..32767 (the server stores them as smallint)"

case "$CMD" in
  build) build ;;
  start)
    build
    mkdir -p "$HOME_DIR/$NAME"
    exec 9>"$HOME_DIR/$NAME/.lock"
    flock -w $((START_TIMEOUT_S * 2)) 9 || fail "timed out waiting for another start of $NAME"
    t0=$(date +%s%N)
    if [[ $FRESH == 1 ]]; then
      stop_ui
      for k in $(known_nodes); do stop_node "$k"; done
      drop_databases "$NAME"
    fi
    echo "$PORT" >"$HOME_DIR/$NAME/port"
    database_ready "$NAME" temporal
    database_ready "${NAME}_visibility" visibility
    # Node 0 alone first: on a fresh database every node writes the cluster metadata at
    # start, and one that loses that race exits ("Failed to apply cluster metadata").
    start_node 0
    wait_frontend 0
    for ((k = 1; k < NODES; k++)); do start_node "$k"; done
    for ((k = 1; k < NODES; k++)); do wait_frontend "$k"; done
    register "127.0.0.1:$PORT"
    [[ -z "$UI_PORT" ]] || start_ui "$UI_PORT"
    log "$NAME ready in $((($(date +%s%N) - t0) / 1000000)) ms: $NODES node(s), frontends $(for ((k = 0; k < NODES; k++)); do printf '127.0.0.1:%s ' "$(frontend_port "$k")"; done)"
    echo "127.0.0.1:$PORT"
    ;;
  stop)
    if [[ -n "$ONLY" ]]; then
      stop_node "$ONLY"
    else
      stop_ui
      for k in $(known_nodes); do stop_node "$k"; done
    fi
    ;;
  pid) # the pid of --node K, when it runs
    pid=$(node_pid "${ONLY:-0}")
    [[ -n "$pid" ]] || fail "node ${ONLY:-0} of $NAME is not running"
    echo "$pid"
    ;;
  status)
    for k in $(known_nodes); do
      pid=$(node_pid "$k")
      echo "node $k: ${pid:+running (pid $pid)}${pid:-stopped}, frontend 127.0.0.1:$(frontend_port "$k")"
    done
    ;;
  *)
    usage
    exit 2
    ;;
esac
