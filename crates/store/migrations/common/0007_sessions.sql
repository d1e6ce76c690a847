-- Logon sessions (the accounts module, `modules/auth`). The cookie holds a
-- random token; only its SHA-256 (hex) is kept here, so a copy of the
-- database gives nobody a way in. Times are milliseconds since the epoch.
CREATE TABLE auth_session (
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
CREATE INDEX auth_session_person ON auth_session (person_id);
CREATE INDEX auth_session_expires ON auth_session (expires);
