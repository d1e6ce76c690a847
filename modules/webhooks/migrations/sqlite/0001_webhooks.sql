-- Webhooks (docs/webhooks.md): the URLs told of what happens on the site,
-- and every message queued for them.
CREATE TABLE webhook_endpoint (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    -- "whsec_" and the base64 of the key the signatures are made with.
    secret TEXT NOT NULL,
    -- A JSON array of event types; empty: every event.
    events TEXT NOT NULL,
    -- A JSON array of category names (a resource's event is sent when the
    -- resource is in one of them, or below); empty: every category.
    categories TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    active INTEGER NOT NULL DEFAULT 1,
    -- The node delivering this endpoint's messages now, and until when: one
    -- node at a time, in order.
    lease_holder TEXT,
    lease_until INTEGER,
    created INTEGER NOT NULL
);
CREATE TABLE webhook_delivery (
    id INTEGER PRIMARY KEY,
    endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoint (id) ON DELETE CASCADE,
    -- The message's id (the webhook-id header): the same on every attempt.
    message_id TEXT NOT NULL,
    event TEXT NOT NULL,
    -- The JSON body sent.
    payload TEXT NOT NULL,
    -- pending, delivered or failed (given up).
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt INTEGER NOT NULL,
    last_status INTEGER,
    last_error TEXT,
    -- The first characters of the receiver's last answer.
    last_response TEXT,
    last_attempt INTEGER,
    last_millis INTEGER,
    delivered INTEGER,
    created INTEGER NOT NULL
);
CREATE INDEX webhook_delivery_queue ON webhook_delivery (endpoint_id, state, id);
CREATE INDEX webhook_delivery_due ON webhook_delivery (state, next_attempt);
-- Whether each resource was published when last seen, so a change can be
-- told as "published" or "unpublished".
CREATE TABLE webhook_published (
    rsc_id INTEGER PRIMARY KEY NOT NULL,
    published INTEGER NOT NULL
);
