/**
 * Real time, whatever clock the engine runs on: the engine's Clock may be virtual, standing still until an advance,
 * while rate-limit buckets refill as real time passes and a webhook signature's `t` may have to match a receiver's
 * own clock. The engine reads real time only through this port: `Engine.layer` provides the clock of the context it
 * is built in (the runtime's, for `createEngine` and the servers) unless given another, and tests give one they
 * move themselves (a `makeVirtualClock`, or a TestClock).
 */
import { type Clock, Context } from "effect"

export class RealClock extends Context.Service<RealClock, Clock.Clock>()("fos/RealClock") {}
