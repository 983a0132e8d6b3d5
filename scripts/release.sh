#!/usr/bin/env bash
# Builds a release tree: the compiled services, the files they read at run time and a
# package.json without the build's lifecycle scripts (prepare compiles, postinstall
# generates the Prisma client: both need the dev dependencies). In that tree
# `npm ci --omit=dev` installs only what the services run on, and every bin/ command works.
#
#   bash scripts/release.sh [--prebuilt] [OUT]   # default OUT: dist-release/
#
# --prebuilt packages dist/ as the last `npm run build` left it instead of compiling
# first (the release test uses it: other tests are running from that dist/ meanwhile).
set -euo pipefail
cd "$(dirname "$0")/.."

prebuilt=0
out=dist-release
for arg in "$@"; do
  case "$arg" in
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    --prebuilt) prebuilt=1 ;;
    -*)
      echo "release.sh: unknown option $arg (see --help)" >&2
      exit 2
      ;;
    *) out="$arg" ;;
  esac
done

if [ "$prebuilt" = 1 ]; then
  [ -f dist/workers/workflow-bundle.js ] && [ -f dist/portal/index.html ] || {
    echo "release.sh: --prebuilt, but dist/ holds no complete build: run npm run build first" >&2
    exit 1
  }
else
  echo "[release] compiling (tsc) and building the consumer portal page (dist/portal)"
  npx --no-install tsc -p tsconfig.json
  node portal/build.mjs
fi

echo "[release] writing $out"
rm -rf "$out"
mkdir -p "$out/prisma" "$out/proto/gen" "$out/ratelimit"
cp -r dist "$out/dist"
# Tests, benchmarks, development scripts and the development bundles are not part of a release.
rm -rf "$out/dist/test" "$out/dist/bench" "$out/dist/scripts" "$out/dist/.tsbuildinfo" "$out/dist/.workflow-bundles"
echo "[release] bundling the workflow code once (workers read it instead of bundling at each start)"
# The plain bundle's hash is the release's Worker Versioning build id, the default of its
# workers' --worker-build-id; build-id keeps it for the rollout (scripts/rollout.sh).
node --input-type=module -e '
  const { prebuildWorkflowBundle } = await import("./dist/workers/workflow-bundle.js");
  const { writeFileSync } = await import("node:fs");
  writeFileSync(process.argv[2], `${await prebuildWorkflowBundle(process.argv[1])}\n`);
' "$out/dist/.workflow-bundles" "$out/build-id"
echo "[release] build id $(cat "$out/build-id") (in $out/build-id)"
cp -r bin "$out/bin"
cp -r prisma/migrations "$out/prisma/migrations"                      # --auto-migrate reads them
cp proto/gen/ratelimit-service.binpb "$out/proto/gen/"                 # gRPC reflection
cp -r ratelimit/examples "$out/ratelimit/examples"                     # sample rule files
cp package-lock.json README.md "$out/"
cp -r docs "$out/docs"                                                 # the manual the README links to
mkdir -p "$out/scripts" && cp scripts/rollout.sh "$out/scripts/"       # Worker Versioning rollouts
# Same dependencies (so the lock file stays in sync for npm ci), no scripts.
node -e '
  const pkg = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
  delete pkg.scripts;
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' > "$out/package.json"

echo "[release] done: cd $out && npm ci --omit=dev, then ./bin/webhooks, ./bin/ratelimit, ./bin/ratelimit-client, ./bin/skbuild-settings, ./bin/entity-server"
