-- User content starts at id 1001 on both backends.
UPDATE sqlite_sequence SET seq = 1000 WHERE name = 'rsc';
INSERT INTO sqlite_sequence (name, seq) SELECT 'rsc', 1000 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'rsc');
