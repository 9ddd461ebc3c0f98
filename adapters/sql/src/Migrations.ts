/**
 * Versioned, forward-only migrations. They run when a store opens, under a transaction-scoped advisory lock, so
 * two processes starting at once apply each migration once. A database migrated by a newer fos (a version this
 * code does not know) is refused with a clear message instead of being used.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/** A stored row's scope (`scopeOf`): its organization and environment. */
const scopeSql = `(data->>'organizationId') || '/' || (data->>'environment')`

/**
 * Statements that index the stored rows of `tbl` in a newly declared order `ord` (text sort values only) and count
 * its partitions, as the store does for rows written after the declaration. `where` picks the rows in the order.
 */
const indexStatements = (tbl: string, ord: string, part: string, sort: string, where = "true"): ReadonlyArray<string> => [
  `INSERT INTO fos_orders (tbl, ord, part, sort, key)
     SELECT tbl, '${ord}', ${part}, ${sort}, key FROM fos_rows WHERE tbl = '${tbl}' AND (${where})
     ON CONFLICT DO NOTHING`,
  `INSERT INTO fos_counts (tbl, ord, part, n)
     SELECT tbl, ord, part, count(*) FROM fos_orders WHERE tbl = '${tbl}' AND ord = '${ord}' GROUP BY tbl, ord, part
     ON CONFLICT (tbl, ord, part) DO UPDATE SET n = EXCLUDED.n`
]

/**
 * The data member naming each event type's resource (packages/core Outbox.ts, `eventResourceMembers`), as it was when
 * migration 8 indexed the events stored before it. Frozen here: a migration does what it did the day it was written.
 */
const eventResourceMembersAtMigration8: Readonly<Record<string, string>> = {
  application: "applicationId",
  claim: "claimId",
  crypto_wallet: "claimId",
  customer: "customerId",
  idv_link: "applicationId",
  order: "orderId",
  organization: "organizationId",
  rfi: "rfiId",
  transaction: "transactionId",
  virtual_account: "virtualAccountId",
  wallet: "walletId",
  wallet_ceremony: "ceremonyId",
  wallet_signer: "walletSignerId"
}

/** An outbox row's resource id (packages/core Outbox.ts, `eventResourceId`), or '' when it names none. */
const eventResourceSql = `coalesce(CASE split_part(r.data->>'type', '.', 1) ${
  Object.entries(eventResourceMembersAtMigration8).map(([resource, member]) => `WHEN '${resource}' THEN r.data->'data'->>'${member}'`).join(" ")
} END, '')`

/** The entries of the sandbox events stored before `ord` existed, partitioned by `part` after the scope. */
const sandboxEventOrder = (ord: string, part: string): string =>
  `INSERT INTO fos_orders (tbl, ord, part, sort, key)
     SELECT o.tbl, '${ord}', (r.data->>'organizationId') || '/' || (r.data->>'environment') || '|' || ${part}, o.sort, o.key
     FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
     WHERE o.tbl = 'outbox' AND o.ord = 'bySequence' AND r.data->>'environment' = 'sandbox'
     ON CONFLICT DO NOTHING`

/**
 * The payload member naming each timer kind's resource, for the kinds the engine had before a timer carried its
 * resource's id (packages/core Timers.ts, `Timer.resourceId`: each kind's descriptor names its member now). Frozen
 * here: migration 10 indexes the timers stored before it, and a migration does what it did the day it was written.
 */
const timerResourceMembersBeforeIds: Readonly<Record<string, string | undefined>> = {
  "idempotency.expire": undefined,
  "application.review": "applicationId",
  "application.cancel": "applicationId",
  "application.late_compliance": "applicationId",
  "virtual_account.activate": "virtualAccountId",
  "deposit.confirm": "transactionId",
  "deposit.settle": "transactionId",
  "deposit.sender_information_expiry": "transactionId",
  "payout.start": "transactionId",
  "payout.review_end": "transactionId",
  "payout.send": "transactionId",
  "payout.settle": "transactionId",
  "payout.late_references": "transactionId",
  "payout.scripted_return": "transactionId",
  "order.payout_settle": "transactionId",
  "order.lock_expiry": "orderId",
  "order.start": "orderId",
  "order.settle": "orderId",
  "order.signed": "orderId",
  "order.deposit_return": "transactionId",
  "quote.expiry": "optionId",
  "rfi.deadline": "rfiId",
  "signing.window_expiry": "transactionId",
  "signing.queue_timeout": "transactionId",
  "signing.return_broadcast": "transactionId",
  "signing.return_confirmed": "transactionId",
  "signing.claim_provisioning": "claimId",
  "signing.ceremony_expiry": "ceremonyId",
  "webhook.attempt": "deliveryId",
  "webhook.fanout": "eventId"
}

/**
 * A timer row's resource id (packages/core Timers.ts, `resourceIdOf`): the payload member its kind names, or for a kind
 * the table does not know the first `…Id` string member; '' when none. (jsonb keeps an object's keys by length, not in
 * the order they were written: a host's kind with several `…Id` members may be indexed under another of them.)
 */
const timerResourceSql = `coalesce(CASE r.data->>'kind' ${
  Object.entries(timerResourceMembersBeforeIds).map(([kind, member]) => `WHEN '${kind}' THEN ${member === undefined ? "NULL" : `r.data->'payload'->>'${member}'`}`).join(" ")
} ELSE (SELECT p.value #>> '{}' FROM jsonb_each(CASE jsonb_typeof(r.data::jsonb->'payload') WHEN 'object' THEN r.data::jsonb->'payload' ELSE '{}'::jsonb END) WITH ORDINALITY AS p(key, value, n)
        WHERE p.key LIKE '%Id' AND jsonb_typeof(p.value) = 'string' ORDER BY p.n LIMIT 1) END, '')`

