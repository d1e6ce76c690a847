-- The files' bytes, in parts of 1 MiB, where they are kept in the database
-- too ([media] files_in_database): every node of a site can read them.
CREATE TABLE media_blob (
    sha256 TEXT NOT NULL,
    part BIGINT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (sha256, part)
);
