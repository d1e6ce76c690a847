-- Working copies (`drafts.rs`): what an editor has typed into a resource's
-- editor and not saved yet, one per editor and resource, kept as they type so
-- that a closed tab, a crash or another device loses nothing. Never published,
-- never a revision; gone with the resource or the person.
CREATE TABLE admin_draft (
    rsc_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    person_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    -- The resource's version the editor was typing on.
    version BIGINT NOT NULL,
    -- The editor's fields, as JSON.
    fields TEXT NOT NULL,
    -- When it was kept (Unix milliseconds).
    saved BIGINT NOT NULL,
    PRIMARY KEY (rsc_id, person_id)
);
