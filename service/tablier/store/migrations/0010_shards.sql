-- 0010: shards (docs/design/players-ratings-forks-shards.md, "Shards"): matches spread over
-- several PostgreSQL databases. Every database gets these tables; only the directory's (the
-- first --database-url) `match_directory` and `shards` are used.
--
-- match_directory: the shard each match was created on (rendezvous hashing of its game id over
-- the shards' names, chosen once: a match never moves). A match with no row lives on the
-- directory database (every match made before sharding).
-- shards: the shards known to every server (the ones named on the command line, and the ones
-- added live with `tablier shards add`), with the URL a server opens them with.
-- shard_identity: this database's own shard name, written the first time it is opened as a
-- shard, and whether it is the directory: a database is never taken for another shard.

CREATE TABLE match_directory (
    game_id    uuid        PRIMARY KEY,
    shard      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shards (
    name     text        PRIMARY KEY,
    url      text        NOT NULL,
    added_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shard_identity (
    one       boolean     PRIMARY KEY DEFAULT true CHECK (one),
    name      text        NOT NULL,
    directory boolean     NOT NULL,
    named_at  timestamptz NOT NULL DEFAULT now()
);
