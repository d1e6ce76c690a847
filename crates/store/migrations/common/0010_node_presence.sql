-- The Bulwark servers that use this database, each seen a moment ago: a
-- server that finds another one here without the cluster module refuses to
-- start (their caches would serve each other's stale pages). Not the site's
-- data: a backup neither takes nor replaces it.
CREATE TABLE node_presence (
    node TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    clustered BOOLEAN NOT NULL,
    seen BIGINT NOT NULL
);
