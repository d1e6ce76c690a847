-- Which node makes a scheduled backup: the first to claim its slot (the
-- number of the period since the epoch). On one node, the one node.
CREATE TABLE backup_claim (
    slot BIGINT PRIMARY KEY,
    node TEXT NOT NULL,
    claimed BIGINT NOT NULL
);
