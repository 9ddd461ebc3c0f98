-- The SQL fos sends for one idempotent POST /sandbox/v2/simulate/clock/advance with a fresh key on the virtual
-- clock, statement for statement (12 of them), as PostgreSQL's statement log showed it on 2026-11-28 (bench/store.ts
-- runs it with pgbench on a database migrated by fos). The values are shaped like fos's own.
\set k random(1, 2000000000)
-- Authentication: the key, then its organization.
SELECT data FROM fos_rows WHERE tbl = 'api_keys' AND key = '7a0f3c1d5e9b2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c';
SELECT data FROM fos_rows WHERE tbl = 'organizations' AND key = 'org_storebench';
-- The request runs on its sandbox's clock, read once it knows its caller.
SELECT data FROM fos_rows WHERE tbl = 'clocks' AND key = 'org_storebench/sandbox';
-- Idempotency: a plain read of the key's record, then the claim of a new key with its index entry, one statement.
SELECT data FROM fos_rows WHERE tbl = 'idempotency' AND key = 'org_storebench/sandbox/b-' || :k;
WITH inserted AS (INSERT INTO fos_rows (tbl, key, data) VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k,
    '{"id":"org_storebench/sandbox/b","claim":"105493590761647c.0","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"in_progress","leaseUntilMs":1790000060000,"expiresAtMs":1790000060000}'::json)
    ON CONFLICT DO NOTHING RETURNING key),
  added AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
    SELECT v.tbl, v.ord, v.part, v.sort, v.key FROM (VALUES ('idempotency', 'byScope', 'org_storebench/sandbox',
      'org_storebench/sandbox/b-' || :k, 'org_storebench/sandbox/b-' || :k)) AS v (tbl, ord, part, sort, key)
    WHERE (SELECT count(*) FROM inserted) = 1)
  SELECT (SELECT json_agg(key) FROM inserted) AS keys, NULL AS taken;
-- The advance reads its clock, and looks for a due timer of its scope (outside any transaction).
SELECT data FROM fos_rows WHERE tbl = 'clocks' AND key = 'org_storebench/sandbox';
SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
  WHERE o.tbl = 'timers' AND o.ord = 'byScope' AND o.part = 'org_storebench/sandbox' ORDER BY o.sort ASC, o.key ASC LIMIT 1;
-- The kept response and its retention timer: the transaction's first read locks the record and takes its block of
-- sequence numbers; the record and the timer (with its three index entries) are the held writes, sent as one
-- statement.
BEGIN;
WITH found AS MATERIALIZED (SELECT data FROM fos_rows WHERE tbl = 'idempotency' AND key = 'org_storebench/sandbox/b-' || :k FOR UPDATE)
  SELECT (SELECT data FROM found) AS data, (SELECT string_agg(n::text, ',' ORDER BY n) FROM (SELECT nextval('fos_sequence') AS n
    FROM generate_series(1, 8) CROSS JOIN (SELECT count(*) FROM found) AS locked) AS g) AS block;
WITH fresh AS (INSERT INTO fos_rows (tbl, key, data) VALUES ('timers', 'tmr_' || :k,
    '{"id":"tmr_00ldpq1s0g7k2m4n6p8r9t1v3x5z7b","kind":"idempotency.expire","scope":"org_storebench/sandbox","dueAtMs":1792592000000,"payload":{"id":"org_storebench/sandbox/b"},"scheduledAtMs":1790000000000,"housekeeping":true}'::json)
    ON CONFLICT DO NOTHING RETURNING 1),
  updated AS (INSERT INTO fos_rows (tbl, key, data) VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k,
    '{"id":"org_storebench/sandbox/b","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"completed","response":{"status":200,"contentType":"application/json","body":"{\"now\":\"2026-11-21T20:40:00.000Z\",\"mode\":\"virtual\",\"from\":\"2026-11-21T20:40:00.000Z\",\"timersFired\":{\"total\":0,\"by\":{}},\"eventsEmitted\":{\"total\":0,\"by\":{}},\"nextDueAt\":\"2026-12-21T20:40:00.000Z\"}"},"leaseUntilMs":1790000000000,"expiresAtMs":1792592000000}'::json)
    ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data),
  added AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
    SELECT v.tbl, v.ord, v.part, v.sort, v.key FROM (VALUES ('timers', 'due', '', '09799846666665472', 'tmr_' || :k),
      ('timers', 'byScope', 'org_storebench/sandbox', '09799846666665472', 'tmr_' || :k),
      ('timers', 'byClock', 'virtual', '09799846666665472', 'tmr_' || :k)) AS v (tbl, ord, part, sort, key) WHERE true)
  SELECT count(*) AS n FROM fresh;
COMMIT;
-- After the write, the virtual clock runs what came due at once in the scope (nothing, here: its first timer is not due).
SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
  WHERE o.tbl = 'timers' AND o.ord = 'byScope' AND o.part = 'org_storebench/sandbox' ORDER BY o.sort ASC, o.key ASC LIMIT 1;
