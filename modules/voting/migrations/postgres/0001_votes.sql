-- One row per vote: the voter's details and their three projects. The e-mail
-- address (lowercased) is unique: one vote per address, whichever node took it.
CREATE TABLE voting_vote (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    postcode TEXT NOT NULL,
    pick1 BIGINT NOT NULL,
    pick2 BIGINT NOT NULL,
    pick3 BIGINT NOT NULL,
    created BIGINT NOT NULL
);
-- The key that signs ballots and confirmation links: one row, made by the
-- first node that opens the database, shared by all.
CREATE TABLE voting_secret (
    id INTEGER PRIMARY KEY,
    secret TEXT NOT NULL
);
