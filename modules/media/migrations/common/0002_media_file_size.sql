-- Each file's size, for the site's quota (the sum over distinct files).
ALTER TABLE media_file ADD COLUMN size BIGINT NOT NULL DEFAULT 0;
