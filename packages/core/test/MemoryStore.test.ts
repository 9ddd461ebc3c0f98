import * as MemoryStore from "../src/kernel/MemoryStore.ts"
import { storeContract } from "./storeContract.ts"

storeContract("memory", () => MemoryStore.layer)
