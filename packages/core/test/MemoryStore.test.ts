import { layerMemoryStore } from "../src/kernel/MemoryStore.ts"
import { storeContract } from "./storeContract.ts"

storeContract("memory", () => layerMemoryStore)
