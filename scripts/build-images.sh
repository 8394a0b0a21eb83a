#!/usr/bin/env bash
# Builds minik8s's base images (pause, busybox, python, nginx, slurm-client) from local parts and pushes them into the master's registry store; cached.
# Usage (as root): scripts/build-images.sh [--only pause,busybox,python,nginx] [--force]
#
# No public registry is reachable, so every image is made here: pause from our own C source,
# busybox from Debian's busybox-static, python and nginx with debootstrap from the Debian mirror
# apt already uses. Each image carries a hash of its recipe in the label minik8s.inputs; an image
# whose hash matches, and that the registry already holds under every tag, is neither rebuilt nor
# pushed again, so a second run takes seconds. Root filesystems from debootstrap are cached in
# ${MINIK8S_CACHE_DIR:-/var/cache/minik8s}.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA_DIR="${MINIK8S_DATA_DIR:-/var/lib/minik8s}"
STORE="$DATA_DIR/registry"
CACHE_DIR="${MINIK8S_CACHE_DIR:-/var/cache/minik8s}"
REGISTRY=127.0.0.1:5000
SUITE=bookworm
ALL_IMAGES=(pause busybox python nginx slurm-client)
# Bump to rebuild every image (e.g. after a change outside the recipe functions that matters).
RECIPE_VERSION=1

step() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() { printf 'build-images: %s\n' "$*" >&2; exit 1; }

usage() {
  cat <<EOF
Usage (as root): $0 [--only NAME[,NAME...]] [--force]

Builds the base images (${ALL_IMAGES[*]}) and pushes them into the registry that keeps its
blobs in $STORE (set MINIK8S_DATA_DIR to change). When nothing answers on $REGISTRY, a
temporary registry on that store is started for the push and stopped afterwards.

  --only LIST   build only these images (comma-separated)
  --force       rebuild and push even when the cached image is up to date
EOF
}

tags_of() {
  case "$1" in
    pause) echo "minik8s/pause:1.0" ;;
    busybox) echo "busybox:1.35 busybox:latest" ;;
    python) echo "python:3.11 python:latest" ;;
    nginx) echo "nginx:1.22 nginx:latest" ;;
    slurm-client) echo "minik8s/slurm-client:22.05" ;;
  esac
}

ONLY=("${ALL_IMAGES[@]}")
FORCE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) [ $# -ge 2 ] || die "--only needs a list, e.g. --only pause,busybox"; IFS=, read -r -a ONLY <<<"$2"; shift 2 ;;
    --only=*) IFS=, read -r -a ONLY <<<"${1#--only=}"; shift ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[ "${#ONLY[@]}" -gt 0 ] || die "--only needs at least one image name (${ALL_IMAGES[*]})"
for name in "${ONLY[@]}"; do
  [ -n "$(tags_of "$name")" ] || die "unknown image \"$name\" (known: ${ALL_IMAGES[*]})"
done

[ "$(id -u)" -eq 0 ] || die "run as root: $0 $*"
export DEBIAN_FRONTEND=noninteractive
STARTED_AT=$SECONDS

# ---------------------------------------------------------------- tools

ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  step "installing ${missing[*]}"
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

packages=(curl docker-registry)
for name in "${ONLY[@]}"; do
  case "$name" in
    pause) packages+=(gcc libc6-dev binutils) ;;
    busybox) packages+=(busybox-static) ;;
    python|nginx|slurm-client) packages+=(debootstrap) ;;
  esac
done
ensure_packages "${packages[@]}"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer (docker info failed): run scripts/install-docker.sh first"

mkdir -p "$CACHE_DIR" "$STORE"
WORK="$(mktemp -d "$CACHE_DIR/work.XXXXXX")"
TEMP_REGISTRY_PID=""

