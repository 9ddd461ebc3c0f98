-- The SQL fos sends for one idempotent POST /sandbox/v2/simulate/clock/advance with a fresh key, statement for
-- statement (10 of them), as PostgreSQL's statement log shows it (bench/store.ts runs it with pgbench on a database migrated by
-- fos). The values are shaped like fos's own.
\set k random(1, 2000000000)
-- Authentication: the key, then its organization.
SELECT data FROM fos_rows WHERE tbl = 'api_keys' AND key = '7a0f3c1d5e9b2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c';
SELECT data FROM fos_rows WHERE tbl = 'organizations' AND key = 'org_storebench';
-- Idempotency: a plain read of the key's record, then the claim of a new key, one statement.
SELECT data FROM fos_rows WHERE tbl = 'idempotency' AND key = 'org_storebench/sandbox/b-' || :k;
INSERT INTO fos_rows (tbl, key, data) VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k,
  '{"id":"org_storebench/sandbox/b","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"in_progress","leaseUntilMs":1790000060000,"expiresAtMs":1790000060000}'::jsonb)
  ON CONFLICT DO NOTHING RETURNING 1 AS ok;
-- The advance looks for a due timer (outside any transaction).
SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
  WHERE o.tbl = 'timers' AND o.ord = 'due' AND o.part = '' ORDER BY o.sort ASC, o.key ASC LIMIT 1;
-- The kept response and its retention timer: the transaction's first read locks the record and takes its block of
-- sequence numbers; the record and the timer (with its index entries) are the held writes, sent as one statement.
BEGIN;
WITH block AS (SELECT string_agg(n::text, ',' ORDER BY n) AS block
    FROM (SELECT nextval('fos_sequence') AS n FROM generate_series(1, 8)) g),
  found AS (SELECT data FROM fos_rows WHERE tbl = 'idempotency' AND key = 'org_storebench/sandbox/b-' || :k FOR UPDATE)
  SELECT (SELECT data FROM found) AS data, block.block FROM block;
WITH fresh AS (INSERT INTO fos_rows (tbl, key, data) VALUES ('timers', 'tmr_' || :k,
    '{"id":"tmr_00ldpq1s0g7k2m4n6p8r9t1v3x5z7b","kind":"idempotency.expire","scope":"org_storebench/sandbox","dueAtMs":1792592000000,"payload":{"id":"org_storebench/sandbox/b"}}'::jsonb)
    ON CONFLICT DO NOTHING RETURNING 1),
  updated AS (INSERT INTO fos_rows (tbl, key, data) VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k,
    '{"id":"org_storebench/sandbox/b","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"completed","response":{"status":200,"contentType":"application/json","body":"{\"now\":\"2026-11-21T20:40:00.000Z\"}"},"leaseUntilMs":1790000000000,"expiresAtMs":1792592000000}'::jsonb)
    ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data),
  added AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
    SELECT v.tbl, v.ord, v.part, v.sort, v.key FROM (VALUES ('timers', 'due', '', '09799846666665472', 'tmr_' || :k),
      ('timers', 'byScope', 'org_storebench/sandbox', '09799846666665472', 'tmr_' || :k)) AS v (tbl, ord, part, sort, key))
  SELECT count(*) AS n FROM fresh;
COMMIT;
-- After the write, the virtual clock runs what came due at once (nothing, here).
SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
  WHERE o.tbl = 'timers' AND o.ord = 'due' AND o.part = '' ORDER BY o.sort ASC, o.key ASC LIMIT 1;
