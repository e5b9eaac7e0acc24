-- 0012: the ranked matches to rate (docs/design/players-ratings-forks-shards.md, "Ranked play"),
-- so that a starting server loads only those, not every ranked match in play.
--
-- A row is written before the append that ends a ranked match (the state after it is over),
-- and deleted in the transaction that writes the match's rating event (or once the match is
-- found not to be rated: stopped, a seat not a player). A server that stops between the end
-- and the rating leaves the row; the next server to start rates the match. A row whose append
-- then lost its race (the match did not end there) only costs that match a load at the next
-- start, and stays until it ends.

CREATE TABLE ranked_ends (
    game_id   uuid        PRIMARY KEY,
    game_type text        NOT NULL,
    marked_at timestamptz NOT NULL DEFAULT now()
);

-- The ranked matches already stored without a rating event, ended or not: looked at once.
INSERT INTO ranked_ends (game_id, game_type)
SELECT g.game_id, g.game_type FROM games g
WHERE g.ranked AND NOT EXISTS (SELECT 1 FROM rating_events r WHERE r.game_id = g.game_id);