cleanup() {
  local status=$? mnt
  if [ -n "$TEMP_REGISTRY_PID" ] && kill -0 "$TEMP_REGISTRY_PID" 2>/dev/null; then
    kill -TERM "$TEMP_REGISTRY_PID" 2>/dev/null || true
    wait "$TEMP_REGISTRY_PID" 2>/dev/null || true
  fi
  # An interrupted debootstrap leaves proc/sys mounted inside its target; never rm -rf through a mount.
  while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done < <(awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/mounts | sort -r)
  rm -rf --one-file-system "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- registry

# A running master's registry speaks HTTPS with the cluster CA (DATA_DIR/pki/ca.crt) unless it runs
# --insecure-http; the temporary one speaks plain HTTP. registry_up sets how curl reaches it.
REGISTRY_URL="http://$REGISTRY"
CURL_TLS=()
registry_up() {
  local ca="$DATA_DIR/pki/ca.crt"
  if [ -f "$ca" ] && curl -fsS -m 2 -o /dev/null --cacert "$ca" "https://$REGISTRY/v2/" 2>/dev/null; then
    REGISTRY_URL="https://$REGISTRY"
    CURL_TLS=(--cacert "$ca")
    return 0
  fi
  REGISTRY_URL="http://$REGISTRY"
  CURL_TLS=()
  curl -fsS -m 2 -o /dev/null "$REGISTRY_URL/v2/" 2>/dev/null
}

start_temp_registry() {
  local config="$WORK/registry.yml" log="$CACHE_DIR/build-registry.log" deadline
  cat >"$config" <<EOF
# Temporary registry for scripts/build-images.sh: the master's store, loopback only.
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $STORE
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
http:
  addr: $REGISTRY
EOF
  docker-registry serve "$config" >"$log" 2>&1 </dev/null &
  TEMP_REGISTRY_PID=$!
  deadline=$((SECONDS + 20))
  until registry_up; do
    if ! kill -0 "$TEMP_REGISTRY_PID" 2>/dev/null; then
      TEMP_REGISTRY_PID=""
      tail -n 5 "$log" >&2
      die "the temporary registry exited at start (log: $log); is port ${REGISTRY##*:} in use?"
    fi
    [ "$SECONDS" -lt "$deadline" ] || die "the temporary registry did not answer on $REGISTRY within 20 s (log: $log)"
    sleep 0.1
  done
  note "started a temporary registry on $REGISTRY (PID $TEMP_REGISTRY_PID, store $STORE)"
}

# The config digest the registry holds for NAME:TAG (equals the local image ID when they match), or nothing.
registry_config_digest() {
  local repo="${1%:*}" tag="${1##*:}"
  curl -fsS -m 5 ${CURL_TLS[@]+"${CURL_TLS[@]}"} -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "$REGISTRY_URL/v2/$repo/manifests/$tag" 2>/dev/null \
    | tr -d ' \n\t' | sed -n 's/.*"config":{[^}]*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p'
}

local_id() { docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true; }
local_inputs() { docker image inspect -f '{{index .Config.Labels "minik8s.inputs"}}' "$1" 2>/dev/null || true; }

push() {
  local ref="$1" log="$WORK/push.log"
  if ! docker push "$ref" >"$log" 2>&1; then
    tail -n 5 "$log" >&2
    die "pushing $ref failed"
  fi
}

# ---------------------------------------------------------------- recipes

# The Debian mirror apt already uses (deb822 .sources first, then sources.list); never a built-in host.
debian_mirror() {
  if [ -n "${MINIK8S_DEBIAN_MIRROR:-}" ]; then echo "$MINIK8S_DEBIAN_MIRROR"; return; fi
  local mirror=""
  shopt -s nullglob
  local sources=(/etc/apt/sources.list.d/*.sources)
  shopt -u nullglob
  if [ "${#sources[@]}" -gt 0 ]; then
    # A stanza of Types deb whose Suites name the bare release (not -security or -updates).
    mirror="$(awk -v suite="$SUITE" '
      function flush() { if (deb && hit && uri != "" && out == "") out = uri; deb = 0; hit = 0; uri = "" }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite || $i == "stable") hit = 1 }
      tolower($1) == "uris:" { uri = $2 }
      END { flush(); print out }' "${sources[@]}")"
  fi
  if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror="$(awk -v suite="$SUITE" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } if ($(i + 1) == suite) { print $i; exit } }' /etc/apt/sources.list)"
  fi
  [ -n "$mirror" ] || die "cannot find a Debian mirror for $SUITE in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list; set MINIK8S_DEBIAN_MIRROR"
  echo "$mirror"
}

# A minbase Debian root filesystem with extra packages, without apt's caches and docs.
debootstrap_rootfs() {
  local dir="$1" include="$2" mirror log="$WORK/debootstrap.log"
  mirror="$(debian_mirror)"
  note "debootstrap $SUITE (+$include) from $mirror"
  if ! debootstrap --variant=minbase --include="$include" "$SUITE" "$dir" "$mirror" >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    [ -f "$dir/debootstrap/debootstrap.log" ] && tail -n 15 "$dir/debootstrap/debootstrap.log" >&2
    die "debootstrap failed (see above)"
  fi
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin "$dir"/var/lib/apt/lists/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/var/log/*.log "$dir"/var/log/apt/*
}

# Builds the root filesystem tarball once and keeps it in the cache, keyed by the recipe's hash.
cached_rootfs() {
  local name="$1" key="$2" builder="$3" tarball="$CACHE_DIR/rootfs-$1-${2:0:16}.tar" dir
  if [ -s "$tarball" ]; then
    note "root filesystem from cache ($tarball)" >&2
  else
    find "$CACHE_DIR" -maxdepth 1 -name "rootfs-$name-*.tar*" -delete
    dir="$WORK/rootfs-$name"
    mkdir -p "$dir"
    "$builder" "$dir" >&2
    tar -C "$dir" --numeric-owner --one-file-system -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
  fi
  echo "$tarball"
}

import_tar() {
  local source="$1" ref="$2" hash="$3"; shift 3
  local changes=(--change "LABEL minik8s.inputs=$hash") change
  for change in "$@"; do changes+=(--change "$change"); done
  docker import "${changes[@]}" "$source" "$ref" >/dev/null
}

PATH_ENV='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

build_pause() {
  local ref="$1" hash="$2" dir="$WORK/pause"
  mkdir -p "$dir"
  gcc -Os -Wall -Wextra -Werror -static -o "$dir/pause" "$ROOT/images/pause/pause.c"
  strip "$dir/pause"
  tar -C "$dir" --owner=0 --group=0 -cf "$WORK/pause.tar" pause
  import_tar "$WORK/pause.tar" "$ref" "$hash" 'ENTRYPOINT ["/pause"]'
}

build_busybox() {
  local ref="$1" hash="$2" dir="$WORK/busybox" applet
  local version
  version="$(dpkg-query -W -f='${Version}' busybox-static)"
  case "$version" in *1.35*) ;; *) note "warning: busybox-static is $version, but the image is tagged 1.35" ;; esac
  mkdir -p "$dir"/{bin,etc,root,tmp,var/tmp,usr/bin,usr/sbin,sbin,home,proc,sys,dev}
  chmod 1777 "$dir/tmp" "$dir/var/tmp"
  chmod 700 "$dir/root"
  cp /bin/busybox "$dir/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$dir/bin/$applet"
  done
  # Scripts written for a full system look for env in /usr/bin.
  ln -sf ../../bin/busybox "$dir/usr/bin/env"
  printf 'root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$dir/etc/passwd"
  printf 'root:x:0:\ndaemon:x:1:\ntty:x:5:\nnogroup:x:65534:\n' >"$dir/etc/group"
  tar -C "$dir" --owner=0 --group=0 --numeric-owner -cf "$WORK/busybox.tar" .
  import_tar "$WORK/busybox.tar" "$ref" "$hash" "$PATH_ENV" 'CMD ["sh"]'
}

python_rootfs() {
  local dir="$1" version
  # pip: the image factory installs functions' requirements with it (pip install --target) at build time.
  debootstrap_rootfs "$dir" python3,python-is-python3,python3-pip
  chroot "$dir" python3 -m pip --version >/dev/null 2>&1 || die "pip does not run in the new root filesystem"
  version="$(chroot "$dir" python --version 2>&1)" || die "python does not run in the new root filesystem: $version"
  case "$version" in "Python 3.11"*) ;; *) note "warning: the image has $version, but is tagged 3.11" ;; esac
}

build_python() {
  local ref="$1" hash="$2" tarball
  tarball="$(cached_rootfs python "$(recipe_hash python_rootfs)" python_rootfs)"
  import_tar "$tarball" "$ref" "$hash" "$PATH_ENV" 'ENV LANG=C.UTF-8' 'CMD ["python3"]'
}

nginx_rootfs() {
  local dir="$1" version
  debootstrap_rootfs "$dir" nginx-light
  # Like the usual nginx image: server blocks in conf.d, content in /usr/share/nginx/html, logs to the container's output.
  cat >"$dir/etc/nginx/nginx.conf" <<'EOF'
user www-data;
worker_processes auto;
pid /run/nginx.pid;
error_log stderr notice;

events {
    worker_connections 1024;
}

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /dev/stdout;
    sendfile on;
    keepalive_timeout 65;
    include /etc/nginx/conf.d/*.conf;
}
EOF
  mkdir -p "$dir/etc/nginx/conf.d" "$dir/usr/share/nginx/html"
  cat >"$dir/etc/nginx/conf.d/default.conf" <<'EOF'
server {
    listen 80 default_server;
    listen [::]:80 default_server;
    server_name _;
    root /usr/share/nginx/html;
    index index.html;
    location / {
        try_files $uri $uri/ =404;
    }
}
EOF
  cat >"$dir/usr/share/nginx/html/index.html" <<'EOF'
<!DOCTYPE html>
<html>
<head><title>Welcome to nginx!</title></head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is working (a minik8s base image).</p>
</body>
</html>
EOF
  rm -f "$dir/etc/nginx/sites-enabled/default"
  mkdir -p "$dir/var/log/nginx"
  ln -sf /dev/stdout "$dir/var/log/nginx/access.log"
  ln -sf /dev/stderr "$dir/var/log/nginx/error.log"
  # /dev/stdout is a link into /proc: nginx -t opens the log files, so it needs a /proc there.
  mount -t proc proc "$dir/proc"
  if ! chroot "$dir" nginx -t -q; then
    umount "$dir/proc"
    die "the nginx configuration does not pass nginx -t"
  fi
  umount "$dir/proc"
  version="$(chroot "$dir" nginx -v 2>&1)"
  case "$version" in *nginx/1.22*) ;; *) note "warning: the image has $version, but is tagged 1.22" ;; esac
}

build_nginx() {
  local ref="$1" hash="$2" tarball
  tarball="$(cached_rootfs nginx "$(recipe_hash nginx_rootfs)" nginx_rootfs)"
  import_tar "$tarball" "$ref" "$hash" "$PATH_ENV" 'EXPOSE 80/tcp' 'CMD ["nginx", "-g", "daemon off;"]'
}

# GPU job submitters: Debian's Slurm client (the same 22.05 as Debian's slurmctld), munge's library, ssh and python3,
# with our submitter (templates/gpu-job/) added on top of the cached root filesystem, so editing it costs no debootstrap.
slurm_client_rootfs() {
  local dir="$1"
  debootstrap_rootfs "$dir" python3,slurm-client,openssh-client
  # The client talks to the node's munged through its socket; a key made at install time would only mislead.
  rm -f "$dir/etc/munge/munge.key"
  # sbatch reads a configuration even for --version: a throwaway one proves that it runs.
  printf 'ClusterName=check\nSlurmctldHost=localhost\n' >"$dir/tmp/check.conf"
  chroot "$dir" env SLURM_CONF=/tmp/check.conf sbatch --version >/dev/null 2>&1 || die "sbatch does not run in the new root filesystem"
  rm -f "$dir/tmp/check.conf"
}

build_slurm-client() {
  local ref="$1" hash="$2" tarball
  tarball="$(cached_rootfs slurm-client "$(recipe_hash slurm_client_rootfs)" slurm_client_rootfs)"
  cp "$tarball" "$WORK/slurm-client.tar"
  tar -C "$ROOT/templates/gpu-job" --owner=0 --group=0 --numeric-owner --mode=0755 \
    --transform 's,^submitter.py$,opt/minik8s/gpujob-submitter.py,' -rf "$WORK/slurm-client.tar" submitter.py
  import_tar "$WORK/slurm-client.tar" "$ref" "$hash" "$PATH_ENV" 'ENV LANG=C.UTF-8' 'CMD ["python3", "/opt/minik8s/gpujob-submitter.py", "submit"]'
}

# A hash of everything a recipe depends on: the bodies of its functions, its source files, host package versions.
recipe_hash() {
  {
    echo "recipe $RECIPE_VERSION suite $SUITE"
    declare -f "$@" debootstrap_rootfs import_tar
    echo "$PATH_ENV"
    case "$1" in
      build_pause) cat "$ROOT/images/pause/pause.c" ;;
      build_busybox) dpkg-query -W -f='${Version}' busybox-static ;;
      build_python) declare -f python_rootfs ;;
      build_nginx) declare -f nginx_rootfs ;;
      build_slurm-client) declare -f slurm_client_rootfs; cat "$ROOT/templates/gpu-job/submitter.py" ;;
    esac
  } | sha256sum | cut -c1-64
}

# ---------------------------------------------------------------- main

describe() {
  case "$1" in
    pause) echo "building pause (static C binary, about 1 s)" ;;
    busybox) echo "building busybox (busybox-static, about 2 s)" ;;
    python) echo "building python (debootstrap with pip, about 40 s; cached after the first run)" ;;
    nginx) echo "building nginx (debootstrap, about 30 s; cached after the first run)" ;;
    slurm-client) echo "building slurm-client (debootstrap with Slurm's client, about 60 s; cached after the first run)" ;;
  esac
}

# True when the registry holds every tag of the image as exactly the local image ID.
registry_has() {
  local id="$1" tag; shift
  for tag in "$@"; do
    [ "$(registry_config_digest "$tag")" = "$id" ] || return 1
  done
}

ensure_image() {
  local name="$1" hash tags primary ref id tag t0=$SECONDS
  read -r -a tags <<<"$(tags_of "$name")"
  primary="${tags[0]}"
  ref="$REGISTRY/$primary"
  hash="$(recipe_hash "build_$name")"

  if [ -z "$FORCE" ] && [ "$(local_inputs "$ref")" != "$hash" ] && [ -n "$(registry_config_digest "$primary")" ]; then
    # The registry may hold the image even when this engine lost it (e.g. a fresh Docker data dir).
    docker pull -q "$ref" >/dev/null 2>&1 || true
  fi
  if [ -z "$FORCE" ] && [ "$(local_inputs "$ref")" = "$hash" ]; then
    id="$(local_id "$ref")"
    for tag in "${tags[@]}"; do docker tag "$id" "$REGISTRY/$tag"; done
    if registry_has "$id" "${tags[@]}"; then
      step "$name is up to date (${tags[*]})"
      return
    fi
    step "pushing $name (cached build)"
  else
    step "$(describe "$name")"
    "build_$name" "$ref" "$hash"
    id="$(local_id "$ref")"
    for tag in "${tags[@]:1}"; do docker tag "$ref" "$REGISTRY/$tag"; done
  fi
  for tag in "${tags[@]}"; do
    push "$REGISTRY/$tag"
    note "pushed $REGISTRY/$tag"
  done
  note "$name done in $((SECONDS - t0)) s ($(docker image inspect -f '{{.Size}}' "$ref" | awk '{ printf "%.1f MB", $1 / 1e6 }'))"
}

if registry_up; then
  note "using the registry that answers on $REGISTRY"
else
  start_temp_registry
fi
for name in "${ONLY[@]}"; do ensure_image "$name"; done
step "done in $((SECONDS - STARTED_AT)) s; the images are in $STORE"
