CREATE TABLE auth_password_reset (
    token_hash TEXT PRIMARY KEY,
    rsc_id INTEGER NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    created INTEGER NOT NULL,
    expires INTEGER NOT NULL,
    used INTEGER
);
CREATE INDEX auth_password_reset_rsc ON auth_password_reset (rsc_id);
