-- 0007: players (docs/design/players-ratings-forks-shards.md): who sits in a seat.
--
-- A player is an id, a display name (NFC, 1..32 characters, checked by the service) and a
-- colour chosen from the id at creation. A credential is stored only as the SHA-256 of the
-- whole token; revoking it sets revoked_at (and notifies `tablier_players`, so every server
-- drops it at once). An external identity (OpenID Connect issuer and subject) maps to one
-- player. The event log stays the record of matches: none of this is in a chain hash.
--
-- games.seat_players: per seat, the player bound to it (NULL: an anonymous or bot seat);
-- empty array: no seat is bound. Set when a signed-in player creates or joins the match.

CREATE TABLE players (
    player_id    uuid        PRIMARY KEY,
    display_name text        NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 32),
    colour       smallint    NOT NULL CHECK (colour BETWEEN 0 AND 11),
    created_at   timestamptz NOT NULL DEFAULT now(),
    oidc_issuer  text        NULL,
    oidc_subject text        NULL,
    UNIQUE (oidc_issuer, oidc_subject)
);

CREATE TABLE player_credentials (
    token_hash bytea       PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    player_id  uuid        NOT NULL REFERENCES players (player_id),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz NULL
);

CREATE INDEX player_credentials_player_idx ON player_credentials (player_id);

ALTER TABLE games
    ADD COLUMN seat_players uuid[] NOT NULL DEFAULT '{}',
    ADD CONSTRAINT games_seat_players_per_seat CHECK (cardinality(seat_players) IN (0, seats));

-- ListGames(mine): the matches where a player holds a seat.
CREATE INDEX games_seat_players_idx ON games USING gin (seat_players);
