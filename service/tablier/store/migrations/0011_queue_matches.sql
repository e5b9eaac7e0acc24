-- 0011: the matchmaking queue makes a match in two steps, each safe to stop after
-- (docs/design/players-ratings-forks-shards.md, "Ranked play"). A match's record lives on its
-- shard, the queue in the directory: one transaction cannot hold both.
--
-- 1. In the transaction that locks the waiting tickets (FOR UPDATE SKIP LOCKED), the server
--    writes the match it will make here (its game id and who sits where) and marks the tickets
--    with that game id: no other server can take them any more.
-- 2. It creates the match under that game id, then deletes the row. A server that stopped in
--    between leaves the row: any server creates the match from it (at its start and at each
--    look at the queue). The game id is the match's primary key, so it is created once
--    whichever servers try.
--
-- A ticket is told its match only once the row is gone (the match exists).
-- (0010 is the shards' migration.)

CREATE TABLE queue_matches (
    game_id   uuid        PRIMARY KEY,
    game_type text        NOT NULL,
    -- Per seat: its player, NULL at a bot's seat.
    players   uuid[]      NOT NULL,
    -- Per seat: the bot kind that plays it, '' at a player's seat.
    bots      text[]      NOT NULL,
    taken_at  timestamptz NOT NULL DEFAULT now()
);
