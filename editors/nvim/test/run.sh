#!/usr/bin/env bash
# Runs the Neovim plugin's tests: luacheck (when installed), then the headless suite against the
# real `reprise serve` and cmd/fakegemini, both built here into a temporary folder.
# Needs Go, Neovim ≥ 0.7.2 and bash. NVIM=/path/to/nvim picks another Neovim.
# The last line is "nvim: N passed, M failed"; the exit status is non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
plugin="$(dirname "$here")"
repo="$(cd "$plugin/../.." && pwd)"
nvim="${NVIM:-nvim}"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/reprise-nvim.XXXXXX")"
cleanup() {
  if [ -f "$tmp/fakegemini.pid" ]; then
    kill "$(cat "$tmp/fakegemini.pid")" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

if command -v luacheck >/dev/null 2>&1; then
  (cd "$plugin" && luacheck --quiet --formatter plain .)
else
  echo "luacheck not installed: lint skipped" >&2
fi

(cd "$repo" && go build -o "$tmp/bin/reprise" ./cmd/reprise && go build -o "$tmp/bin/fakegemini" ./cmd/fakegemini)

mkdir -p "$tmp/xdg/config" "$tmp/xdg/data" "$tmp/xdg/state" "$tmp/xdg/cache"
export XDG_CONFIG_HOME="$tmp/xdg/config" XDG_DATA_HOME="$tmp/xdg/data"
export XDG_STATE_HOME="$tmp/xdg/state" XDG_CACHE_HOME="$tmp/xdg/cache"
export REPRISE_TEST_BIN="$tmp/bin" REPRISE_TEST_TMP="$tmp" REPRISE_PLUGIN="$plugin" REPRISE_REPO="$repo"
# The key and URL reach the server through setup({cmd_env}); none from the caller's shell leaks in.
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GEMINI_BASE_URL GOOGLE_GENAI_USE_VERTEXAI || true

echo "$("$nvim" --version | head -1)"
status=0
timeout 300 "$nvim" --headless --clean --cmd "set rtp^=$plugin" -c "luafile $here/runner.lua" || status=$?
if [ "$status" -eq 124 ]; then
  echo "nvim: the suite timed out" >&2
  echo "nvim: 0 passed, 1 failed"
fi
exit "$status"
