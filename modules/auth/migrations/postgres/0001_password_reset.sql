CREATE TABLE auth_password_reset (
    token_hash TEXT PRIMARY KEY,
    rsc_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    created BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    used BIGINT
);
CREATE INDEX auth_password_reset_rsc ON auth_password_reset (rsc_id);
