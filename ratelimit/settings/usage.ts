// `ratelimit --help`: the service takes no arguments (like the reference, it reads only
// environment variables), so its help names the variables an operator reaches for first
// and points to the page that lists every one.

export const USAGE = `Usage: ratelimit [-h | --help] [-v | --version]

The Envoy-compatible rate limit decision service. It takes no other arguments: like the
reference service it is configured by environment variables, for example

  RUNTIME_ROOT, RUNTIME_SUBDIRECTORY, RUNTIME_APPDIRECTORY   where the YAML rules are
                                        (default /srv/runtime_data/current, config/)
  GRPC_HOST, GRPC_PORT                  gRPC ShouldRateLimit (default 0.0.0.0:8081)
  GRPC_SERVER                           fast (default: ShouldRateLimit framed by the service on
                                        node:http2) or grpc-js (every call through grpc-js)
  HOST, PORT                            HTTP /json and /healthcheck (default 0.0.0.0:8080)
  DEBUG_HOST, DEBUG_PORT                /rlconfig, /stats, /debug/pprof/ (default 0.0.0.0:6070)
  BACKEND_TYPE                          redis, memcache or memory (memory without a store URL)
  REDIS_URL, REDIS_TYPE                 the counters' Redis (also KVSTORE_URL, KVSTORE_TYPE):
                                        single, sentinel or cluster
  MEMCACHE_HOST_PORT, MEMCACHE_SRV      the counters' memcached servers
  USE_STATSD, STATSD_HOST, STATSD_PORT  statistics pushed to statsd
  USE_PROMETHEUS, PROMETHEUS_ADDR       statistics served to Prometheus
  RATELIMIT_PROCESSES                   serving processes: a count or auto (default: auto, one per usable core)
  LOG_LEVEL, LOG_FORMAT                 logging (text or json)

Every variable, its default and what it does: docs/ratelimit/configuration.md#settings.
`;
