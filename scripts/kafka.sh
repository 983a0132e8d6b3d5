#!/usr/bin/env bash
# Makes sure a real Apache Kafka broker answers on 127.0.0.1:9092: a single KRaft
# node (broker + controller, controller on 127.0.0.1:9093), PLAINTEXT, topics
# created on first use. The pinned server and its runtime jars come from Maven
# Central through `mvn dependency:copy-dependencies` into a cache folder
# (KAFKA_HOME_DIR, default /var/tmp/etp-services/kafka) that later runs and other
# clones reuse. Idempotent: when something already listens on :9092 it exits at
# once. Called by scripts/setup.sh for the tests (SETUP_TESTS=1; SETUP_KAFKA=0 skips it there).
set -euo pipefail

KAFKA_VERSION="3.9.1"
SCALA_VERSION="2.13"
HOST="127.0.0.1"
PORT=9092
CONTROLLER_PORT=9093
START_TIMEOUT_S=60

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# Fast path: something already listens.
port_open "$PORT" && exit 0

started=$(date +%s%N)
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVICE=kafka
# shellcheck source=scripts/lib/java-server.sh
source "$ROOT/scripts/lib/java-server.sh"
HOME_DIR="${KAFKA_HOME_DIR:-$STATE_DIR/kafka}"
DIST="$HOME_DIR/kafka-$SCALA_VERSION-$KAFKA_VERSION"
LIBS="$DIST/libs"
DATA="$HOME_DIR/data"
CONF="$HOME_DIR/server.properties"
LOG="$HOME_DIR/kafka.log"
PIDFILE="$HOME_DIR/kafka.pid"

# (setup.sh may run in parallel from several clones.)
begin_java_server "$HOME_DIR" $((START_TIMEOUT_S + 120)) "Kafka $KAFKA_VERSION needs Java 11 or newer"
port_open "$PORT" && exit 0

write_config() {
  mkdir -p "$DATA"
  cat >"$CONF" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.hours=24
PROPS
  cat >"$HOME_DIR/log4j.properties" <<'L4J'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
L4J
}

JAVA_OPTS=(-Xms128m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true
  "-Dlog4j.configuration=file:$HOME_DIR/log4j.properties")

format_storage() {
  [[ -f "$DATA/meta.properties" ]] && return 0
  local id
  # A random base64url UUID; one with a leading '-' would read as an option.
  id=-
  while [[ $id == -* ]]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
  log "formatting KRaft storage in $DATA (cluster id $id)"
  java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format -t "$id" -c "$CONF" --ignore-formatted \
    >"$HOME_DIR/format.log" 2>&1 || {
    tail -n 20 "$HOME_DIR/format.log" >&2
    fail "formatting the KRaft storage failed (log: $HOME_DIR/format.log)"
  }
}

BROKER_COMMAND='kafka\.Kafka '
broker_running() { pid_running "$PIDFILE" "$BROKER_COMMAND"; }

start_broker() {
  if broker_running; then
    log "a broker (pid $(cat "$PIDFILE")) is already starting; waiting for it"
    return 0
  fi
  port_open "$CONTROLLER_PORT" && fail "port $CONTROLLER_PORT (the KRaft controller's) is taken by another process"
  log "starting Kafka $KAFKA_VERSION on $HOST:$PORT (controller :$CONTROLLER_PORT, log $LOG)"
  # fd 9 (the lock) is closed for the broker, or it would hold the lock for life.
  nohup java "${JAVA_OPTS[@]}" -cp "$LIBS/*" kafka.Kafka "$CONF" >"$LOG" 2>&1 9>&- </dev/null &
  echo $! >"$PIDFILE"
}

# Answers a metadata request through kafkajs (the project's client) when it is installed.
metadata_ok() {
  (cd "$ROOT" && [[ -d node_modules/kafkajs ]]) || return 0
  (cd "$ROOT" && timeout 10 node -e '
    const { Kafka, logLevel } = require("kafkajs");
    const admin = new Kafka({ brokers: [process.argv[1]], logLevel: logLevel.NOTHING,
      connectionTimeout: 2000, retry: { retries: 0 } }).admin();
    admin.connect().then(() => admin.fetchTopicMetadata({ topics: [] }))
      .then(() => admin.disconnect()).then(() => process.exit(0), () => process.exit(1));
  ' "$HOST:$PORT") >/dev/null 2>&1
}

wait_ready() {
  local t0 deadline
  t0=$(date +%s%N)
  deadline=$(($(date +%s) + START_TIMEOUT_S))
  wait_up "$deadline" "$PIDFILE" "$BROKER_COMMAND" "$LOG" "open $HOST:$PORT" port_open "$PORT"
  until metadata_ok; do
    (($(date +%s) < deadline)) || fail "the broker listens but answered no metadata request within ${START_TIMEOUT_S}s (log: $LOG)"
    sleep 0.5
  done
  log "broker up in $(ms_since "$t0") ms (pid $(cat "$PIDFILE"))"
}

# The jars: the server artifact and its runtime dependencies, plus a log binding.
fetch_jars "$LIBS" "$HOME_DIR/build" "Apache Kafka $KAFKA_VERSION (Scala $SCALA_VERSION)" \
  "kafka_$SCALA_VERSION-$KAFKA_VERSION.jar" \
  "org.apache.kafka:kafka_$SCALA_VERSION:$KAFKA_VERSION" org.slf4j:slf4j-reload4j:1.7.36
write_config
format_storage
start_broker
wait_ready
log "ready in $(ms_since "$started") ms: Kafka $KAFKA_VERSION on $HOST:$PORT"
