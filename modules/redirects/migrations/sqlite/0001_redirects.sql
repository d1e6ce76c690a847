-- Redirects (docs/redirects.md): a path that is not served any more, and what
-- it answers instead of a 404. Looked up only for paths that found nothing.
CREATE TABLE redirect (
    id INTEGER PRIMARY KEY,
    -- The old path, as asked for (starting with /; a query string too when
    -- only that one moved).
    from_path TEXT NOT NULL UNIQUE,
    -- Where it went: a path of this site or an http(s) URL ...
    to_path TEXT,
    -- ... or a resource (its page).
    to_rsc INTEGER REFERENCES rsc (id) ON DELETE SET NULL,
    -- 301, 302, 307, 308 or 410.
    status INTEGER NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    -- Unix milliseconds.
    last_hit INTEGER,
    created INTEGER NOT NULL
);
