-- Which stored file (by content hash) each media resource uses, so that the
-- file goes when the last resource that uses it is deleted.
CREATE TABLE media_file (
    rsc_id BIGINT PRIMARY KEY,
    sha256 TEXT NOT NULL
);
CREATE INDEX media_file_sha256 ON media_file (sha256);
