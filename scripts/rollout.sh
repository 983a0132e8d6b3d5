#!/usr/bin/env bash
# A rollout of the webhooks workers by Worker Versioning, with the Temporal CLI's
# `worker deployment` commands (docs/webhooks/changing-the-workflow.md#rolling-out-a-build).
# The new build's workers are started first, beside the old ones, with
# --worker-deployment-name (TEMPORAL_DEPLOYMENT_NAME) and, from a release, its build-id file
# as --worker-build-id (TEMPORAL_WORKER_BUILD_ID).
#
#   scripts/rollout.sh wait     --build-id ID [--task-queue Q] [--timeout 120]
#                                                              until the version polls every task queue the current one
#                                                              does (and with Q, the service's four: Q, Q-sends, Q-maintenance)
#   scripts/rollout.sh ramp     --build-id ID --percent P      P % of new workflows to it, the rest to the current version
#   scripts/rollout.sh promote  --build-id ID                  make it current (new workflows and AutoUpgrade ones go there)
#   scripts/rollout.sh rollback [--build-id ID]                stop a ramp; with ID, make that version current again
#   scripts/rollout.sh status                                  current and ramping version, each version's drainage
#                                                              and running workflows (watch -n 10 scripts/rollout.sh status)
#
# Every command takes --deployment-name NAME (default TEMPORAL_DEPLOYMENT_NAME). The CLI
# connects by the variables webhooks reads (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
# TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CERT/_KEY/_CA/_SERVER_NAME) or
# --address/--namespace; it is TEMPORAL_CLI_PATH, the copy setup puts in .tools/, or
# `temporal` on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The CLI names the certificate files' variables its own way.
[[ -z "${TEMPORAL_TLS_CERT:-}" ]] || export TEMPORAL_TLS_CLIENT_CERT_PATH="${TEMPORAL_TLS_CLIENT_CERT_PATH:-$TEMPORAL_TLS_CERT}"
[[ -z "${TEMPORAL_TLS_KEY:-}" ]] || export TEMPORAL_TLS_CLIENT_KEY_PATH="${TEMPORAL_TLS_CLIENT_KEY_PATH:-$TEMPORAL_TLS_KEY}"
[[ -z "${TEMPORAL_TLS_CA:-}" ]] || export TEMPORAL_TLS_SERVER_CA_CERT_PATH="${TEMPORAL_TLS_SERVER_CA_CERT_PATH:-$TEMPORAL_TLS_CA}"

fail() {
  printf 'rollout: %s\n' "$*" >&2
  exit 2
}
usage() { sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

cli() {
  local path="${TEMPORAL_CLI_PATH:-$ROOT/.tools/temporal}"
  [[ -x "$path" ]] || path=temporal
  "$path" "$@" "${CONNECTION[@]}"
}

# A field of the JSON on stdin, by a JavaScript expression over `d` (node runs webhooks anyway).
json() { node -e 'let t="";process.stdin.on("data",c=>t+=c).on("end",()=>{const d=JSON.parse(t);const v=('"$1"');process.stdout.write(Array.isArray(v)?v.join("\n"):String(v??""))})'; }

describe_deployment() { cli worker deployment describe --name "$DEPLOYMENT" -o json; }
describe_version() { cli worker deployment describe-version --deployment-name "$DEPLOYMENT" --build-id "$1" -o json; }
task_queues_of() { describe_version "$1" | json 'd.taskQueuesInfos.map(q=>q.name+" "+q.type).sort()'; }
current_build() { describe_deployment | json 'd.routingConfig.currentVersionBuildID'; }

wait_for_version() {
  local deadline=$((SECONDS + TIMEOUT)) current expected have missing
  current="$(current_build 2>/dev/null || true)"
  [[ -n "$current" ]] && expected="$(task_queues_of "$current")" || expected=""
  # The first version has no current one to compare with: the service's queues (workers/task-queue-stats.ts).
  [[ -z "$TASK_QUEUE" ]] || expected="$(printf '%s\n' "$expected" "$TASK_QUEUE workflow" "$TASK_QUEUE-sends activity" \
    "$TASK_QUEUE-maintenance workflow" "$TASK_QUEUE-maintenance activity" | sed '/^$/d' | sort -u)"
  while :; do
    if have="$(task_queues_of "$BUILD_ID" 2>/dev/null)" && [[ -n "$have" ]]; then
      missing="$(comm -23 <(printf '%s\n' "$expected" | sed '/^$/d') <(printf '%s\n' "$have"))"
      if [[ -z "$missing" ]]; then
        printf 'rollout: %s:%s polls %s\n' "$DEPLOYMENT" "$BUILD_ID" "$(printf '%s' "$have" | tr '\n' ',' | sed 's/,/, /g')"
        return 0
      fi
    else
      missing="every task queue (no worker of it polled yet)"
    fi
    ((SECONDS < deadline)) || fail "$DEPLOYMENT:$BUILD_ID does not poll after ${TIMEOUT}s: $(printf '%s' "$missing" | tr '\n' ',')"
    sleep 1
  done
}

running() {
  cli workflow count --query "ExecutionStatus=\"Running\" AND TemporalWorkerDeploymentVersion=\"$DEPLOYMENT:$1\"$2" |
    sed -n 's/^Total: //p'
}

status() {
  local d builds
  d="$(describe_deployment)"
  printf '%s' "$d" | json '"deployment "+d.name+": current "+(d.routingConfig.currentVersionBuildID||"unversioned")+(d.routingConfig.rampingVersionBuildID?", ramping "+d.routingConfig.rampingVersionBuildID+" at "+d.routingConfig.rampingVersionPercentage+" %":"")'
  echo
  builds="$(printf '%s' "$d" | json 'd.versionSummaries.map(v=>v.BuildID+" "+v.drainageStatus)')"
  while read -r build drainage; do
    [[ -n "$build" ]] || continue
    printf '  %s  drainage %s, running: %s pinned, %s auto-upgrade\n' "$build" "$drainage" \
      "$(running "$build" ' AND TemporalWorkflowVersioningBehavior="Pinned"')" \
      "$(running "$build" ' AND TemporalWorkflowVersioningBehavior="AutoUpgrade"')"
  done <<<"$builds"
}

COMMAND="${1:-}"
case "$COMMAND" in
  "") usage >&2 && exit 2 ;;
  -h | --help | help) usage && exit 0 ;;
