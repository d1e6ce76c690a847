-- Tombstones: what is left of a deleted resource, so its old URL can answer
-- "410 Gone" instead of "404 Not Found". Ids are never reused (AUTOINCREMENT /
-- identity), so a tombstone never shadows a live resource with the same id.
CREATE TABLE rsc_deleted (
    id BIGINT PRIMARY KEY,
    name TEXT,
    category TEXT NOT NULL,
    -- Whether anonymous visitors could see it just before it was deleted: a
    -- resource they never saw stays a plain 404 for them.
    was_public BOOLEAN NOT NULL,
    deleted BIGINT NOT NULL
);
CREATE INDEX rsc_deleted_name ON rsc_deleted (name);