/**
 * The views a team queries (migration 20, docs/storage.md "Reading the data with SQL"): one per resource in the `fos`
 * schema, over `fos_rows`, with ids, statuses, amounts (numeric) and times (timestamptz) as typed columns. `columns`
 * are SQL expressions over the row's JSON `d`, each with its name; `where` picks the table's rows.
 */
const resourceView = (view: string, tbl: string, columns: ReadonlyArray<readonly [string, string]>, where = "true"): string =>
  `CREATE VIEW fos.${view} AS SELECT ${columns.map(([name, expression]) => `${expression} AS ${name}`).join(", ")}
     FROM (SELECT key, data AS d FROM fos_rows WHERE tbl = '${tbl}') AS r WHERE ${where}`

const text = (member: string) => `r.d->>'${member}'`
const at = (member: string) => `(r.d->>'${member}')::timestamptz`
const owned: ReadonlyArray<readonly [string, string]> = [["id", "r.key"], ["organization_id", text("organizationId")], ["environment", text("environment")]]
const stamped: ReadonlyArray<readonly [string, string]> = [["created_at", at("createdAt")], ["updated_at", at("updatedAt")]]
/** An amount kept in an asset's smallest units (orders, ledger), as a decimal of the asset: `fos.asset_units` has each precision. */
const inUnits = (units: string, asset: string) =>
  `(SELECT round((${units})::numeric / 10::numeric ^ a.decimals, a.decimals) FROM fos.asset_units a WHERE a.code = ${asset})`
/** A transaction's columns, for `fos.transactions` and the views of its types (payouts, deposits). */
const transactionColumns: ReadonlyArray<readonly [string, string]> = [
  ...owned,
  ["customer_id", text("customerId")],
  ["type", text("type")],
  ["status", text("status")],
  ["stage", text("stage")],
  ["source_type", "r.d->'source'->>'type'"],
  ["source_asset", "r.d->'source'->'assetAmount'->>'code'"],
  ["source_amount", "(r.d->'source'->'assetAmount'->>'amount')::numeric"],
  ["destination_type", "r.d->'destination'->>'type'"],
  ["destination_asset", "r.d->'destination'->'assetAmount'->>'code'"],
  ["destination_amount", "(r.d->'destination'->'assetAmount'->>'amount')::numeric"],
  ["chain", "coalesce(r.d->'destination'->'assetAmount'->>'chain', r.d->'source'->'assetAmount'->>'chain')"],
  ["client_reference_id", text("clientReferenceId")],
  ["linked_order_id", text("linkedOrderId")],
  ["failure_code", text("failureCode")],
  ...stamped
]

/**
 * Migration 21's statements over one table of rows, `fos_rows` or `fos_copy_rows` (a snapshot's copies hold the same
 * rows, and a restore puts them back as they are); `same` ties two rows of one copy. It converts the rows only
 * earlier builds wrote to what this code reads:
 * - a minimal autoPayout withdrawal's `order.payout_settle` timer becomes its payout's `payout.start`, and the
 *   withdrawal gets the route a payout is sent and settled by (its destination's chain; an offramp's rail, from its
 *   order's autoPayout), so it goes on as any payout;
 * - a `webhook.fanout` timer goes: a fan-out runs in its event's transaction now, and nothing fires that kind;
 * - a clock's advance written before advances kept their target is finished where its clock stands, as the code
 *   that read it did, and a lease's own time limit goes: a lease holds while its process's row says it lives
 *   (Liveness.ts), and a process with no row is dead;
 * - an Idempotency-Key's in-progress claim that names no process is a request that never answered: `failed`, which
 *   the same body takes over as it took the claim over; no record keeps a lease of its own.
 */
