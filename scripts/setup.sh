#!/usr/bin/env bash
# Takes a fresh Debian 12 machine (as root) to a running one-machine minik8s cluster (master and worker in one process); safe to run again.
# Usage (as root): ./scripts/setup.sh [extra minik8s master flags, e.g. --port 7443]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA_DIR="${MINIK8S_DATA_DIR:-/var/lib/minik8s}"
PORT="${MINIK8S_PORT:-6443}"
LOG_DIR=/var/log/minik8s
LOG="$LOG_DIR/master.log"
PIDFILE=/run/minik8s/master.pid

step() { printf '==> %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root: $0"
export DEBIAN_FRONTEND=noninteractive

step "checking Node.js (20 or newer)"
command -v node >/dev/null || die "node is not installed: install Node.js 20 or newer, then run this again"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js $(node --version) is too old: minik8s needs 20 or newer"
command -v npm >/dev/null || die "npm is not installed: install it with Node.js 20, then run this again"

step "installing etcd (etcd-server, etcd-client) and util-linux"
missing=()
for pkg in etcd-server etcd-client util-linux; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q "${missing[@]}"
else
  echo "    already installed"
fi
# Debian's package starts its own etcd on 2379 where systemd runs; minik8s runs its own etcd instead.
if command -v systemctl >/dev/null && systemctl is-enabled --quiet etcd 2>/dev/null; then
  step "disabling the distribution's etcd service (minik8s manages its own etcd)"
  systemctl disable --now etcd || true
fi

step "installing Docker and the image tools (scripts/install-docker.sh)"
bash scripts/install-docker.sh

step "installing Node.js dependencies (npm ci)"
npm ci --no-audit --no-fund

step "building"
npm run build

step "linking the minik8s command onto PATH (npm link)"
npm link --no-audit --no-fund
command -v minik8s >/dev/null || die "npm link did not put minik8s on PATH (npm prefix: $(npm prefix -g))"

step "building the base images into the registry store (scripts/build-images.sh; cached)"
MINIK8S_DATA_DIR="$DATA_DIR" bash scripts/build-images.sh

# The API speaks HTTPS with the cluster CA the master makes at its first start (DATA_DIR/pki/ca.crt).
ready() {
  [ -f "$DATA_DIR/pki/ca.crt" ] || return 1
  CA="$DATA_DIR/pki/ca.crt" node -e "
    const req = require('node:https').get('https://127.0.0.1:${PORT}/readyz', { ca: require('node:fs').readFileSync(process.env.CA), timeout: 2000 }, (r) => process.exit(r.statusCode === 200 ? 0 : 1));
    req.on('error', () => process.exit(1)).on('timeout', () => process.exit(1));"
}

mkdir -p "$LOG_DIR" "$(dirname "$PIDFILE")"
pid=""
[ -f "$PIDFILE" ] && pid="$(cat "$PIDFILE")"
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'role=master'; then
  step "the master is already running (PID $pid)"
else
  step "starting minik8s --role=master,worker (log: $LOG)"
  nohup minik8s --role=master,worker --data-dir "$DATA_DIR" --port "$PORT" "$@" >>"$LOG" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PIDFILE"
fi

step "waiting for the API server to be ready on port $PORT"
for _ in $(seq 1 120); do
  if ready; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$PIDFILE"
    echo "setup: the master exited; the end of $LOG:" >&2
    tail -n 20 "$LOG" >&2
    exit 1
  fi
  sleep 0.5
done
ready || die "the master did not become ready within 60 s; see $LOG"

# The worker half joins over loopback once the API serves; its Node turns Ready with the first heartbeat.
step "waiting for this machine's node to be Ready"
node_ready() { KUBECONFIG="$DATA_DIR/admin.kubeconfig" minik8s get nodes --no-headers 2>/dev/null | awk '$2 == "Ready" { found = 1 } END { exit !found }'; }
for _ in $(seq 1 120); do
  if node_ready; then
    printf '\nminik8s is running (PID %s): master and worker in one process.\n  API:         https://127.0.0.1:%s (CA %s/pki/ca.crt)\n  kubeconfig:  %s/admin.kubeconfig\n  admin token: %s/admin-token\n  join token:  %s/join-token\n  CLI config:  %s/.minik8s/config\n  log:         %s\n  stop it:     kill %s\n' \
      "$pid" "$PORT" "$DATA_DIR" "$DATA_DIR" "$DATA_DIR" "$DATA_DIR" "$HOME" "$LOG" "$pid"
    exit 0
  fi
  kill -0 "$pid" 2>/dev/null || { echo "setup: minik8s exited; the end of $LOG:" >&2; tail -n 20 "$LOG" >&2; exit 1; }
  sleep 0.5
done
die "the node did not become Ready within 60 s; see $LOG"
