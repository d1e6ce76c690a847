-- A file admitted against the quota whose resource is being made: its row
-- has a negative rsc_id and the time it was admitted (seconds since 1970),
-- so a node that died before making the resource does not hold the room.
ALTER TABLE media_file ADD COLUMN reserved_at BIGINT;
