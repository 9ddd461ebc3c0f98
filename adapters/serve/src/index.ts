export * from "./Options.ts"
export * from "./Serve.ts"
export * from "./WebServer.ts"
export * from "./Command.ts"
