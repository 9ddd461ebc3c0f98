import { layerMemoryStore } from "../src/MemoryStore.ts"
import { storeContract } from "./storeContract.ts"

storeContract("memory", () => layerMemoryStore)
