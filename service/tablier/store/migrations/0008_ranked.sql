-- 0008: ranked play (docs/design/players-ratings-forks-shards.md, "Ranked play").
--
-- games.ranked: the match was created ranked; it is rated when it ends.
--
-- rating_events: one stream per game type, chained like a match's events (the chain hash of
-- each event from the previous one, `tablier.integrity.chain_hash`, from a genesis per game
-- type). The payload is a tablier.v1.RatingEvent. One event per rated match (game_id UNIQUE):
-- two servers never rate one match twice, and (game_type, seq) orders the stream.
--
-- ratings: the projection of rating_events (each subject's latest mu and sigma, its count of
-- rated matches and the seq of the event that left it so): `tablier ratings rebuild`
-- recomputes it from the stream and must give the same rows.
--
-- match_queue: the matchmaking queue, shared by every server: a server making matches takes
-- tickets with FOR UPDATE SKIP LOCKED, and sets game_id and seat on the tickets it matched.

ALTER TABLE games ADD COLUMN ranked boolean NOT NULL DEFAULT false;

CREATE TABLE rating_events (
    game_type   text        NOT NULL,
    seq         bigint      NOT NULL CHECK (seq > 0),
    game_id     uuid        NOT NULL UNIQUE,
    payload     bytea       NOT NULL,
    chain_hash  bytea       NOT NULL CHECK (octet_length(chain_hash) = 32),
    subjects    text[]      NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game_type, seq)
);

-- A subject's rating history (GetRatingHistory).
CREATE INDEX rating_events_subjects_idx ON rating_events USING gin (subjects);

CREATE TABLE ratings (
    game_type text             NOT NULL,
    subject   text             NOT NULL,
    mu        double precision NOT NULL,
    sigma     double precision NOT NULL,
    rating    integer          NOT NULL,
    matches   integer          NOT NULL,
    last_seq  bigint           NOT NULL,
    PRIMARY KEY (game_type, subject)
);

CREATE INDEX ratings_board_idx ON ratings (game_type, rating DESC, matches DESC, subject);

CREATE TABLE match_queue (
    ticket      uuid             PRIMARY KEY,
    player_id   uuid             NOT NULL UNIQUE REFERENCES players (player_id),
    game_type   text             NOT NULL,
    seats       smallint         NOT NULL,
    rating      integer          NOT NULL,
    enqueued_at timestamptz      NOT NULL DEFAULT now(),
    -- Renewed by the player's server at each look at the queue: a ticket not renewed for a
    -- while (its server stopped) is dropped, not matched with a player who is gone.
    seen_at     timestamptz      NOT NULL DEFAULT now(),
    game_id     uuid             NULL,
    seat        smallint         NULL
);

CREATE INDEX match_queue_waiting_idx ON match_queue (game_type, seats, enqueued_at) WHERE game_id IS NULL;

-- The ranked matches a starting server looks at (ended but not yet rated: rated on resume).
CREATE INDEX games_ranked_idx ON games (created_at) WHERE ranked;
