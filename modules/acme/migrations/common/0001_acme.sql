-- The ACME account, the certificate and its key, kept in the site's
-- database: a restart does not ask again, and every node serves the one
-- certificate one node obtained.
CREATE TABLE acme_state (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated BIGINT NOT NULL
);
-- HTTP-01 answers while an order is open, for whichever node the ACME
-- server asks.
CREATE TABLE acme_challenge (
    token TEXT PRIMARY KEY,
    key_authorization TEXT NOT NULL,
    expires BIGINT NOT NULL
);
-- Who is ordering: one node at a time.
CREATE TABLE acme_lock (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until BIGINT NOT NULL
);
-- Every order placed, for the record.
CREATE TABLE acme_order (
    placed BIGINT NOT NULL,
    node TEXT NOT NULL,
    hosts TEXT NOT NULL
);
