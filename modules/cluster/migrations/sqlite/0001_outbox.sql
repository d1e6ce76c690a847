-- The cluster's outbox (see the PostgreSQL version); a cluster needs
-- PostgreSQL, so on SQLite the table stays empty.
CREATE TABLE cluster_outbox (
    id INTEGER PRIMARY KEY,
    origin TEXT NOT NULL,
    body TEXT NOT NULL,
    created BIGINT NOT NULL
);
CREATE INDEX cluster_outbox_created ON cluster_outbox (created);
