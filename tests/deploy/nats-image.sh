#!/usr/bin/env bash
# The NATS image deploy/compose.yaml names (docker.io/library/nats:2.9), made from Debian
# bookworm's nats-server package (2.9.10) with mmdebstrap and `podman import`, as base-images.sh
# makes the others (no image registry is reachable from CI; elsewhere the engine pulls the
# official image, whose entrypoint is nats-server too). Cached the same way, keyed by this script.
set -euo pipefail
CACHE=${TABLIER_IMAGE_CACHE:-/var/cache/tablier-ci}
NAME=docker.io/library/nats:2.9
KEY=$(sha256sum "$0" | cut -c1-16)
mkdir -p "$CACHE"
have=$(podman image inspect --format '{{ index .Labels "org.tablier.ci.key" }}' "$NAME" 2>/dev/null || true)
if [[ "$have" == "$KEY" ]]; then
    echo "base image $NAME: cached ($KEY)"
    exit 0
fi
tar="$CACHE/nats-$KEY.tar"
if [[ ! -s "$tar" ]]; then
    echo "base image $NAME: mmdebstrap bookworm"
    start=$SECONDS
    rm -f "$CACHE"/nats-*.tar
    mmdebstrap --quiet --variant=minbase --format=tar --include=nats-server \
        --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/var/cache/apt/*.bin' \
        bookworm "$tar.part"
    mv "$tar.part" "$tar"
    echo "  rootfs $(du -m "$tar" | cut -f1) MB in $((SECONDS - start)) s"
fi
podman import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'EXPOSE 4222' --change 'USER 65534:65534' --change 'ENTRYPOINT ["nats-server"]' \
    --change 'CMD ["--addr", "0.0.0.0", "--port", "4222"]' \
    --change "LABEL org.tablier.ci.key=$KEY" "$tar" "$NAME" >/dev/null
echo "base image $NAME: imported ($KEY)"
