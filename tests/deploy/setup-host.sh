#!/usr/bin/env bash
# The container engine for tests/deploy, installed and configured from Debian's packages (and
# podman-compose from PyPI, pinned, in .tools/), then the base images the Containerfile and the
# compose file name, built from Debian's packages (no image registry is reachable from CI).
# Idempotent: a second run changes nothing and takes a few seconds (see base-images.sh for the
# cache). Run as root, as CI does; exits non-zero when an install or an image build failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PODMAN_COMPOSE=1.6.0   # PyPI; Debian's 1.0.3 ignores `depends_on: condition: service_healthy`

need=()
for cmd in podman runc mmdebstrap; do command -v "$cmd" >/dev/null || need+=("$cmd"); done
# netavark + aardvark-dns: per-project networks with name resolution (compose's `postgres` host);
# netavark sets up the bridge and the published ports with iptables; catatonit is the init of
# the pause container of a pod (`podman kube play`).
for pkg in netavark aardvark-dns iptables uidmap catatonit; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
if ((${#need[@]})); then
    echo "installing ${need[*]} (apt)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        podman runc conmon netavark aardvark-dns iptables uidmap catatonit mmdebstrap buildah \
        golang-github-containers-common >/dev/null
fi

# crun, podman's default runtime, fails on this kind of machine ("setrlimit RLIMIT_NOFILE:
# Operation not permitted"); runc with explicit ulimits works. A drop-in keeps the rest of
# /etc/containers/containers.conf as the distribution or the operator left it.
conf=/etc/containers/containers.conf.d/50-tablier-ci.conf
want='# written by tablier tests/deploy/setup-host.sh
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
network_backend = "netavark"
'
if ! printf '%s' "$want" | cmp -s - "$conf"; then
    mkdir -p "$(dirname "$conf")"
    printf '%s' "$want" > "$conf"
    echo "wrote $conf"
fi

# podman-compose, pinned, in its own environment under .tools/ (git-ignored).
pc="$ROOT/.tools/podman-compose"
if ! "$pc/bin/podman-compose" version 2>/dev/null | grep -q "podman-compose version $PODMAN_COMPOSE"; then
    python3 -m venv "$pc"
    "$pc/bin/pip" install -q "podman-compose==$PODMAN_COMPOSE"
fi
mkdir -p "$ROOT/.tools/bin"
ln -sf "$pc/bin/podman-compose" "$ROOT/.tools/bin/podman-compose"

podman info --format '{{.Host.OCIRuntime.Name}} {{.Version.Version}}' | sed 's/^/podman: runtime /'
"$ROOT/tests/deploy/base-images.sh"
"$ROOT/tests/deploy/nats-image.sh"

# On a machine whose kernel or sandbox does not let podman run containers, tests/deploy skips
# with the reason; say it here too. Everything above failing fails the set-up.
if ! out=$(podman run --rm --network none --entrypoint true docker.io/library/python:3.11-slim-bookworm 2>&1); then
    echo "podman cannot run a container on this machine; tests/deploy will skip: $(tail -n 1 <<<"$out")"
fi
