-- The migrations modules bring (Store::migrate_module): versions count per
-- module, so two modules may both have a version 1.
CREATE TABLE module_migration (
    module TEXT NOT NULL,
    version BIGINT NOT NULL,
    name TEXT NOT NULL,
    applied BIGINT NOT NULL,
    PRIMARY KEY (module, version)
);
