-- Resources: real columns only for keys, querying and constraints; every other
-- property lives in the `props` JSON document.
CREATE TABLE rsc (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT UNIQUE,
    category_id INTEGER NOT NULL REFERENCES category(id) DEFERRABLE INITIALLY DEFERRED,
    is_published INTEGER NOT NULL DEFAULT 0,
    publication_start INTEGER,
    publication_end INTEGER,
    visibility TEXT NOT NULL DEFAULT 'public',
    content_group_id INTEGER REFERENCES rsc(id),
    creator_id INTEGER REFERENCES rsc(id) ON DELETE SET NULL,
    modifier_id INTEGER REFERENCES rsc(id) ON DELETE SET NULL,
    created INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    props TEXT NOT NULL
);
CREATE INDEX rsc_category ON rsc (category_id);
CREATE INDEX rsc_modified ON rsc (modified);
CREATE INDEX rsc_created ON rsc (created);

-- The category tree as a nested set: "is an article" is a range check.
CREATE TABLE category (
    id INTEGER PRIMARY KEY REFERENCES rsc(id) ON DELETE CASCADE,
    parent_id INTEGER REFERENCES category(id),
    seq INTEGER NOT NULL DEFAULT 0,
    nr_left INTEGER NOT NULL DEFAULT 0,
    nr_right INTEGER NOT NULL DEFAULT 0,
    depth INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX category_nr ON category (nr_left, nr_right);

CREATE TABLE predicate_category (
    predicate_id INTEGER NOT NULL REFERENCES rsc(id) ON DELETE CASCADE,
    category_id INTEGER NOT NULL REFERENCES category(id) ON DELETE CASCADE,
    is_subject INTEGER NOT NULL,
    PRIMARY KEY (predicate_id, category_id, is_subject)
);

CREATE TABLE edge (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    subject_id INTEGER NOT NULL REFERENCES rsc(id) ON DELETE CASCADE,
    predicate_id INTEGER NOT NULL REFERENCES rsc(id) ON DELETE CASCADE,
    object_id INTEGER NOT NULL REFERENCES rsc(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    creator_id INTEGER REFERENCES rsc(id) ON DELETE SET NULL,
    created INTEGER NOT NULL,
    UNIQUE (subject_id, predicate_id, object_id)
);
CREATE INDEX edge_subject_seq ON edge (subject_id, predicate_id, seq);
CREATE INDEX edge_object ON edge (object_id, predicate_id);

CREATE TABLE identity (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rsc_id INTEGER NOT NULL REFERENCES rsc(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    secret TEXT,
    created INTEGER NOT NULL,
    UNIQUE (kind, key)
);
CREATE INDEX identity_rsc ON identity (rsc_id);

-- No foreign key: revisions outlive a deleted resource, so it can be looked up.
CREATE TABLE revision (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rsc_id INTEGER NOT NULL,
    version INTEGER NOT NULL,
    snapshot TEXT NOT NULL,
    modifier_id INTEGER,
    created INTEGER NOT NULL
);
CREATE INDEX revision_rsc ON revision (rsc_id, version);

CREATE TABLE pivot_queue (
    rsc_id INTEGER PRIMARY KEY REFERENCES rsc(id) ON DELETE CASCADE,
    queued INTEGER NOT NULL
);

CREATE TABLE rsc_pivot (
    rsc_id INTEGER PRIMARY KEY REFERENCES rsc(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    title_sort TEXT NOT NULL,
    date_start INTEGER,
    date_end INTEGER,
    language TEXT,
    indexed INTEGER NOT NULL
);
CREATE INDEX rsc_pivot_title ON rsc_pivot (title_sort);
CREATE INDEX rsc_pivot_date_start ON rsc_pivot (date_start);

-- Words are normalised in Rust (the same on both backends), so the tokenizer
-- only splits on spaces and never folds diacritics.
CREATE VIRTUAL TABLE rsc_fts USING fts5 (words, tokenize = 'unicode61 remove_diacritics 0');

CREATE TABLE config (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    modified INTEGER NOT NULL
);
