-- 0001: matches, their event log, and the command ids that wrote it.
--
-- The events table is the truth. Rows are never updated or deleted: a trigger refuses
-- UPDATE, DELETE and TRUNCATE. Each row records the core version that wrote it
-- (core_version), so a reader can tell an older event shape apart; none is read differently yet.
-- SQL here is limited to PostgreSQL 15 features.

CREATE TABLE games (
    game_id      uuid        PRIMARY KEY,
    game_type    text        NOT NULL,
    seats        integer     NOT NULL CHECK (seats > 0),
    options      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    -- 32-byte secret: every random outcome of the match derives from it and the seq.
    seed         bytea       NOT NULL,
    -- SHA-256 of each seat's token, in seat order.
    token_hashes bytea[]     NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX games_created_at_idx ON games (created_at, game_id);

CREATE TABLE events (
    game_id      uuid        NOT NULL REFERENCES games (game_id),
    seq          bigint      NOT NULL CHECK (seq > 0),
    kind         text        NOT NULL,
    payload      bytea       NOT NULL,
    -- The seat whose command caused the event; NULL for automatic events.
    seat         integer     NULL CHECK (seat >= 0),
    command_id   text        NULL,
    core_version text        NOT NULL,
    -- Hash of the state after this event, as the core computed it.
    state_hash   bytea       NOT NULL,
    -- base.chain_hash(previous chain_hash or genesis, seq, event, command_id).
    chain_hash   bytea       NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    -- Optimistic concurrency: two commands appending at the same seq cannot both commit.
    PRIMARY KEY (game_id, seq)
);

-- Which events each command wrote, so that a retried command returns them again.
CREATE TABLE commands (
    game_id    uuid   NOT NULL REFERENCES games (game_id),
    command_id text   NOT NULL,
    first_seq  bigint NOT NULL CHECK (first_seq > 0),
    last_seq   bigint NOT NULL CHECK (last_seq >= first_seq - 1),
    PRIMARY KEY (game_id, command_id)
);

CREATE FUNCTION events_are_immutable() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER events_no_update_delete
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_are_immutable();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();
