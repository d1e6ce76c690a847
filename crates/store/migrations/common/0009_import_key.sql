-- Where an imported resource came from: the key another site's export gave
-- it ("<site uid>:<id>"), so that importing the same data again finds it
-- instead of making it twice. Goes with its resource.
CREATE TABLE import_key (
    key TEXT PRIMARY KEY,
    rsc_id BIGINT NOT NULL REFERENCES rsc(id) ON DELETE CASCADE
);
CREATE INDEX import_key_rsc ON import_key (rsc_id);