const legacyRowStatements = (rows: "fos_rows" | "fos_copy_rows"): ReadonlyArray<string> => {
  const same = (a: string, b: string) => (rows === "fos_copy_rows" ? `${a}.copy = ${b}.copy` : "true")
  // Each row's JSON is changed as text, the rest of it kept as written: a restore compares a row with its copy by text.
  const edited = (pattern: string, replacement: string) => `regexp_replace(data::text, '${pattern}', ${replacement})::json`
  return [
    `UPDATE ${rows} t SET data = regexp_replace(t.data::text, '\\}\\s*$', ',"route":' || r.route || '}')::json
       FROM (SELECT w.tbl, w.key, ${rows === "fos_copy_rows" ? "w.copy" : "NULL::text AS copy"},
               CASE WHEN w.data->'destination'->>'type' = 'external_crypto'
                 THEN '{"chain":' || to_json(w.data->'destination'->'assetAmount'->>'chain')::text || '}'
                 ELSE (SELECT '{"rail":' || to_json(o.data->'autoPayout'->>'rail')::text || '}' FROM ${rows} o
                         WHERE o.tbl = 'orders' AND o.key = w.data->>'linkedOrderId' AND ${same("o", "w")}) END AS route
             FROM ${rows} w JOIN ${rows} timer ON timer.tbl = 'timers' AND timer.data->>'kind' = 'order.payout_settle'
               AND timer.data->'payload'->>'transactionId' = w.key AND ${same("timer", "w")}
             WHERE w.tbl = 'transactions' AND w.data->'route' IS NULL) r
       WHERE t.tbl = r.tbl AND t.key = r.key AND ${rows === "fos_copy_rows" ? "t.copy = r.copy" : "true"} AND r.route IS NOT NULL`,
    `UPDATE ${rows} SET data = ${edited(`"kind"\\s*:\\s*"order\\.payout_settle"`, `'"kind":"payout.start"'`)}
       WHERE tbl = 'timers' AND data->>'kind' = 'order.payout_settle'`,
    ...(rows === "fos_rows"
      ? [
        `DELETE FROM fos_orders WHERE tbl = 'timers' AND key IN (SELECT key FROM fos_rows WHERE tbl = 'timers' AND data->>'kind' = 'webhook.fanout')`,
        `DELETE FROM fos_uniques WHERE tbl = 'timers' AND key IN (SELECT key FROM fos_rows WHERE tbl = 'timers' AND data->>'kind' = 'webhook.fanout')`
      ]
      : []),
    `DELETE FROM ${rows} WHERE tbl = 'timers' AND data->>'kind' = 'webhook.fanout'`,
    ...(rows === "fos_copy_rows" ? [`UPDATE fos_copies c SET rows = (SELECT count(*) FROM fos_copy_rows r WHERE r.copy = c.copy)`] : []),
    `UPDATE ${rows} SET data = ${
      edited(
        `"advancing"\\s*:\\s*\\{[^{}]*\\}`,
        `'"advancing":{"owner":' || to_json(data->'advancing'->>'owner')::text || ',"fromMs":' || (data->>'nowMs') || ',"targetMs":' || (data->>'nowMs')
          || ',"firstSequence":${Number.MAX_SAFE_INTEGER},"timersFired":{}}'`
      )
    }
       WHERE tbl = 'clocks' AND data->'advancing' IS NOT NULL AND data->'advancing'->'targetMs' IS NULL`,
    `UPDATE ${rows} SET data = ${edited(`,\\s*"leaseUntilMs"\\s*:\\s*[0-9]+`, `''`)}
       WHERE tbl = 'clocks' AND data->'advancing'->'leaseUntilMs' IS NOT NULL`,
    `UPDATE ${rows} SET data = ${edited(`"state"\\s*:\\s*"in_progress"`, `'"state":"failed"'`)}
       WHERE tbl = 'idempotency' AND data->>'state' = 'in_progress' AND data->'claim' IS NULL`,
    `UPDATE ${rows} SET data = ${edited(`,\\s*"leaseUntilMs"\\s*:\\s*[0-9]+`, `''`)} WHERE tbl = 'idempotency' AND data->'leaseUntilMs' IS NOT NULL`
  ]
}

