CREATE TABLE auth_api_token (
    id BIGSERIAL PRIMARY KEY,
    rsc_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created BIGINT NOT NULL,
    last_used BIGINT
);
CREATE INDEX auth_api_token_rsc ON auth_api_token (rsc_id);
