-- User content starts at id 1001 on both backends.
SELECT setval(pg_get_serial_sequence('rsc', 'id'), 1000);
