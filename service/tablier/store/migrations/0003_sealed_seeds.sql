-- 0003: seeds sealed at rest, and each match's integrity scheme.
--
-- New matches keep their seed only sealed (AES-256-GCM with a server key that is not in the
-- database, the game id as associated data; see tablier/seeds.py): `seed` is NULL, `sealed_seed`
-- holds nonce || ciphertext and `seed_key_id` names the key. Matches stored before keep their
-- clear seed until `tablier rotate-seed-key` seals it.
--
-- hash_scheme 1: plain state hashes, genesis without a seed commitment (matches stored before);
-- 2: per-match salted state hashes and the seed commitment bound into the genesis hash.

ALTER TABLE games
    ALTER COLUMN seed DROP NOT NULL,
    ADD COLUMN sealed_seed bytea    NULL,
    ADD COLUMN seed_key_id text     NULL,
    ADD COLUMN hash_scheme smallint NOT NULL DEFAULT 1 CHECK (hash_scheme IN (1, 2)),
    ADD CONSTRAINT games_one_seed CHECK ((seed IS NULL) <> (sealed_seed IS NULL)),
    ADD CONSTRAINT games_sealed_with_key CHECK ((sealed_seed IS NULL) = (seed_key_id IS NULL));
