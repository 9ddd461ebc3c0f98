export * from "./Client.ts"
export * from "./Webhooks.ts"