export const migrations: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "generic tables for rows, unique keys, keyset orders and counts",
    statements: [
      `CREATE TABLE fos_rows (
         tbl text COLLATE "C" NOT NULL,
         key text COLLATE "C" NOT NULL,
         data jsonb NOT NULL,
         PRIMARY KEY (tbl, key))`,
      `CREATE TABLE fos_uniques (
         tbl text COLLATE "C" NOT NULL,
         name text COLLATE "C" NOT NULL,
         value text COLLATE "C" NOT NULL,
         key text COLLATE "C" NOT NULL,
         PRIMARY KEY (tbl, name, value))`,
      `CREATE INDEX fos_uniques_by_key ON fos_uniques (tbl, key)`,
      `CREATE TABLE fos_orders (
         tbl text COLLATE "C" NOT NULL,
         ord text COLLATE "C" NOT NULL,
         part text COLLATE "C" NOT NULL,
         sort text COLLATE "C" NOT NULL,
         key text COLLATE "C" NOT NULL,
         PRIMARY KEY (tbl, ord, part, sort, key))`,
      `CREATE TABLE fos_counts (
         tbl text COLLATE "C" NOT NULL,
         ord text COLLATE "C" NOT NULL,
         part text COLLATE "C" NOT NULL,
         n bigint NOT NULL,
         PRIMARY KEY (tbl, ord, part))`
    ]
  },
  {
    version: 2,
    name: "the store-wide sequence that orders the outbox",
    statements: [`CREATE SEQUENCE fos_sequence AS bigint`]
  },
  {
    // Rows written before these orders existed get their index entries, so a sandbox reset finds them too. Only
    // what the rows carry can be indexed: a timer written before timers had a scope stays out of every scope, and
    // its handler finds nothing when it fires after a reset.
    version: 3,
    name: "the scope orders a sandbox reset removes by (outbox, idempotency, reserved customers, timers)",
    statements: [
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT o.tbl, 'byScope', (r.data->>'organizationId') || '/' || (r.data->>'environment'), o.sort, o.key
         FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
         WHERE o.tbl = 'outbox' AND o.ord = 'bySequence'
         ON CONFLICT DO NOTHING`,
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'byScope', split_part(key, '/', 1) || '/' || split_part(key, '/', 2), key, key
         FROM fos_rows WHERE tbl = 'idempotency'
         ON CONFLICT DO NOTHING`,
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'byScope', data->>'scope', key, key FROM fos_rows WHERE tbl = 'reserved_customers'
         ON CONFLICT DO NOTHING`,
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'byScope', '', sort, key FROM fos_orders WHERE tbl = 'timers' AND ord = 'due'
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // Applications gained an order by customer and type (a wallet is created for a customer whose crypto_wallet
    // application was approved): entries for the applications stored before it.
    version: 4,
    name: "applications by customer and type",
    statements: [
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'byCustomer',
           (data->>'organizationId') || '/' || (data->>'environment') || '/' || coalesce(data->>'customerId', '') || '/' || (data->>'type'),
           data->>'createdAt', key
         FROM fos_rows WHERE tbl = 'applications'
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // The index entries the store would have written for rows already stored, had these orders been declared then;
    // each expression is the order's partition and sort in packages/core (webhooks/Deliveries.ts and Endpoints.ts,
    // Applications.ts), and adapters/sql/test/Migrations.test.ts checks that the two agree.
    version: 5,
    name: "orders for every delivery filter combination, live webhook endpoints and applications by type and update",
    statements: [
      ...indexStatements("webhook_endpoints", "live", scopeSql, "data->>'createdAt'", "data->>'deletedAt' IS NULL"),
      ...[
        ["byEndpointStatus", ["endpointId", "status"]],
        ["byEndpointEventType", ["endpointId", "eventType"]],
        ["byStatusEventType", ["status", "eventType"]],
        ["byEndpointStatusEventType", ["endpointId", "status", "eventType"]]
      ].flatMap(([order, fields]) =>
        indexStatements(
          "webhook_deliveries",
          order as string,
          [scopeSql, ...(fields as Array<string>).map((f) => `(data->>'${f}')`)].join(" || '/' || "),
          "data->>'createdAt'"
        )
      ),
      ...indexStatements("applications", "byTypeUpdatedAt", `${scopeSql} || '/' || (data->>'type')`, "data->>'updatedAt'")
    ]
  },
  {
    // Every transaction of an organization adds to the same few counts (by status, by type), and a count row is
    // locked from the write to the commit, so the organization's writers queued on them. From here on writes add
    // to one of 32 rows per count, chosen by connection; fos_counts keeps what migrations computed (SqlStore.ts).
    version: 6,
    name: "counts spread over shards, so writers of one organization do not queue on one count row",
    statements: [
      `CREATE TABLE fos_count_shards (
         tbl text COLLATE "C" NOT NULL,
         ord text COLLATE "C" NOT NULL,
         part text COLLATE "C" NOT NULL,
         shard smallint NOT NULL,
         n bigint NOT NULL,
         PRIMARY KEY (tbl, ord, part, shard))`
    ]
  },
  {
    // A transfer's signing was kept on its transaction's row (`signing`); it is a row of its own now, keyed by the
    // transaction's id (packages/core signing/TransferSigning.ts, `TransferSignings`), and the transaction keeps only
    // what its own path reads of it: `signed` (its roster's quorum was met, as it was before any recovery the receive
    // policy asked for) and `heldByReceivePolicy` (a recovery was opened). adapters/sql/test/Migrations.test.ts
    // checks the moved rows read as the engine writes them.
    version: 7,
    name: "transfer signings in a table of their own, off their transactions",
    statements: [
      `INSERT INTO fos_rows (tbl, key, data)
         SELECT 'transfer_signings', key, (data::jsonb->'signing') || jsonb_build_object(
           'transactionId', key,
           'organizationId', data->'organizationId',
           'environment', data->'environment',
           'customerId', data->'customerId')
         FROM fos_rows WHERE tbl = 'transactions' AND data->'signing' IS NOT NULL
         ON CONFLICT DO NOTHING`,
      // Its one order (not counted): by scope, for a sandbox reset.
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'byScope', ${scopeSql}, key, key FROM fos_rows WHERE tbl = 'transfer_signings'
         ON CONFLICT DO NOTHING`,
      `UPDATE fos_rows SET data = (data::jsonb - 'signing')
         || CASE WHEN data->'signing'->'state'->>'phase' = 'quorum_met' OR data->'signing'->'recovery' IS NOT NULL
              THEN '{"signed": true}'::jsonb ELSE '{}'::jsonb END
         || CASE WHEN data->'signing'->'recovery' IS NOT NULL THEN '{"heldByReceivePolicy": true}'::jsonb ELSE '{}'::jsonb END
         WHERE tbl = 'transactions' AND data->'signing' IS NOT NULL`
    ]
  },
  {
    // The sandbox's event log is filtered by resource and type (packages/core inspect/EventLog.ts): the outbox's
    // sandbox events stored before these orders existed get their entries, so the log shows them too. They keep no
    // count (a list's total counts the entries).
    version: 8,
    name: "the sandbox event log's orders over the outbox, by resource and by type",
    statements: [
      sandboxEventOrder("sandboxByResource", `'resourceId=' || ${eventResourceSql}`),
      sandboxEventOrder("sandboxByType", `'type=' || (r.data->>'type')`),
      sandboxEventOrder("sandboxByResourceType", `'resourceId=' || ${eventResourceSql} || '|type=' || (r.data->>'type')`)
    ]
  },
  {
    // Under the virtual clock the live timers fire on real time and the rest on their sandboxes' clocks (packages/core
    // kernel/Timers.ts, the `byClock` order; docs/clock.md): the timers stored before get their entries, copied from
    // their `due` entries (same sort value). The clocks themselves are rows of a declared table and need no DDL.
    version: 9,
    name: "timers by the kind of clock they run on",
    statements: [
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT o.tbl, 'byClock', CASE WHEN r.data->>'scope' LIKE '%/live' THEN 'real' ELSE 'virtual' END, o.sort, o.key
         FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
         WHERE o.tbl = 'timers' AND o.ord = 'due'
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // A sandbox resource's timeline (packages/core inspect/Timeline.ts) reads its pending timers by resource (the
    // `sandboxByResource` order of Timers.ts): the sandbox timers stored before get their entries, copied from their
    // `due` entries (same sort value). The history the timeline reads is a declared table and needs no DDL; it starts
    // empty, so a resource changed before this version shows only what changed after it.
    version: 10,
    name: "a sandbox's timers by the resource they belong to",
    statements: [
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT o.tbl, 'sandboxByResource', (r.data->>'scope') || '|' || ${timerResourceSql}, o.sort, o.key
         FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
         WHERE o.tbl = 'timers' AND o.ord = 'due' AND r.data->>'scope' LIKE '%/sandbox' AND ${timerResourceSql} <> ''
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // Removing rows (a sandbox reset, a snapshot restore: SqlStore.ts `removePartition`) deletes their entries in
    // every order of their table by (tbl, key), which the primary key does not lead with: without this index each
    // removal read the table's every entry, every organization's (a restore of 12,290 rows on PGlite spent 10 of its
    // 12 s removing them).
    version: 11,
    name: "index entries by row",
    statements: [`CREATE INDEX fos_orders_by_key ON fos_orders (tbl, key)`]
  },
  {
    // jsonb keeps an object's keys ordered by length, so an event's payload came back from PGlite and PostgreSQL with
    // its keys in another order than it was written in, and a webhook body or an event log answer differed from the
    // memory store's bytes for the same seed. `json` keeps the text as written. The rows stored before keep the order
    // jsonb gave them. (The migrations above cast `data` to jsonb where they use its functions, so they read either.)
    version: 12,
    name: "rows kept as written (json, not jsonb)",
    statements: [`ALTER TABLE fos_rows ALTER COLUMN data TYPE json USING data::json`]
  },
  {
    // The pending timers' list leaves the engine's housekeeping out (packages/core kernel/Timers.ts, the `worldByScope`
    // order; inspect/PendingTimers.ts). A timer says it is housekeeping when it is scheduled; the ones stored before
    // are marked by their kind, `idempotency.expire` (the only housekeeping kind when this was written), and the rest
    // get their entries, copied from their `byScope` entries (same partition and sort value).
    version: 13,
    name: "timers of the world, their housekeeping left out",
    statements: [
      `UPDATE fos_rows SET data = (data::jsonb || '{"housekeeping": true}'::jsonb)::json
         WHERE tbl = 'timers' AND data->>'kind' = 'idempotency.expire' AND data->>'housekeeping' IS NULL`,
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT o.tbl, 'worldByScope', o.part, o.sort, o.key
         FROM fos_orders o JOIN fos_rows r ON r.tbl = o.tbl AND r.key = o.key
         WHERE o.tbl = 'timers' AND o.ord = 'byScope' AND r.data->>'housekeeping' IS NULL
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // What the processes sharing a PostgreSQL database keep for the service (SharedState.ts in packages/core;
    // SharedState.ts here): a row per rate-limit bucket, taken from by `fos_take_tokens` in one statement under the
    // row's lock, with the time every process's clock advances count as passed; and the recent requests of every
    // organization's environments. PGlite, which serves one process, has the tables and does not use them. The
    // buckets and the requests are UNLOGGED: written without the write-ahead log, as a process's memory was, they
    // are emptied by a crash of the database (full buckets, no recent requests), as a restart of one process empties
    // its own.
    version: 14,
    name: "rate-limit buckets and recent requests for the service",
    statements: [
      `CREATE UNLOGGED TABLE fos_rate_buckets (
         scope text NOT NULL,
         name text NOT NULL,
         tokens double precision NOT NULL,
         at_ms double precision NOT NULL,
         per_second double precision NOT NULL,
         burst double precision NOT NULL,
         PRIMARY KEY (scope, name)
       )`,
      `CREATE TABLE fos_rate_time (id integer PRIMARY KEY, advanced_ms double precision NOT NULL)`,
      `INSERT INTO fos_rate_time (id, advanced_ms) VALUES (1, 0)`,
      `CREATE FUNCTION fos_take_tokens(p_scope text, p_name text, p_rate double precision, p_burst double precision, p_want integer, p_real_now double precision)
         RETURNS TABLE (o_taken integer, o_tokens double precision) LANGUAGE plpgsql AS $fn$
       DECLARE
         v_now double precision := p_real_now + coalesce((SELECT t.advanced_ms FROM fos_rate_time t WHERE t.id = 1), 0);
         v_tokens double precision;
         v_at double precision;
         v_taken integer;
       BEGIN
         SELECT b.tokens, b.at_ms INTO v_tokens, v_at FROM fos_rate_buckets b WHERE b.scope = p_scope AND b.name = p_name FOR UPDATE;
         IF NOT FOUND THEN
           INSERT INTO fos_rate_buckets (scope, name, tokens, at_ms, per_second, burst) VALUES (p_scope, p_name, p_burst, v_now, p_rate, p_burst)
             ON CONFLICT DO NOTHING;
           SELECT b.tokens, b.at_ms INTO v_tokens, v_at FROM fos_rate_buckets b WHERE b.scope = p_scope AND b.name = p_name FOR UPDATE;
         END IF;
         v_tokens := least(p_burst, v_tokens + greatest(0, v_now - v_at) * p_rate / 1000);
         v_taken := least(p_want, floor(v_tokens))::integer;
         v_tokens := v_tokens - v_taken;
         UPDATE fos_rate_buckets b SET tokens = v_tokens, at_ms = greatest(v_at, v_now), per_second = p_rate, burst = p_burst
           WHERE b.scope = p_scope AND b.name = p_name;
         RETURN QUERY SELECT v_taken, v_tokens;
       END
       $fn$`,
      `CREATE UNLOGGED TABLE fos_requests (
         organization_id text NOT NULL,
         environment text NOT NULL,
         answered_ms double precision NOT NULL,
         answered_by text NOT NULL,
         n bigint NOT NULL,
         entry text NOT NULL,
         PRIMARY KEY (organization_id, environment, answered_ms, answered_by, n)
       )`
    ]
  },
  {
    // Snapshots are copies (packages/core Store.ts `Copies`, SqlStore.ts): a sandbox's rows are copied by the
    // database, each with its index entries and unique values (as JSON arrays beside the row: indexed rows of their
    // own cost a copy three times the writes), and put back the same way. `fos_copies` holds each copy's schema
    // version, since its entries are the index as it was then (a later migration that indexes stored rows anew has
    // its copies' entries made again at their next restore), and how many rows it holds. The snapshots saved before,
    // one `snapshot_rows` row per saved row, are turned into copies at their first restore (packages/core Snapshots.ts).
    //
    // A reset and a snapshot find a sandbox's rows by their index entries, never by reading them: the wallets that
    // fund an order's deposit get an order of their own (`funding`, packages/core Wallets.ts), the stored ones their
    // entries here. It keeps no count.
    version: 15,
    name: "copies of rows for snapshots, and the funding wallets' order",
    statements: [
      `CREATE TABLE fos_copies (
         copy text COLLATE "C" PRIMARY KEY,
         version integer NOT NULL,
         rows bigint NOT NULL)`,
      `CREATE TABLE fos_copy_rows (
         copy text COLLATE "C" NOT NULL,
         tbl text COLLATE "C" NOT NULL,
         key text COLLATE "C" NOT NULL,
         data json NOT NULL,
         entries json NOT NULL,
         uniques json NOT NULL,
         PRIMARY KEY (copy, tbl, key))`,
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'funding', ${scopeSql}, data->>'createdAt', key FROM fos_rows
         WHERE tbl = 'wallets' AND data->>'fundingOrderId' IS NOT NULL
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // A PGlite directory is served by the memory store with the database as its image (ImageStore.ts): it keeps the
    // rows, the copies and the sequence, and leaves the index tables empty. No statement: the version is what makes a
    // fos older than this refuse such a directory (DatabaseTooNew) instead of answering from empty indexes. On
    // PostgreSQL it changes nothing.
    version: 16,
    name: "PGlite directories keep rows without index entries",
    statements: []
  },
  {
    // A timer that came due in an engine with no handler for its kind is kept, out of the lanes that fire (packages/core
    // kernel/Timers.ts, `Timer.unhandled`): a sandbox's timers now fire from the `firing` order, which leaves such a
    // timer out, while `byScope` keeps every timer for a reset, a snapshot and the full list. The timers stored before
    // get their `firing` entries, copied from their `byScope` ones (same partition and sort); none is kept yet, so
    // the `unhandled` order starts empty.
    version: 17,
    name: "the timers a sweep fires, apart from those kept for want of a handler",
    statements: [
      `INSERT INTO fos_orders (tbl, ord, part, sort, key)
         SELECT tbl, 'firing', part, sort, key FROM fos_orders
         WHERE tbl = 'timers' AND ord = 'byScope'
         ON CONFLICT DO NOTHING`
    ]
  },
  {
    // A wallet's deposit address is unique within its organization's environment, no longer across the store
    // (packages/core money/Wallets.ts, the `address` key), since a fork keeps its world's addresses (docs/snapshots.md,
    // "Forks"). The wallets stored before get their scope in front of their value, as the store writes it now. A copy
    // saved before this version keeps the old values beside its rows, and has them made again at its next restore
    // (its version in fos_copies is older). PGlite keeps no unique values (ImageStore.ts): the statement finds none.
    version: 18,
    name: "wallet addresses unique per organization and environment",
    statements: [
      `UPDATE fos_uniques u SET value = (r.data->>'organizationId') || '/' || (r.data->>'environment') || '/' || u.value
         FROM fos_rows r
         WHERE u.tbl = 'wallets' AND u.name = 'address' AND r.tbl = u.tbl AND r.key = u.key`
    ]
  },
  {
    // A PGlite directory keeps each transaction as a record of a log, folded into the tables from time to time
    // (ImageStore.ts): a fos older than this would read the tables without the log, so the version makes it refuse
    // such a directory. On PostgreSQL the table stays empty.
    version: 19,
    name: "PGlite directories keep a log of transactions",
    statements: [
      `CREATE TABLE fos_log (
         n bigint PRIMARY KEY,
         record text NOT NULL)`,
      `ALTER TABLE fos_log ALTER record SET STORAGE EXTERNAL`
    ]
  },
  {
    // A team reads its data with SQL: a view per resource in the `fos` schema, with typed columns, so that psql
    // answers "which payouts are pending" without knowing the four generic tables (docs/storage.md, "Reading the data
    // with SQL"). Views hold no rows: they cost nothing until read. The assets' precisions are frozen here, as the
    // contract had them (packages/contract kernel/Money.ts), for the amounts kept in smallest units.
    version: 20,
    name: "a view per resource in the fos schema",
    statements: [
      `CREATE SCHEMA fos`,
      `CREATE VIEW fos.asset_units (code, decimals) AS VALUES ${
        Object.entries({
          USD: 2, EUR: 2, GBP: 2, CHF: 2, JPY: 0, CAD: 2, AUD: 2, NZD: 2, SGD: 2, HKD: 2, CNY: 2, KRW: 0, INR: 2,
          BRL: 2, MXN: 2, ARS: 2, CLP: 0, COP: 2, PEN: 2, ZAR: 2, NGN: 2, KES: 2, GHS: 2, EGP: 2, AED: 2, SAR: 2,
          ILS: 2, TRY: 2, PLN: 2, CZK: 2, HUF: 2, SEK: 2, NOK: 2, DKK: 2, THB: 2, IDR: 2, MYR: 2, PHP: 2, VND: 0,
          TWD: 2, USDC: 6, USDT: 6, DAI: 18, EURC: 6, PYUSD: 6, BTC: 8, ETH: 18, SOL: 9, TRX: 6
        }).map(([code, decimals]) => `('${code}', ${decimals})`).join(", ")
      }`,
      resourceView("organizations", "organizations", [["id", "r.key"], ["name", text("name")], ["status", text("status")], ["created_at", at("createdAt")]]),
      resourceView("users", "users", [["id", "r.key"], ["organization_id", text("organizationId")], ["email", text("email")], ["role", text("role")], ["created_at", at("createdAt")]]),
      // No hash: a key's id is its hash, which is not the team's to read; its last four characters name it.
      resourceView("api_keys", "api_keys", [
        ["organization_id", text("organizationId")], ["environment", text("environment")], ["access", text("access")], ["last4", text("last4")],
        ["created_by", text("createdBy")], ["created_at", at("createdAt")]
      ]),
      resourceView("customers", "customers", [
        ...owned, ["type", text("type")], ["status", text("status")], ["name", text("name")], ["country", text("country")],
        ["client_reference_id", text("clientReferenceId")], ["application_id", text("applicationId")], ...stamped
      ]),
      resourceView("applications", "applications", [
        ...owned, ["type", text("type")], ["status", text("status")], ["customer_id", text("customerId")], ["country", text("country")],
        ["client_reference_id", text("clientReferenceId")], ["failure_code", text("failureCode")], ...stamped
      ]),
      resourceView("documents", "documents", [
        ...owned, ["type", text("type")], ["file_name", text("fileName")], ["content_type", text("contentType")], ["size", "(r.d->>'size')::bigint"],
        ["sha256", text("sha256")], ["created_at", at("createdAt")]
      ]),
      resourceView("wallets", "wallets", [
        ...owned, ["customer_id", text("customerId")], ["chain", text("chain")], ["status", text("status")], ["address", text("address")],
        ["custody", text("custody")], ["replaced_by_wallet_id", text("replacedByWalletId")], ...stamped
      ]),
      resourceView("virtual_accounts", "virtual_accounts", [
        ...owned, ["customer_id", text("customerId")], ["currency", "r.d->'asset'->>'code'"], ["status", text("status")], ...stamped,
        ["activated_at", at("activatedAt")]
      ]),
      resourceView("transactions", "transactions", transactionColumns),
      resourceView("deposits", "transactions", transactionColumns, `${text("type")} = 'deposit'`),
      resourceView("payouts", "transactions", [
        ...transactionColumns, ["rail", text("payoutRail")], ["purpose", text("payoutPurpose")], ["recipient_id", text("payoutRecipientId")]
      ], `${text("type")} = 'withdrawal'`),
      resourceView("orders", "orders", [
        ...owned, ["customer_id", text("customerId")], ["direction", text("direction")], ["status", text("status")],
        ["source_type", "r.d->'source'->>'type'"], ["source_asset", "r.d->'source'->'side'->>'asset'"],
        ["destination_type", "r.d->'destination'->>'type'"], ["destination_asset", "r.d->'destination'->'side'->>'asset'"],
        ["destination_chain", "r.d->'destination'->'side'->>'chain'"], ["lock_side", text("lockSide")], ["rate", "(r.d->>'rate')::numeric"],
        ["principal", inUnits(text("principal"), "r.d->'source'->'side'->>'asset'")],
        ["total_debit", inUnits(text("totalDebit"), "r.d->'source'->'side'->>'asset'")],
        ["destination_amount", inUnits(text("destinationAmount"), "r.d->'destination'->'side'->>'asset'")],
        ["transaction_id", text("transactionId")], ["lock_expires_at", "to_timestamp((r.d->>'lockExpiresAtMs')::numeric / 1000)"], ...stamped
      ]),
      resourceView("quotes", "quote_options", [
        ["id", "r.key"], ["organization_id", "split_part(r.d->>'scope', '/', 1)"], ["environment", "split_part(r.d->>'scope', '/', 2)"],
        ["source_asset", "r.d->'input'->'source'->>'asset'"], ["destination_asset", "r.d->'input'->'destination'->>'asset'"],
        ["amount", "(r.d->'input'->>'amount')::numeric"], ["lock_side", "r.d->'input'->>'lockSide'"],
        ["expires_at", "to_timestamp((r.d->>'expiresAtMs')::numeric / 1000)"], ["expired", "coalesce((r.d->>'expired')::boolean, false)"],
        ["created_at", at("createdAt")]
      ]),
      resourceView("whitelist_recipients", "recipients", [
        ...owned, ["customer_id", text("customerId")], ["rail", text("rail")], ["name", text("name")],
        ["removed", "coalesce((r.d->>'removed')::boolean, false)"], ["created_at", at("createdAt")]
      ], `${text("kind")} = 'whitelist_recipient'`),
      resourceView("rfis", "rfis", [
        ...owned, ["customer_id", text("customerId")], ["transaction_id", text("transactionId")], ["status", text("status")],
        ["deadline", at("deadline")], ...stamped
      ]),
      resourceView("wallet_signers", "wallet_signers", [
        ...owned, ["customer_id", text("customerId")], ["claim_id", text("claimId")], ["status", text("status")],
        ["invitation_expires_at", at("invitationExpiresAt")], ...stamped
      ]),
      resourceView("signing_requests", "signing_requests", [
        ...owned, ["customer_id", text("customerId")], ["transaction_id", text("transactionId")], ["wallet_id", text("walletId")],
        ["attempt", "(r.d->>'attempt')::integer"], ["signing_mode", text("signingMode")], ["expires_at", at("expiresAt")], ["created_at", at("createdAt")]
      ]),
      // No secret: the endpoint's signing secret is not for a query's output.
      resourceView("webhook_endpoints", "webhook_endpoints", [...owned, ["url", text("url")], ["status", text("status")], ...stamped]),
      resourceView("webhook_deliveries", "webhook_deliveries", [
        ...owned, ["endpoint_id", text("endpointId")], ["event_id", text("eventId")], ["event_type", text("eventType")], ["status", text("status")],
        ["run", "(r.d->>'run')::integer"], ["attempts_in_run", "(r.d->>'attemptsInRun')::integer"], ["next_attempt_at", at("nextAttemptAt")],
        ["last_attempt_at", at("lastAttemptAt")], ...stamped
      ]),
      resourceView("webhook_attempts", "webhook_attempts", [
        ["id", "r.key"], ["delivery_id", text("deliveryId")], ["run", "(r.d->>'run')::integer"], ["number", "(r.d->>'number')::integer"],
        ["started_at", at("startedAt")], ["response_status", "(r.d->>'responseStatus')::integer"], ["latency_ms", "(r.d->>'latencyMs')::integer"],
        ["error", text("error")]
      ]),
      resourceView("events", "outbox", [
        ...owned, ["sequence", "(r.d->>'sequence')::bigint"], ["type", text("type")], ["created_at", at("createdAt")], ["data", "r.d->'data'"]
      ]),
      resourceView("ledger_transfers", "ledger_transfers", [
        ["id", "r.key"], ["organization_id", "split_part(r.d->>'scope', '/', 1)"], ["environment", "split_part(r.d->>'scope', '/', 2)"],
        ["transaction_id", text("transactionId")], ["code", text("code")], ["kind", text("kind")], ["debit_account_id", text("debitAccountId")],
        ["credit_account_id", text("creditAccountId")], ["asset", text("asset")], ["chain", text("chain")],
        ["amount", inUnits(text("amount"), text("asset"))], ["created_at", "to_timestamp((r.d->>'createdAt')::numeric / 1000)"]
      ])
    ]
  },
  {
    // The rows only earlier builds wrote, as this code reads them (`legacyRowStatements`), in the tables and in the
    // copies. A PGlite directory's log is folded into its tables before (Stores.ts), so these statements see every row.
    version: 21,
    name: "rows earlier builds wrote, as this fos reads them",
    statements: [...legacyRowStatements("fos_rows"), ...legacyRowStatements("fos_copy_rows")]
  },
  {
    // An attempt looks a receiver fault up only when its endpoint carries the mark (packages/core simulate/Faults.ts):
    // the endpoints with a receiver fault armed before get it, in the tables and in the copies, so their faults apply.
    version: 22,
    name: "receiver faults marked on their endpoints",
    statements: (["fos_rows", "fos_copy_rows"] as const).map((rows) =>
      `UPDATE ${rows} e SET data = regexp_replace(e.data::text, '\\}\\s*$', ',"receiverFault":true}')::json
         FROM ${rows} f WHERE e.tbl = 'webhook_endpoints' AND f.tbl = 'simulated_faults' AND f.data->>'target' = 'receiver'
           AND f.data->>'webhookEndpointId' = e.key AND ${rows === "fos_copy_rows" ? "f.copy = e.copy" : "true"} AND e.data->'receiverFault' IS NULL`
    )
  },
  {
    // A copy keeps its rows' index entries as three arrays beside each row (order, partition, sort value: the i-th
    // of each make one entry), no longer as a JSON array of triples: a restore puts them back with unnest(), where
    // the JSON was parsed again for every entry and every member read of it, most of a restore's own work after a
    // reset (SqlStore.ts, `restoreCopy`). The copies saved before are older than this version, so their entries are
    // made again from their rows at their next restore, as after any migration; they need none here.
    version: 23,
    name: "copies keep their rows' index entries as arrays",
    statements: [
      `ALTER TABLE fos_copy_rows
         ADD COLUMN ords text[] COLLATE "C" NOT NULL DEFAULT '{}',
         ADD COLUMN parts text[] COLLATE "C" NOT NULL DEFAULT '{}',
         ADD COLUMN sorts text[] COLLATE "C" NOT NULL DEFAULT '{}',
         DROP COLUMN entries`
    ]
  },
  {
    // A write finds the rows it locks or removes by joining the table to the list it carries (SqlStore.ts). The
    // planner takes a list for 100 rows, so on any table short of tens of thousands of rows (every test's database)
    // it read the whole table and hashed it, at every write: 1.5 ms for 8,600 index entries, most of a 3-day
    // advance's time on PostgreSQL. These read the same lists, declared as 1 row (ROWS; VOLATILE, so that the
    // planner does not inline them and lose it), and the join probes the key's index once per item.
    version: 24,
    name: "lists a write carries, counted as small so that its join probes the index",
    statements: [
      ["fos_keys_of", "tbl text, key text"],
      ["fos_texts_of", "tbl text, key text, text text"],
      ["fos_entries_of", "tbl text, ord text, part text, sort text, key text"]
    ].map(([name, columns]) =>
      `CREATE FUNCTION ${name}(list json) RETURNS TABLE (${columns}) LANGUAGE sql VOLATILE ROWS 1
         AS $$ SELECT * FROM json_to_recordset(list) AS v (${columns}) $$`
    )
  }
]

export const latestVersion = migrations[migrations.length - 1]!.version

/** The database was migrated by a newer fos. */
export class DatabaseTooNew extends Error {
  override readonly name = "DatabaseTooNew"
  readonly databaseVersion: number
  constructor(databaseVersion: number) {
    super(
      `the database is at schema version ${databaseVersion}, newer than this fos knows (${latestVersion}); ` +
        `upgrade fos, or point it at another database`
    )
    this.databaseVersion = databaseVersion
  }
}

/** A lock id all fos processes share for migrations ("fos!" in ASCII). */
const migrationLock = 0x666f7321

export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${migrationLock})`
    yield* sql`CREATE TABLE IF NOT EXISTS fos_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`
    const rows = yield* sql<{ version: number | null }>`SELECT max(version) AS version FROM fos_migrations`
    const current = Number(rows[0]?.version ?? 0)
    if (current > latestVersion) return yield* Effect.die(new DatabaseTooNew(current))
    for (const migration of migrations) {
      if (migration.version <= current) continue
      for (const statement of migration.statements) yield* sql.unsafe(statement)
      yield* sql`INSERT INTO fos_migrations (version, name) VALUES (${migration.version}, ${migration.name})`
    }
  }))
})
