#!/usr/bin/env bash
# Several machines on one: `up N` starts a master on this host and N worker machines (network namespaces on a bridge, each with its own dockerd and minik8s worker); `down` removes them; `status`, `env`. See README, "Several machines on one".
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
entry="$repo/dist/scripts/sim-cluster.js"

if [[ "$(id -u)" -ne 0 ]]; then
  echo "sim-cluster: needs root (network namespaces, a bridge, iptables, a dockerd per machine): run it as root: $0 $*" >&2
  exit 1
fi
if ! command -v node >/dev/null; then
  echo "sim-cluster: node is not installed (Node.js 20 or newer; scripts/setup.sh installs everything)" >&2
  exit 1
fi

# Build when dist is missing or older than a source file (MINIK8S_SIM_NO_BUILD=1 skips this: tests run what they built).
stale() {
  [[ ! -f "$entry" ]] && return 0
  [[ -n "$(find "$repo/src" "$repo/bin" "$repo/scripts" -name '*.ts' -newer "$entry" -print -quit)" ]]
}
if [[ "${MINIK8S_SIM_NO_BUILD:-}" != 1 ]] && stale; then
  if [[ ! -d "$repo/node_modules" ]]; then
    echo "sim-cluster: $entry is missing or out of date and there is no node_modules: run scripts/setup.sh, or npm ci && npm run build" >&2
    exit 1
  fi
  echo "sim-cluster: building (npm run build)"
  # As the user who called sudo, when they own the checkout: dist must not end up owned by root.
  owner="$(stat -c %U "$repo")"
  if [[ -n "${SUDO_USER:-}" && "$owner" == "$SUDO_USER" ]]; then
    (cd "$repo" && runuser -u "$SUDO_USER" -- npm run build --silent)
  else
    (cd "$repo" && npm run build --silent)
  fi
fi

exec node "$entry" "$@"
