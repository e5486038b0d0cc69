\set ON_ERROR_STOP on
-- Two stores of the same plants, in the service's shape (bigint id, jsonb document): one table,
-- and one hash-partitioned by id into :partitions partitions. :rows plants, with ids spread
-- across 2^52 as bench/ten-million-plants.ts spreads them.
DROP TABLE IF EXISTS plants_plain, plants_hashed;
CREATE TABLE plants_plain (id bigint PRIMARY KEY, document jsonb NOT NULL);
CREATE TABLE plants_hashed (id bigint PRIMARY KEY, document jsonb NOT NULL) PARTITION BY HASH (id);
SELECT format('CREATE TABLE plants_hashed_%s PARTITION OF plants_hashed FOR VALUES WITH (MODULUS %s, REMAINDER %s)', r, :partitions, r)
  FROM generate_series(0, :partitions - 1) AS r \gexec
\timing on
INSERT INTO plants_plain (id, document)
  SELECT (x::bigint * 1073741789) % 4503599627370496 AS id, '{"name":"Fern","tag":"shade"}'::jsonb
  FROM generate_series(1, :rows) AS x ORDER BY id;
INSERT INTO plants_hashed SELECT * FROM plants_plain;
VACUUM ANALYZE plants_plain;
VACUUM ANALYZE plants_hashed;
CHECKPOINT;
\timing off
SELECT pg_size_pretty(pg_total_relation_size('plants_plain')) AS plain_total,
       pg_size_pretty(pg_indexes_size('plants_plain')) AS plain_index;
SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) AS hashed_total,
       pg_size_pretty(sum(pg_indexes_size(inhrelid))) AS hashed_index,
       pg_size_pretty(max(pg_indexes_size(inhrelid))) AS largest_partition_index
  FROM pg_inherits WHERE inhparent = 'plants_hashed'::regclass;
