-- The cluster's outbox: one row per committed change, written in the change's
-- own transaction (so a rolled-back write leaves none), and one per push
-- publication too large for a notification. Notifications carry the row
-- inline when it fits, else only its id. Rows are kept a few minutes.
CREATE TABLE cluster_outbox (
    id BIGSERIAL PRIMARY KEY,
    origin TEXT NOT NULL,
    body TEXT NOT NULL,
    created BIGINT NOT NULL
);
CREATE INDEX cluster_outbox_created ON cluster_outbox (created);
