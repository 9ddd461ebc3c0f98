-- The SQL fos sends for one idempotent POST /sandbox/v2/simulate/clock/advance with a fresh key on the virtual
-- clock, statement for statement (5 of them, on 4 round trips: fos sends the first two at once), as PostgreSQL's
-- statement log shows it (bench/store.ts runs it with pgbench on a database migrated by fos). The
-- values are shaped like fos's own. What a careful hand-written implementation would send: authentication's reads
-- as one statement, the shared bucket's take, the key's claim that answers a replay, the advance's look, and the
-- kept response with its check that the claim is still this request's, as one statement. (A space after a colon
-- followed by a word keeps pgbench from reading it as one of its variables.)
\set k random(1, 9000000000000000)
-- Authentication: the key with its organization and its sandbox's clock, one statement ...
SELECT r.data, json_build_array(
    (SELECT l.data FROM fos_rows l WHERE l.tbl = 'organizations' AND l.key = (r.data ->> 'organizationId') || '' AND json_typeof(r.data -> 'organizationId') = 'string'),
    (SELECT l.data FROM fos_rows l WHERE l.tbl = 'clocks' AND l.key = (r.data ->> 'organizationId') || '/sandbox' AND json_typeof(r.data -> 'organizationId') = 'string')) AS linked
  FROM fos_rows r WHERE r.tbl = 'api_keys' AND r.key = '7a0f3c1d5e9b2a4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c';
-- ... while the organization's shared bucket gives its token (fos sends both at once).
SELECT o_taken, o_tokens FROM fos_take_tokens('org_storebench', 'sandbox/general', 1000000000, 1000000000, 1, 1790000000000);
-- Idempotency: the claim of a new key with its index entry, which answers the key's record when there is one.
WITH inserted AS (INSERT INTO fos_rows (tbl, key, data) VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k::text,
    '{"id":"org_storebench/sandbox/b","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"in_progress","claim":"105493590761647c.0","expiresAtMs":1790000060000}'::json)
    ON CONFLICT DO NOTHING RETURNING key),
  added AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
    SELECT v.tbl, v.ord, v.part, v.sort, v.key FROM (VALUES ('idempotency', 'byScope', 'org_storebench/sandbox',
      'org_storebench/sandbox/b-' || :k::text, 'org_storebench/sandbox/b-' || :k::text)) AS v (tbl, ord, part, sort, key)
    WHERE (SELECT count(*) FROM inserted) = 1)
  SELECT EXISTS (SELECT 1 FROM inserted) AS inserted,
    (SELECT data FROM fos_rows WHERE tbl = 'idempotency' AND key = 'org_storebench/sandbox/b-' || :k::text) AS holder;
-- The advance looks for a due timer of its scope (outside any transaction).
SELECT r.data FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
  WHERE o.tbl = 'timers' AND o.ord = 'byScope' AND o.part = 'org_storebench/sandbox' ORDER BY o.sort ASC, o.key ASC LIMIT 1;
-- The kept response and its retention timer (three index entries), in one statement that is its transaction: it
-- locks the claim, checks it is still as this request wrote it, and writes only then.
WITH locked AS MATERIALIZED (SELECT r.key FROM fos_rows r
    JOIN (VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k::text,
      '{"id":"org_storebench/sandbox/b","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"in_progress","claim":"105493590761647c.0","expiresAtMs":1790000060000}')) AS v (tbl, key, text)
      ON r.tbl = v.tbl AND r.key = v.key
    WHERE r.data::text = v.text ORDER BY r.tbl, r.key FOR UPDATE OF r),
  fresh AS (INSERT INTO fos_rows (tbl, key, data)
    SELECT v.tbl, v.key, v.data::json FROM (VALUES ('timers', 'tmr_' || :k::text,
      '{"id":"tmr_00ldpq1s0g7k2m4n6p8r9t1v3x5z7b","kind":"idempotency.expire","scope":"org_storebench/sandbox","dueAtMs":1792592000000,"payload":{"id":"org_storebench/sandbox/b"},"scheduledAtMs":1790000000000,"housekeeping": true}')) AS v (tbl, key, data)
    WHERE (SELECT count(*) FROM locked) = 1 RETURNING 1),
  updated AS (INSERT INTO fos_rows (tbl, key, data)
    SELECT v.tbl, v.key, v.data::json FROM (VALUES ('idempotency', 'org_storebench/sandbox/b-' || :k::text,
      '{"id":"org_storebench/sandbox/b","fingerprint":"0e1d2c3b4a5968778695a4b3c2d1e0f00e1d2c3b4a5968778695a4b3c2d1e0f0","state":"completed","response":{"status":200,"contentType":"application/json","body":"{\"now\":\"2026-11-21T20:40:00.000Z\",\"mode\":\"virtual\",\"from\":\"2026-11-21T20:40:00.000Z\",\"timersFired\":{\"total\":0,\"by\":{}},\"eventsEmitted\":{\"total\":0,\"by\":{}},\"nextDueAt\":\"2026-12-21T20:40:00.000Z\"}"},"expiresAtMs":1792592000000}')) AS v (tbl, key, data)
    WHERE (SELECT count(*) FROM locked) = 1
    ON CONFLICT (tbl, key) DO UPDATE SET data = EXCLUDED.data),
  added AS (INSERT INTO fos_orders (tbl, ord, part, sort, key)
    SELECT v.tbl, v.ord, v.part, v.sort, v.key FROM (VALUES ('timers', 'due', '', '09799846666665472', 'tmr_' || :k::text),
      ('timers', 'byScope', 'org_storebench/sandbox', '09799846666665472', 'tmr_' || :k::text),
      ('timers', 'byClock', 'virtual', '09799846666665472', 'tmr_' || :k::text)) AS v (tbl, ord, part, sort, key)
    WHERE (SELECT count(*) FROM locked) = 1)
  SELECT (SELECT count(*) FROM locked) = 1 AS ok;
