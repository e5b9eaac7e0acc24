-- 0009: forks (ForkGame): a match that starts from another match's state at one of its seqs
-- (docs/design/players-ratings-forks-shards.md, "Forks").
--
-- parent_game_id: the match forked from; parent_seq: the parent's seq the fork starts from;
-- parent_head: the parent's chain hash at that seq (the fork's genesis hash covers all three);
-- fork_as: whose knowledge it starts from, 'seat:<n>' or 'auditor'. All NULL for a match that
-- is not a fork. ListGames(parent_game_id) reads a match's forks along the partial index.

ALTER TABLE games
    ADD COLUMN parent_game_id uuid   NULL,
    ADD COLUMN parent_seq     bigint NULL,
    ADD COLUMN parent_head    bytea  NULL,
    ADD COLUMN fork_as        text   NULL,
    ADD CONSTRAINT games_fork_lineage CHECK (
        (parent_game_id IS NULL) = (parent_seq IS NULL)
        AND (parent_game_id IS NULL) = (parent_head IS NULL)
        AND (parent_game_id IS NULL) = (fork_as IS NULL)
        AND (parent_seq IS NULL OR parent_seq >= 1)
        AND (fork_as IS NULL OR fork_as = 'auditor' OR fork_as ~ '^seat:[0-9]+$')
    );

CREATE INDEX games_parent_idx ON games (parent_game_id, created_at, game_id)
    WHERE parent_game_id IS NOT NULL;
