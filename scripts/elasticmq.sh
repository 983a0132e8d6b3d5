#!/usr/bin/env bash
# Makes sure a real SQS-compatible server answers on 127.0.0.1:9324: ElasticMQ, in memory,
# its queue URLs http://127.0.0.1:9324/000000000000/<queue>, for the SQS destination's
# tests. The pinned server and its runtime jars come from Maven Central through
# `mvn dependency:copy-dependencies` into a cache folder (ELASTICMQ_HOME_DIR, default
# /var/tmp/etp-services/elasticmq) that later runs and other clones reuse, as
# scripts/kafka.sh does for Kafka. Idempotent: when something already listens on :9324 it
# exits at once. Called by scripts/setup.sh for the tests (SETUP_TESTS=1; SETUP_ELASTICMQ=0
# skips it there).
#   bash scripts/elasticmq.sh            fetch (once) and start on :9324
#   bash scripts/elasticmq.sh classpath  fetch (once) and print the classpath, for a test
#                                        that runs a server of its own (test/support/elasticmq.ts)
set -euo pipefail

ELASTICMQ_VERSION="1.7.1"
SCALA_VERSION="2.13"
HOST="127.0.0.1"
PORT=9324
START_TIMEOUT_S=60

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

MODE="${1:-start}"
[[ $MODE == start || $MODE == classpath ]] || {
  echo "usage: $0 [classpath]" >&2
  exit 2
}
# Fast path: something already listens.
[[ $MODE == start ]] && port_open "$PORT" && exit 0

started=$(date +%s%N)
SERVICE=elasticmq
# shellcheck source=scripts/lib/java-server.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/java-server.sh"
HOME_DIR="${ELASTICMQ_HOME_DIR:-$STATE_DIR/elasticmq}"
LIBS="$HOME_DIR/elasticmq-$ELASTICMQ_VERSION/libs"
CONF="$HOME_DIR/elasticmq.conf"
PIDFILE="$HOME_DIR/elasticmq.pid"

# (setup.sh and the tests may run it at once, from several clones.)
begin_java_server "$HOME_DIR" $((START_TIMEOUT_S + 180)) "ElasticMQ $ELASTICMQ_VERSION needs Java 17 or newer"

# The server artifact and its runtime dependencies (it brings its own logback binding).
fetch_jars "$LIBS" "$HOME_DIR/build" "ElasticMQ $ELASTICMQ_VERSION (Scala $SCALA_VERSION)" \
  "elasticmq-server_$SCALA_VERSION-$ELASTICMQ_VERSION.jar" \
  "org.elasticmq:elasticmq-server_$SCALA_VERSION:$ELASTICMQ_VERSION"
if [[ $MODE == classpath ]]; then
  printf '%s/*\n' "$LIBS"
  exit 0
fi
port_open "$PORT" && exit 0

# Loopback only; queue URLs name the address the server listens on; the default
# region (requests are not checked against it) and account id of the queue URLs.
cat >"$CONF" <<CONF
include classpath("application.conf")
node-address { protocol = "http", host = "$HOST", port = $PORT, context-path = "" }
rest-sqs { enabled = true, bind-port = $PORT, bind-hostname = "$HOST", sqs-limits = strict }
rest-stats { enabled = false }
generate-node-address = false
aws { region = "us-east-1", accountId = "000000000000" }
CONF

SERVER_COMMAND='org\.elasticmq\.server\.Main'
if pid_running "$PIDFILE" "$SERVER_COMMAND"; then
  log "a server (pid $(cat "$PIDFILE")) is already starting; waiting for it"
else
  log "starting ElasticMQ $ELASTICMQ_VERSION on $HOST:$PORT (log $HOME_DIR/elasticmq.log)"
  # fd 9 (the lock) is closed for the server, or it would hold the lock for life.
  nohup java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dconfig.file="$CONF" -cp "$LIBS/*" org.elasticmq.server.Main >"$HOME_DIR/elasticmq.log" 2>&1 9>&- </dev/null &
  echo $! >"$PIDFILE"
fi

# Ready when a ListQueues answers (the port opens a moment before the queues' actor is up).
wait_up $(($(date +%s) + START_TIMEOUT_S)) "$PIDFILE" "$SERVER_COMMAND" "$HOME_DIR/elasticmq.log" \
  "answer a ListQueues on $HOST:$PORT" curl -fs -o /dev/null "http://$HOST:$PORT/?Action=ListQueues"
log "ready in $(ms_since "$started") ms: ElasticMQ $ELASTICMQ_VERSION on $HOST:$PORT (pid $(cat "$PIDFILE"))"
