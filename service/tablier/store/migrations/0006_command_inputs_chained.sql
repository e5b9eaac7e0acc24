-- 0006: integrity scheme 3: the chain hash of each event a command wrote also covers the digest
-- of what the command asked (its `commands` row: seat, action or host command, command id;
-- tablier/integrity.py `command_digest`), so a changed stored input breaks the chain without
-- deciding the match again. Matches stored before keep the scheme they were written with.

ALTER TABLE games
    DROP CONSTRAINT games_hash_scheme_check,
    ADD CONSTRAINT games_hash_scheme_check CHECK (hash_scheme IN (1, 2, 3));
