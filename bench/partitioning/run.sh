#!/usr/bin/env bash
# What hash partitioning of plants by id gives on one PostgreSQL server (docs/scaling.md):
# builds a plain table and a hash-partitioned one holding the same plants, then loads each with
# pgbench, alternating, round after round. The statements have the service's shapes: a batch of
# 32 creates with random ids in one transaction (ON CONFLICT DO NOTHING), a read of one stored
# plant by id, and a keyset page of 100 after a random id.
# Usage: bench/partitioning/run.sh [rows] [partitions] [seconds] [rounds], with PGHOST, PGPORT,
# PGUSER and PGDATABASE naming a database to use (its two tables are dropped and made again).
set -euo pipefail
rows=${1:-10000000}
partitions=${2:-16}
seconds=${3:-15}
rounds=${4:-3}
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for table in plants_plain plants_hashed; do
  cat > "$work/insert-$table.sql" <<SQL
INSERT INTO $table (id, document)
  SELECT (random() * 4503599627370495)::bigint, '{"name":"Fern"}'::jsonb FROM generate_series(1, 32)
  ON CONFLICT (id) DO NOTHING;
SQL
  cat > "$work/get-$table.sql" <<SQL
\set x random(1, $rows)
SELECT document FROM $table WHERE id = (:x::bigint * 1073741789) % 4503599627370496;
SQL
  cat > "$work/page-$table.sql" <<SQL
\set after random(1, 4503599627370495)
SELECT id, document FROM $table WHERE id > :after ORDER BY id LIMIT 101;
SQL
done

psql -q -v partitions="$partitions" -v rows="$rows" -f "$here/setup.sql"
for round in $(seq 1 "$rounds"); do
  for table in plants_plain plants_hashed; do
    for operation in insert get page; do
      clients=8
      [ "$operation" = insert ] && clients=4
      tps=$(pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$work/$operation-$table.sql" 2>/dev/null | awk '/^tps/ { print $3 }')
      echo "round $round: $table $operation: $tps transactions a second ($clients clients)"
    done
  done
done
