-- 0005: matches with a clock (options clock_*), so that a starting server finds every running
-- one and arms its deadline without replaying matches that have none.
--
-- clock_running is set when a match with a clock is created and cleared once the match is
-- over (by a separate statement after the append that ended it: a server that stops in
-- between leaves it set, and the next scan, finding the match over, clears it). Deadlines
-- themselves are not stored: they derive from the events' recorded times.

ALTER TABLE games ADD COLUMN clock_running boolean NOT NULL DEFAULT false;

CREATE INDEX games_clock_running_idx ON games (game_id) WHERE clock_running;
