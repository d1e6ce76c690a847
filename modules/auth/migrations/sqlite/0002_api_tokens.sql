CREATE TABLE auth_api_token (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rsc_id INTEGER NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created INTEGER NOT NULL,
    last_used INTEGER
);
CREATE INDEX auth_api_token_rsc ON auth_api_token (rsc_id);
