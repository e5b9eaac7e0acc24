#!/bin/sh
# The test set-up's stand-in for the official postgres image's entrypoint (that image cannot be
# pulled here), for the subset compose.yaml uses: POSTGRES_USER, POSTGRES_PASSWORD or
# POSTGRES_PASSWORD_FILE, POSTGRES_DB, PGDATA. A first start creates the cluster (password
# authentication over TCP) and the database; later starts just run the server.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then
    POSTGRES_PASSWORD=$(cat "$POSTGRES_PASSWORD_FILE")
fi
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is required" >&2; exit 1; }
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    if [ "$db" != postgres ]; then
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
        createdb -U "$user" "$db"
        pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "initialised $PGDATA (user $user, database $db)"
fi
exec "$@"
