#!/usr/bin/env bash
# End-to-end test of `reprise acp`: builds reprise and fakegemini, installs the pinned ACP client
# library if needed, then drives the agent over stdio with it (test/run.mjs). Needs go and node 20+.
# The temporary directory (workspace, REPRISE_HOME, fakegemini's request log) is kept when a step
# fails, and named. REPRISE_SRC builds reprise from another checkout (fakegemini always comes from
# this one).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d)"

echo "acp-e2e: building reprise and fakegemini"
(cd "${REPRISE_SRC:-$repo}" && go build -o "$tmp/bin/reprise" ./cmd/reprise)
(cd "$repo" && go build -o "$tmp/bin/fakegemini" ./cmd/fakegemini)

cd "$here"
if [ ! -d node_modules/@agentclientprotocol/sdk ] || [ ! -d node_modules/ajv-formats ]; then npm ci --no-audit --no-fund; fi

node test/registry.mjs
export ACP_TMP="$tmp" ACP_REPRISE="$tmp/bin/reprise" ACP_FAKEGEMINI="$tmp/bin/fakegemini"
if node test/run.mjs; then
  rm -rf "$tmp"
else
  status=$?
  echo "acp-e2e: kept $tmp"
  exit "$status"
fi
