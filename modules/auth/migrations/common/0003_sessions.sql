-- Logon sessions (`session_table.rs`). The cookie holds a random token; only
-- its SHA-256 (hex) is kept here, so a copy of the database gives nobody a way
-- in. Times are milliseconds since the epoch.
--
-- The core store made this table (its migration 7) until the module took it
-- over: a database made then has it, with its rows, and keeps them.
CREATE TABLE IF NOT EXISTS auth_session (
    id_hash TEXT PRIMARY KEY,
    person_id BIGINT NOT NULL REFERENCES rsc(id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    created BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    persistent BIGINT NOT NULL DEFAULT 0,
    user_agent TEXT,
    address TEXT
);
CREATE INDEX IF NOT EXISTS auth_session_person ON auth_session (person_id);
CREATE INDEX IF NOT EXISTS auth_session_expires ON auth_session (expires);
