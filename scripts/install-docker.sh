#!/usr/bin/env bash
# Gets a Debian 12 machine (as root) ready for minik8s's containers: installs Docker and the image tools, and makes sure a Docker engine runs; safe to run again.
# Usage (as root): scripts/install-docker.sh
#   MINIK8S_INSECURE_REGISTRIES=10.0.0.1:5000[,...]  registries the engine may use over plain HTTP: only needed for a
#                                                    master run with --insecure-http (127.0.0.1:5000 is always included).
# A master's registry speaks HTTPS with a certificate of the cluster CA; the engine trusts it through
# /etc/docker/certs.d/HOST:PORT/ca.crt, which the master (for itself) and each worker (at its join, from
# the CA it pinned) write: a worker's engine needs no insecure-registries entry for it.
set -euo pipefail

LOG_DIR=/var/log/minik8s
DOCKERD_LOG="$LOG_DIR/dockerd.log"
PIDFILE=/run/minik8s/dockerd.pid
PACKAGES=(docker.io docker-registry debootstrap busybox-static iptables iproute2 curl)

step() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() { printf 'install-docker: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root: $0"
export DEBIAN_FRONTEND=noninteractive

IFS=, read -r -a registries <<<"127.0.0.1:5000${MINIK8S_INSECURE_REGISTRIES:+,$MINIK8S_INSECURE_REGISTRIES}"

# systemd only counts when it is PID 1 (containers often have systemctl without a running systemd).
has_systemd() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null; }
docker_up() { timeout 10 docker info >/dev/null 2>&1; }

step "installing ${PACKAGES[*]}"
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  note "already installed"
fi
command -v docker >/dev/null || die "the docker command is missing even though docker.io is installed"

# Debian's docker-registry package starts its own registry on :5000; minik8s's master runs its own there.
if has_systemd; then
  if systemctl is-enabled --quiet docker-registry 2>/dev/null || systemctl is-active --quiet docker-registry 2>/dev/null; then
    step "disabling the distribution's docker-registry service (the minik8s master runs its own registry)"
    systemctl disable --now docker-registry || true
  fi
elif [ -x /etc/init.d/docker-registry ] && /etc/init.d/docker-registry status >/dev/null 2>&1; then
  step "stopping the distribution's docker-registry service (the minik8s master runs its own registry)"
  /etc/init.d/docker-registry stop || true
  update-rc.d docker-registry disable >/dev/null 2>&1 || true
fi

# The engine's insecure registries, for systemd-run engines that read /etc/docker/daemon.json.
ensure_daemon_json() {
  local file=/etc/docker/daemon.json want
  want="$(printf '"%s",' "${registries[@]}")"
  want="[${want%,}]"
  if [ ! -s "$file" ]; then
    mkdir -p /etc/docker
    printf '{\n  "insecure-registries": %s\n}\n' "$want" >"$file"
    return 0
  fi
  local reg
  for reg in "${registries[@]}"; do
    grep -q "\"$reg\"" "$file" || note "warning: $file exists but does not list $reg under insecure-registries; add it and restart docker"
  done
  return 1
}

if docker_up; then
  step "the Docker engine is running"
  # An engine we did not start cannot be given new flags here: say what it lacks.
  for reg in "${registries[@]}"; do
    case "$reg" in 127.*|localhost:*) continue ;; esac
    docker info --format '{{json .RegistryConfig.IndexConfigs}}' 2>/dev/null | grep -q "\"$reg\"" \
      || note "warning: the running engine does not allow plain HTTP to $reg (needed only for an --insecure-http master); restart dockerd with --insecure-registry $reg"
  done
elif has_systemd; then
  step "starting docker with systemd"
  if ensure_daemon_json; then note "wrote /etc/docker/daemon.json (insecure-registries: ${registries[*]})"; fi
  systemctl enable docker >/dev/null 2>&1 || true
  systemctl restart docker
else
  step "starting dockerd in the background (log: $DOCKERD_LOG)"
  mkdir -p "$LOG_DIR" "$(dirname "$PIDFILE")"
  old=""
  [ -f "$PIDFILE" ] && old="$(cat "$PIDFILE")"
  if [ -n "$old" ] && kill -0 "$old" 2>/dev/null && tr '\0' ' ' <"/proc/$old/cmdline" | grep -q '^dockerd '; then
    note "dockerd (PID $old) is starting already"
  else
    flags=()
    for reg in "${registries[@]}"; do flags+=(--insecure-registry "$reg"); done
    nohup dockerd "${flags[@]}" >>"$DOCKERD_LOG" 2>&1 </dev/null &
    echo $! >"$PIDFILE"
    note "dockerd PID $!"
  fi
fi

step "waiting for the Docker engine to answer"
deadline=$((SECONDS + 60))
until docker_up; do
  if [ -f "$PIDFILE" ] && ! has_systemd; then
    pid="$(cat "$PIDFILE")"
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "install-docker: dockerd exited; the end of $DOCKERD_LOG:" >&2
      tail -n 15 "$DOCKERD_LOG" >&2
      rm -f "$PIDFILE"
      exit 1
    fi
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    [ -f "$DOCKERD_LOG" ] && tail -n 15 "$DOCKERD_LOG" >&2
    die "the Docker engine did not answer within 60 s"
  fi
  sleep 0.5
done
printf '    Docker %s (storage %s, cgroup v%s) is ready\n' \
  "$(docker info --format '{{.ServerVersion}}')" "$(docker info --format '{{.Driver}}')" "$(docker info --format '{{.CgroupVersion}}')"
