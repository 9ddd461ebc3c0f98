/**
 * The bounds of snapshots and forks, as plain numbers that import nothing: `@fos/contract/limits` gives them to a
 * caller that must not load Effect and the schemas for three numbers (@fos/testing, whose test files take a world
 * without either). The schemas and the engine read them from here too.
 */

/** The longest label a snapshot carries, in characters. */
export const maxSnapshotLabelLength = 200

/** The longest stream name a fork takes (`?stream=`), in characters. */
export const maxForkStreamLength = 500

/** The most forks one organization holds at a time (docs/snapshots.md, "Forks"): one more is 409 CONFLICT. */
export const maxForksPerOrganization = 64
