export * from "./Api.ts"
export * from "./App.ts"
export * from "./Pipeline.ts"
export * from "./Engine.ts"
