-- Each language a resource is translated into, with its own words (stemmed
-- the language's way), for a search in that language. The rowid of
-- rsc_fts_lang is the id of its rsc_translation row.
CREATE TABLE rsc_translation (
    id INTEGER PRIMARY KEY,
    rsc_id INTEGER NOT NULL REFERENCES rsc (id),
    language TEXT NOT NULL,
    UNIQUE (language, rsc_id)
);
CREATE INDEX rsc_translation_rsc ON rsc_translation (rsc_id);
CREATE VIRTUAL TABLE rsc_fts_lang USING fts5 (words, tokenize = 'unicode61 remove_diacritics 0');
