-- Each language a resource is translated into, with its own words (stemmed
-- the language's way), for a search in that language.
CREATE TABLE rsc_translation (
    rsc_id BIGINT NOT NULL REFERENCES rsc (id) ON DELETE CASCADE,
    language TEXT NOT NULL,
    words TSVECTOR NOT NULL,
    PRIMARY KEY (language, rsc_id)
);
CREATE INDEX rsc_translation_rsc ON rsc_translation (rsc_id);
CREATE INDEX rsc_translation_words ON rsc_translation USING GIN (words);
