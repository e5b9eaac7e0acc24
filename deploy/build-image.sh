#!/usr/bin/env bash
# `make image`: the server wheel built on this host (Linux x86_64, like .ci/wheels does), every
# dependency downloaded as a wheel for the image's platform (CPython 3.11, manylinux x86_64),
# the web app (`make web`, built if missing), then deploy/Containerfile built from that context
# alone: the image build needs no network, no compiler and no source tree.
# Environment: ENGINE (podman, else docker), IMAGE (default localhost/tablier; tagged :VERSION
# and :latest), PYTHON (default python3, >= 3.11).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
IMAGE=${IMAGE:-localhost/tablier}
if [[ -z "${ENGINE:-}" ]]; then
    if command -v podman >/dev/null; then ENGINE=podman; else ENGINE=docker; fi
fi
[[ -f "$ROOT/clients/web/dist/index.html" ]] || make -C "$ROOT" web

CTX=$(mktemp -d "${TMPDIR:-/tmp}/tablier-image.XXXXXX")
trap 'rm -rf "$CTX"' EXIT
start=$SECONDS
"$PYTHON" -m pip wheel -q --no-deps -w "$CTX/wheels" "$ROOT"
wheel=$(echo "$CTX"/wheels/tablier-*.whl)
version=$(basename "$wheel" | cut -d- -f2)
# Every manylinux tag the image's glibc (2.36, Debian bookworm) accepts: pip does not widen one.
platforms=(--platform linux_x86_64 --platform manylinux1_x86_64 --platform manylinux2010_x86_64
           --platform manylinux2014_x86_64)
for minor in $(seq 5 36); do platforms+=(--platform "manylinux_2_${minor}_x86_64"); done
"$PYTHON" -m pip download -q -d "$CTX/wheels" --only-binary=:all: --implementation cp --python-version 3.11 \
    --abi cp311 --abi abi3 --abi none "${platforms[@]}" "$wheel"
cp -r "$ROOT/clients/web/dist" "$CTX/web"
cp "$ROOT/deploy/entrypoint.sh" "$ROOT/deploy/healthcheck.py" "$CTX/"
echo "context: $(ls "$CTX/wheels" | wc -l) wheels, $(du -sm "$CTX" | cut -f1) MB ($((SECONDS - start)) s)"

args=(build -f "$ROOT/deploy/Containerfile" --build-arg "VERSION=$version"
      --build-arg "REVISION=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
      -t "$IMAGE:$version" -t "$IMAGE:latest")
# The OCI image configuration has no healthcheck field: podman keeps HEALTHCHECK only in the
# docker format (docker always builds that format).
[[ "$ENGINE" == podman ]] && args+=(--format docker)
"$ENGINE" "${args[@]}" "$CTX"
size=$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE:$version")
echo "image $IMAGE:$version: $((size / 1000000)) MB ($((SECONDS - start)) s)"
