export * from "./World.ts"
export * from "./Receiver.ts"
export * from "./Embedded.ts"
export * from "./Suite.ts"
