#!/usr/bin/env bash
# The two base images deploy/ names, made from Debian bookworm's packages with mmdebstrap and
# `podman import`, and tagged locally under the names deploy/Containerfile and
# deploy/compose.yaml use (no image registry is reachable from CI; elsewhere the engine pulls
# the official images of those names):
#   docker.io/library/python:3.11-slim-bookworm  Debian's python3 (3.11) and python3-venv
#   docker.io/library/postgres:15-bookworm       Debian's PostgreSQL 15 with a stand-in for
#                                                the official entrypoint (postgres/)
# Cached, keyed by this script and the stand-in's files: an image already tagged with the key
# is kept; else a root filesystem tarball in $TABLIER_IMAGE_CACHE (default
# /var/cache/tablier-ci) is imported; else mmdebstrap builds it (about a minute each).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${TABLIER_IMAGE_CACHE:-/var/cache/tablier-ci}
SUITE=bookworm
KEY=$(cat "$0" "$HERE"/postgres/* | sha256sum | cut -c1-16)
mkdir -p "$CACHE"

image() {  # name tag-suffix mmdebstrap-args...
    local name=$1 label=$2
    shift 2
    local tar="$CACHE/$label-$KEY.tar"
    local have
    have=$(podman image inspect --format '{{ index .Labels "org.tablier.ci.key" }}' "$name" 2>/dev/null || true)
    if [[ "$have" == "$KEY" ]]; then
        echo "base image $name: cached ($KEY)"
        return
    fi
    if [[ ! -s "$tar" ]]; then
        echo "base image $name: mmdebstrap $SUITE"
        local start=$SECONDS
        rm -f "$CACHE/$label-"*.tar
        mmdebstrap --quiet --variant=minbase --format=tar "$@" "$SUITE" "$tar.part"
        mv "$tar.part" "$tar"
        echo "  rootfs $(du -m "$tar" | cut -f1) MB in $((SECONDS - start)) s"
    fi
    podman import --quiet "${CHANGES[@]}" --change "LABEL org.tablier.ci.key=$KEY" "$tar" "$name" >/dev/null
    echo "base image $name: imported ($KEY)"
}

CHANGES=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
         --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]')
image docker.io/library/python:3.11-slim-bookworm python \
    --include=python3,python3-venv \
    --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/var/cache/apt/*.bin'

CHANGES=(--change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
         --change 'ENV LANG=C.UTF-8' --change 'ENV PGDATA=/var/lib/postgresql/data'
         --change 'VOLUME /var/lib/postgresql/data' --change 'EXPOSE 5432' --change 'STOPSIGNAL SIGINT'
         --change 'ENTRYPOINT ["docker-entrypoint.sh"]' --change 'CMD ["postgres"]')
image docker.io/library/postgres:15-bookworm postgres \
    --include=postgresql-15,postgresql-client-15 \
    --customize-hook='chroot "$1" pg_dropcluster 15 main || true' \
    --customize-hook="copy-in $HERE/postgres/docker-entrypoint.sh /usr/local/bin/" \
    --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/var/cache/apt/*.bin'
