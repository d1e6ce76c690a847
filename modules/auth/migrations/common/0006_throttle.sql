-- Logon attempts and password reset requests, counted per key (`throttle.rs`:
-- `logon:addr:...`, `logon:user:...`, `reset:person:...`) in the current
-- window, which began at `since` (milliseconds since the epoch). In the
-- database so that every node counts the same.
CREATE TABLE auth_throttle (
    key TEXT PRIMARY KEY,
    since BIGINT NOT NULL,
    attempts BIGINT NOT NULL
);
CREATE INDEX auth_throttle_since ON auth_throttle (since);
