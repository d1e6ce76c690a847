-- The next moment a resource's publication window opens or closes is asked
-- for after every change (the publication timer, `Store::spawn_publication_task`):
-- both ends indexed, so that is one index probe each.
CREATE INDEX rsc_publication_start ON rsc (publication_start) WHERE publication_start IS NOT NULL;
CREATE INDEX rsc_publication_end ON rsc (publication_end) WHERE publication_end IS NOT NULL;
