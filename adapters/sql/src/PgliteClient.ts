/**
 * An Effect `SqlClient` over PGlite's own API, in the process: what the migrations and the SQL store's tests run
 * their statements through on a PGlite directory. Nothing listens on a port, so no other process can reach the
 * database (docs/embedding.md, "What the engine leaves on the machine").
 *
 * PGlite is one session, so the client is one connection shared through a semaphore (effect's
 * `makeSqliteAcquirers`, made for the same shape): a statement borrows it for itself, a transaction or a `reserve`
 * holds it to the end of its scope, and nobody else's statement lands inside another's transaction. The statements
 * compile as for PostgreSQL (`@effect/sql-pg`'s compiler); PGlite parses their rows by their types, as the SQL store
 * expects of PostgreSQL (an `int8` a number when it fits, else a `bigint`; `json` parsed). Its errors carry
 * PostgreSQL's SQLSTATE, mapped to the `SqlError` reasons `@effect/sql-pg` gives; a closed PGlite is a lost
 * connection.
 */
import type { PGlite, Results } from "@electric-sql/pglite"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, type SqlConnection, SqlError } from "effect/sql"

type Transform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

const sqlStateOf = (cause: unknown): string | undefined => {
  const code = (cause as { code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

/** The `SqlError` reason of a PGlite failure, by its SQLSTATE as `@effect/sql-pg` classifies PostgreSQL's. */
const reasonOf = (cause: unknown, operation: string) => {
  const message = `PGlite: ${(cause as Error | null)?.message ?? String(cause)}`
  const props = { cause, message, operation }
  const code = sqlStateOf(cause)
  if (code === undefined) {
    return /PGlite is closed/.test(message) ? new SqlError.ConnectionError(props) : new SqlError.UnknownError(props)
  }
  if (code.startsWith("08")) return new SqlError.ConnectionError(props)
  if (code.startsWith("28")) return new SqlError.AuthenticationError(props)
  if (code === "42501") return new SqlError.AuthorizationError(props)
  if (code.startsWith("42")) return new SqlError.SqlSyntaxError(props)
  if (code === "23505") {
    const constraint = (cause as { constraint?: unknown }).constraint
    return new SqlError.UniqueViolation({ ...props, constraint: typeof constraint === "string" && constraint !== "" ? constraint : "unknown" })
  }
  if (code.startsWith("23")) return new SqlError.ConstraintError(props)
  if (code === "40P01") return new SqlError.DeadlockError(props)
  if (code === "40001") return new SqlError.SerializationError(props)
  if (code === "55P03") return new SqlError.LockTimeoutError(props)
  if (code === "57014") return new SqlError.StatementTimeoutError(props)
  return new SqlError.UnknownError(props)
}

const run = <A>(operation: string, query: () => Promise<A>): Effect.Effect<A, SqlError.SqlError> =>
  Effect.tryPromise({ try: query, catch: (cause) => new SqlError.SqlError({ reason: reasonOf(cause, operation) }) })

/** PGlite's one session as a connection. Its raw result is PGlite's `Results`, `command` included (as `COMMIT`'s). */
const connectionOf = (db: PGlite): SqlConnection.Connection => {
  const rows = (operation: string, text: string, params: ReadonlyArray<unknown>, transform: Transform) =>
    Effect.map(run(operation, () => db.query<object>(text, [...params])), (result) => (transform === undefined ? result.rows : transform(result.rows)))
  const values = (operation: string, text: string, params: ReadonlyArray<unknown>) =>
    Effect.map(
      run(operation, () => db.query<ReadonlyArray<unknown>>(text, [...params], { rowMode: "array" })),
      (result) => result.rows
    )
  return {
    execute: (text, params, transform) => rows("execute", text, params, transform),
    executeUnprepared: (text, params, transform) => rows("executeUnprepared", text, params, transform),
    executeRaw: (text, params) => run("executeRaw", () => db.query(text, [...params])),
    executeValues: (text, params) => values("executeValues", text, params),
    executeValuesUnprepared: (text, params) => values("executeValuesUnprepared", text, params),
    executeStream: (text, params, transform) => Stream.fromArrayEffect(rows("executeStream", text, params, transform))
  }
}

/** PostgreSQL answers `COMMIT` of an aborted transaction with `ROLLBACK`: that commit failed. */
const commit = (connection: SqlConnection.Connection) =>
  Effect.flatMap(connection.executeRaw("COMMIT", []), (result) =>
    (result as Results).command === "ROLLBACK"
      ? Effect.fail(
        new SqlError.SqlError({
          reason: new SqlError.UnknownError({
            cause: new Error("COMMIT rolled back an aborted transaction"),
            message: "PGlite: COMMIT rolled back an aborted transaction",
            operation: "commit"
          })
        })
      )
      : Effect.void)

/** A `SqlClient` over `db` (its owner opens and closes it). */
export const makePgliteClient = (db: PGlite): Effect.Effect<SqlClient.SqlClient, never, Reactivity.Reactivity> => {
  const connection = connectionOf(db)
  const { acquirer, borrower, transactionAcquirer } = SqlClient.makeSqliteAcquirers({
    connection: Effect.succeed(connection),
    semaphore: Semaphore.makeUnsafe(1)
  })
  return SqlClient.make({
    acquirer,
    borrower,
    transactionAcquirer,
    compiler: PgClient.makeCompiler(),
    driver: "pglite",
    spanAttributes: [["db.system.name", "postgresql"]],
    commit,
    releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`
  })
}

/** The `SqlClient` over `db` as a layer. */
export const layerPgliteSqlClient = (db: PGlite): Layer.Layer<SqlClient.SqlClient> =>
  Layer.effect(SqlClient.SqlClient, makePgliteClient(db)).pipe(Layer.provide(Reactivity.layer))