esac
shift
DEPLOYMENT="${TEMPORAL_DEPLOYMENT_NAME:-}"
BUILD_ID=""
PERCENT=""
TIMEOUT=120
TASK_QUEUE=""
CONNECTION=()
while (($#)); do
  case "$1" in
    --deployment-name) DEPLOYMENT="${2:?--deployment-name needs a value}" && shift ;;
    --build-id) BUILD_ID="${2:?--build-id needs a value}" && shift ;;
    --percent) PERCENT="${2:?--percent needs a value}" && shift ;;
    --timeout) TIMEOUT="${2:?--timeout needs seconds}" && shift ;;
    --task-queue) TASK_QUEUE="${2:?--task-queue needs a name}" && shift ;;
    --address | --namespace) CONNECTION+=("$1" "${2:?$1 needs a value}") && shift ;;
    -h | --help) usage && exit 0 ;;
    *) fail "unknown argument $1 (see --help)" ;;
  esac
  shift
done
[[ -n "$DEPLOYMENT" ]] || fail "no deployment: pass --deployment-name or set TEMPORAL_DEPLOYMENT_NAME"
needs_build() { [[ -n "$BUILD_ID" ]] || fail "$COMMAND needs --build-id (a release's build-id file)"; }

case "$COMMAND" in
  wait)
    needs_build
    [[ "$TIMEOUT" =~ ^[0-9]+$ ]] || fail "--timeout takes whole seconds, got $TIMEOUT"
    wait_for_version
    ;;
  ramp)
    needs_build
    [[ "$PERCENT" =~ ^[0-9]+([.][0-9]+)?$ ]] && node -e "process.exit(+process.argv[1] <= 100 ? 0 : 1)" "$PERCENT" ||
      fail "ramp needs --percent between 0 and 100, got '${PERCENT}'"
    cli worker deployment set-ramping-version --deployment-name "$DEPLOYMENT" --build-id "$BUILD_ID" \
      --percentage "$PERCENT" --yes
    ;;
  promote)
    needs_build
    cli worker deployment set-current-version --deployment-name "$DEPLOYMENT" --build-id "$BUILD_ID" --yes
    ;;
  rollback)
    if [[ -n "$BUILD_ID" ]]; then
      cli worker deployment set-current-version --deployment-name "$DEPLOYMENT" --build-id "$BUILD_ID" --yes
    else
      [[ -n "$(describe_deployment | json 'd.routingConfig.rampingVersionBuildID')" ]] ||
        fail "no ramp to stop: pass --build-id of the version to make current again"
      cli worker deployment set-ramping-version --deployment-name "$DEPLOYMENT" --delete --yes
    fi
    ;;
  status) status ;;
  *) fail "unknown command $COMMAND (see --help)" ;;
esac
