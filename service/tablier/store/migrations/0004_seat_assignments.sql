-- 0004: seats filled after the match is created (JoinGame), and seats the server plays itself.
--
-- token_hashes keeps one entry per seat: the SHA-256 of the token of whoever holds the seat,
-- or an empty bytea while nobody does (an open or invited seat not yet joined, a bot seat).
-- JoinGame fills an empty entry with one conditional UPDATE, so of two joins racing for one
-- seat exactly one wins. A seat's holder never changes once set.
--
-- invite_hashes: per seat, the SHA-256 of its invite code (empty: not an invited seat); empty
-- array: no invited seat. bots: per seat, the bot the server plays it with (empty: none);
-- empty array: no bot seat. Matches stored before this migration have neither.

ALTER TABLE games
    ADD COLUMN invite_hashes bytea[] NOT NULL DEFAULT '{}',
    ADD COLUMN bots          text[]  NOT NULL DEFAULT '{}',
    ADD CONSTRAINT games_invite_hashes_per_seat CHECK (cardinality(invite_hashes) IN (0, seats)),
    ADD CONSTRAINT games_bots_per_seat CHECK (cardinality(bots) IN (0, seats));
