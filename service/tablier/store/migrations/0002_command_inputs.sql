-- 0002: what each command asked, so that an auditor can decide it again from the match's seed
-- and compare the events (every random outcome, not only the opening deal).
--
-- A seat's move keeps its seat and its action (protobuf bytes); a host command keeps its name
-- and no seat. Commands stored before this migration have neither and cannot be re-decided.

ALTER TABLE commands
    ADD COLUMN seat         integer NULL CHECK (seat >= 0),
    ADD COLUMN action       bytea   NULL,
    ADD COLUMN host_command text    NULL,
    ADD CONSTRAINT commands_one_input CHECK (action IS NULL OR host_command IS NULL);
