-- Second factors (`second_factor_table.rs`): a person's TOTP secret, the one
-- handed out at enrolment and not confirmed yet, and single-use recovery
-- codes (kept as their SHA-256). They go with the person.
--
-- `key` is empty for the two secrets (one of each per person) and the code's
-- hash for a recovery code. A confirmed secret is stored as
-- `<last accepted step>:<base32 secret>`, so accepting a step is one
-- compare-and-swap.
CREATE TABLE auth_second_factor (
    person_id INTEGER NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('totp', 'totp_pending', 'recovery_code')),
    key TEXT NOT NULL,
    secret TEXT,
    created INTEGER NOT NULL,
    PRIMARY KEY (person_id, kind, key)
);

-- The core store kept them as identity rows of these kinds before.
INSERT INTO auth_second_factor (person_id, kind, key, secret, created)
    SELECT rsc_id, kind, CASE WHEN kind = 'recovery_code' THEN key ELSE '' END, secret, created
    FROM identity WHERE kind IN ('totp', 'totp_pending', 'recovery_code');
DELETE FROM identity WHERE kind IN ('totp', 'totp_pending', 'recovery_code');
