export * from "./Migrations.ts"
export * from "./SqlStore.ts"
export * from "./Stores.ts"
export * from "./ImageStore.ts"
