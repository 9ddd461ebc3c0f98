/**
 * Topics: how one domain tells others that something happened to it, inside the same store transaction, without
 * importing them. The publisher declares the topic beside the row it owns (`TransactionEnded` in
 * money/Transactions.ts, `SignerLeftPool` in signing/Roster.ts) and publishes to it; Subscriptions.ts, at the top of
 * the core, is the one module that names every subscriber of every topic, so a reader finds them all in one place,
 * and the imports still run one way (money never imports signing or orders to tell them a transaction ended).
 *
 * A topic is a context key whose value is its subscribers, in the order they run. An engine built without them
 * (not through Engine.layer) has none declared: publishing then dies rather than skip what should have run.
 */
import { Context, Effect } from "effect"
import type * as Store from "./Store.ts"

/** One subscriber: runs in the publisher's store transaction, and cannot fail it (a failure there is a defect). */
export type Subscriber<A> = (event: A) => Effect.Effect<void, never, Store.Store>

export interface Topic<A> extends Context.Reference<ReadonlyArray<Subscriber<A>> | undefined> {}

/** Declares a topic carrying `A`; `name` names it in the context ("fos/TransactionEnded"). */
export const topic = <A>(name: string): Topic<A> =>
  Context.Reference<ReadonlyArray<Subscriber<A>> | undefined>(name, { defaultValue: () => undefined })

/** Runs every subscriber of `t` on `event`, in order. */
export const publish = <A>(t: Topic<A>, event: A): Effect.Effect<void, never, Store.Store> =>
  Effect.flatMap(t, (subscribers) =>
    subscribers === undefined
      ? Effect.die(new Error(`no subscribers declared for ${t.key}: build the engine with Engine.layer (Subscriptions.ts)`))
      : Effect.forEach(subscribers, (subscriber) => subscriber(event), { discard: true }))
