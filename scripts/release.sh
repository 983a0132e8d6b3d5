#!/usr/bin/env bash
# Builds a release tree: the compiled services, the files they read at run time and a
# package.json without the build's lifecycle scripts (prepare compiles, postinstall
# generates the Prisma client: both need the dev dependencies). In that tree
# `npm ci --omit=dev` installs only what the services run on, and every bin/ command works.
#
#   bash scripts/release.sh [OUT]        # default OUT: dist-release/
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h | --help)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
esac
out="${1:-dist-release}"

echo "[release] compiling (tsc) and building the consumer portal page (dist/portal)"
npx --no-install tsc -p tsconfig.json
node portal/build.mjs

echo "[release] bundling the workflow code once (workers read it instead of bundling at each start)"
rm -rf dist/.workflow-bundles
node --input-type=module -e 'await (await import("./dist/workers/workflow-bundle.js")).prebuildWorkflowBundle()'

echo "[release] writing $out"
rm -rf "$out"
mkdir -p "$out/prisma" "$out/proto/gen" "$out/ratelimit"
cp -r dist "$out/dist"
# Tests, benchmarks and development scripts are not part of a release.
rm -rf "$out/dist/test" "$out/dist/bench" "$out/dist/scripts" "$out/dist/.tsbuildinfo"
cp -r bin "$out/bin"
cp -r prisma/migrations "$out/prisma/migrations"                      # --auto-migrate reads them
cp proto/gen/ratelimit-service.binpb "$out/proto/gen/"                 # gRPC reflection
cp -r ratelimit/examples "$out/ratelimit/examples"                     # sample rule files
cp package-lock.json README.md "$out/"
cp -r docs "$out/docs"                                                 # the manual the README links to
# Same dependencies (so the lock file stays in sync for npm ci), no scripts.
node -e '
  const pkg = JSON.parse(require("fs").readFileSync("package.json", "utf8"));
  delete pkg.scripts;
  process.stdout.write(JSON.stringify(pkg, null, 2) + "\n");
' > "$out/package.json"

echo "[release] done: cd $out && npm ci --omit=dev, then ./bin/webhooks, ./bin/ratelimit, ./bin/ratelimit-client, ./bin/skbuild-settings, ./bin/entity-server"
