#!/usr/bin/env bash
# The checkout's setup, idempotent (a second run takes seconds):
#   1. node modules (npm ci) if they are missing
#   2. the tool's own setup (src/setup/, the same steps as `durable-debugger setup`): the checkout's
#      earlier data moved to the data home, the Temporal CLI, a Docker engine that answers, the
#      sandbox image
#   other options go to setup (--python 3.13: a sandbox image with Python 3.13 too)
#   with --for-tests, also the Python 3.13 image and what only the tests use: Chromium (the Web UI test), docker-compose and
#   PostgreSQL's programs (the content store's tests start throwaway servers of their own)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*"; }
fail() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    fail "this step needs root: $*"
  fi
}

apt_install() {
  command -v apt-get >/dev/null || fail "cannot install $* automatically (no apt-get); install it yourself"
  say "installing $* with apt-get"
  as_root apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

ensure_node_modules() {
  if [ ! -d node_modules/@temporalio/worker ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "installing node modules (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
  fi
}

ensure_test_tools() {
  local missing=()
  command -v chromium >/dev/null || [ -n "${CHROMIUM_PATH:-}" ] || missing+=(chromium)
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  # Tests check a fixed copy's tests on the host too (python3 -m pytest), with the system's python3.
  python3 -m pytest --version >/dev/null 2>&1 || missing+=(python3-pytest)
  # The content store's PostgreSQL backend is tested on throwaway servers (initdb in a temporary folder).
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

# --for-tests is this script's; every other option goes to `setup` (--python 3.13).
for_tests=false
options=()
for option in "$@"; do
  if [ "$option" = --for-tests ]; then for_tests=true; else options+=("$option"); fi
done

ensure_node_modules
# The tests check a repository whose requires-python excludes 3.11 on the Python 3.13 image.
if $for_tests; then options+=(--python 3.13); fi
node --import tsx src/cli/main.ts setup "${options[@]}"
if $for_tests; then ensure_test_tools; fi
