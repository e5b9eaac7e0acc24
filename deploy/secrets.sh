#!/bin/sh
# The five secrets compose.yaml reads, made once in DIR (default ./secrets): a random PostgreSQL
# password, host and auditor tokens (43 characters each, different), a 64-hex-digit seed key and
# a 64-hex-digit Ed25519 signing key (receipts and the witness's checkpoints). Existing files are
# kept (a new seed key would make every stored seed unreadable). Keep both keys out of the
# database's backups.
set -eu
dir=${1:-./secrets}
mkdir -p "$dir"
chmod 700 "$dir"
for name in postgres_password host_token auditor_token seed_key signing_key; do
    [ -s "$dir/$name" ] && continue
    if [ "$name" = seed_key ] || [ "$name" = signing_key ]; then
        python3 -c 'import secrets; print(secrets.token_hex(32))' > "$dir/$name"
    else
        python3 -c 'import secrets; print(secrets.token_urlsafe(32))' > "$dir/$name"
    fi
    # The containers' users (tablier 10001, postgres) read them through the bind mount.
    chmod 644 "$dir/$name"
    echo "made $dir/$name"
done
