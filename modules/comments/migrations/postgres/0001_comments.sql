-- Comments (docs/comments.md): what visitors and users wrote under a
-- resource, threaded, each with its moderation status.
CREATE TABLE comment (
    id BIGSERIAL PRIMARY KEY,
    rsc_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    -- The comment this one answers (same resource), if any.
    parent_id BIGINT REFERENCES comment (id) ON DELETE SET NULL,
    -- The person of the logged-on user who wrote it, if one did.
    user_id BIGINT REFERENCES rsc (id) ON DELETE SET NULL,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    url TEXT,
    -- Plain text, as typed.
    body TEXT NOT NULL,
    -- pending, approved, spam or deleted.
    status TEXT NOT NULL,
    -- The writer's network (an IPv6 address by its /64), for moderators.
    address TEXT,
    -- Where an import found it ("wordpress:123"): imported twice, kept once.
    source TEXT UNIQUE,
    -- Unix milliseconds.
    created BIGINT NOT NULL,
    changed BIGINT NOT NULL
);
CREATE INDEX comment_rsc ON comment (rsc_id, status, id);
CREATE INDEX comment_status ON comment (status, id);
CREATE INDEX comment_email ON comment (email, status);
