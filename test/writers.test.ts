/**
 * One writer per table: a table's rows are written only by the module that declares it (`Store.table`).
 * Another module that changes them calls a write that module exports, named for what it means
 * (`Customers.restrict`, `Tenancy.setRestrictedIn`, `Orders.recordFundingSender`), so every way a row can change is
 * read in one place, beside the row's type.
 *
 * The check reads packages/core/src as TypeScript sees it, without running anything: every call of a store method
 * that writes the table it is given first (`store.update(Orders.Orders, ...)`, whatever the variable holding the
 * store is called), the table followed through imports to the `Store.table` that declares it. A write made outside
 * that module fails the second test, which names it; so does a write whose table the check cannot follow to its
 * declaration (a table handed around as a value), since such a write could be anyone's.
 *
 * Three writes name no one table: `removeRows`, `insertRows` and a copy's `restore` write a sandbox's rows of every
 * table the domains' descriptors name (kernel/Domain.ts), each descriptor its table's own module's. They belong to the
 * reset, the snapshots and the forks, and the third test keeps them there. The first test keeps the check whole: a method the store
 * port gains must be named below as a read or a write before anything passes.
 */
import { readdirSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"
import { beforeAll, describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..")
const core = join(root, "packages/core/src")

/** StoreService's methods (kernel/Store.ts) that write rows of the table their first argument names. */
const tableWrites = ["insert", "insertMany", "insertFresh", "insertIfAbsent", "update", "updateMany", "remove", "removePartition"]
/** The methods of StoreService and of its `copies` that write rows of many tables at once, named by selections. */
const wholeStoreWrites = ["removeRows", "insertRows", "copies.restore"]
/** The rest: reads, and the writes of copies, whose rows are in no table until a restore puts them back. */
const others = [
  ...["transaction", "afterCommit", "get", "getNow", "getForUpdate", "getLinked", "getLinkedNow", "getManyForUpdate", "findUnique", "page", "count", "nextSequence", "nextNumber", "takeNumbers", "raiseSequence", "ready", "shared", "pause"],
  ...["copies", "copies.save", "copies.saveRows", "copies.conflict", "copies.rows", "copies.remove"]
]

/** The modules that write whole sandboxes, each with why. */
const wholeStoreWriters: Readonly<Record<string, string>> = {
  "Reset.ts": "a reset removes a sandbox's rows of every table the registry names, where each descriptor says they are",
  "Snapshots.ts": "a restore puts a sandbox's rows back, of every table the registry names",
  "Forks.ts": "a fork writes a sandbox's rows of every table the registry names, the snapshot's rewritten",
  "storeContract/Cases.ts": "the store contract checks these writes themselves, on tables of its own that the engine never reads"
}

/** Files of packages/core/src the check does not read, each with why. */
const notWriters: Readonly<Record<string, string>> = {
  "kernel/MemoryStore.ts": "the memory store itself: its methods pass on to each other the table their caller named"
}

/** Tables no module of the core writes, each with who does. */
const writtenOutside: Readonly<Record<string, string>> = {
  "kernel/Liveness.ts OpenStreams": "@fos/http's LiveFeed.ts admits and releases a live stream, outside the core this check reads"
}

interface Scan {
  /** Every member of StoreService and Copies. */
  readonly storeMembers: ReadonlyArray<string>
  /** `file:line method(table): why`, for each write made outside its table's module. */
  readonly strays: ReadonlyArray<string>
  /** `file:line method`, for each whole-store write outside `wholeStoreWriters`. */
  readonly wholeStore: ReadonlyArray<string>
  /** `file name` of every table declared, and of every table written (by the files the check reads). */
  readonly declared: ReadonlyArray<string>
  readonly written: ReadonlySet<string>
}

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [])

const scanCore = (): Scan => {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })!
  const program = ts.createProgram(sources(core), config.options)
  const checker = program.getTypeChecker()
  const inCore = (file: ts.SourceFile) => relative(core, file.fileName)
  const coreFiles = program.getSourceFiles().filter((file) => !inCore(file).startsWith(".."))

  const storeFile = coreFiles.find((file) => inCore(file) === "kernel/Store.ts")!
  const interfaceOf = (name: string) => storeFile.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name)!
  const storeService = interfaceOf("StoreService")
  const copies = interfaceOf("Copies")
  const storeMembers = [
    ...storeService.members.map((m) => m.name!.getText(storeFile)),
    ...copies.members.map((m) => `copies.${m.name!.getText(storeFile)}`)
  ]
  const tableFunction = storeFile.statements.flatMap((s) => ts.isVariableStatement(s) ? [...s.declarationList.declarations] : [])
    .find((d) => d.name.getText(storeFile) === "table")!

  const resolve = (node: ts.Node): ts.Symbol | undefined => {
    const symbol = checker.getSymbolAtLocation(node)
    return symbol !== undefined && (symbol.flags & ts.SymbolFlags.Alias) !== 0 ? checker.getAliasedSymbol(symbol) : symbol
  }
  /** The store method a property access names (`copies.` before a copy's), else undefined. */
  const storeMethod = (access: ts.PropertyAccessExpression): string | undefined => {
    const declarations = checker.getSymbolAtLocation(access.name)?.declarations ?? []
    if (declarations.some((d) => d.parent === storeService)) return access.name.text
    return declarations.some((d) => d.parent === copies) ? `copies.${access.name.text}` : undefined
  }
  /** Whether a declaration is a table's: `const X = Store.table(...)`. */
  const declaresTable = (declaration: ts.Declaration | undefined): declaration is ts.VariableDeclaration => {
    if (declaration === undefined || !ts.isVariableDeclaration(declaration) || declaration.initializer === undefined) return false
    const init = declaration.initializer
    const callee = ts.isCallExpression(init) ? init.expression : undefined
    const made = callee === undefined ? undefined : resolve(ts.isPropertyAccessExpression(callee) ? callee.name : callee)
    return made?.valueDeclaration === tableFunction
  }
  /** The table declaration a write's first argument names, or undefined when it names none the check can follow. */
  const tableDeclaration = (argument: ts.Expression | undefined): ts.VariableDeclaration | undefined => {
    const declaration = argument === undefined ? undefined : resolve(ts.isPropertyAccessExpression(argument) ? argument.name : argument)?.valueDeclaration
    return declaresTable(declaration) ? declaration : undefined
  }
  const tableName = (declaration: ts.VariableDeclaration) => `${inCore(declaration.getSourceFile())} ${declaration.name.getText()}`

  const strays: Array<string> = []
  const wholeStore: Array<string> = []
  const written = new Set<string>()
  const declared: Array<string> = []
  for (const file of coreFiles.filter((f) => !(inCore(f) in notWriters))) {
    const where = (node: ts.Node) => `${inCore(file)}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}`
    const visit = (node: ts.Node): void => {
      if (declaresTable(node as ts.Declaration)) declared.push(tableName(node as ts.VariableDeclaration))
      if (ts.isPropertyAccessExpression(node)) {
        const method = storeMethod(node)
        const call = ts.isCallExpression(node.parent) && node.parent.expression === node ? node.parent : undefined
        if (method !== undefined && tableWrites.includes(method)) {
          const argument = call?.arguments[0]
          const table = tableDeclaration(argument)
          if (table === undefined) {
            strays.push(`${where(node)} ${method}(${argument?.getText(file) ?? ""}): no table the check can follow to its Store.table`)
          } else {
            written.add(tableName(table))
            if (table.getSourceFile() !== file) strays.push(`${where(node)} ${method}(${argument!.getText(file)}): the table is ${inCore(table.getSourceFile())}'s`)
          }
        }
        if (method !== undefined && wholeStoreWrites.includes(method) && !(inCore(file) in wholeStoreWriters)) wholeStore.push(`${where(node)} ${method}`)
      }
      ts.forEachChild(node, visit)
    }
    visit(file)
  }
  return { storeMembers, strays, wholeStore, declared, written }
}

describe("packages/core's tables", () => {
  let scan: Scan
  beforeAll(() => {
    scan = scanCore()
  }, 120_000)

  it("are written only through the store methods this check knows", () => {
    expect(scan.storeMembers.filter((m) => ![...tableWrites, ...wholeStoreWrites, ...others].includes(m))).toEqual([])
    // And the check sees the writes: every table the core declares is found written, but those written elsewhere.
    expect(scan.declared.filter((t) => !scan.written.has(t)).sort()).toEqual(Object.keys(writtenOutside).sort())
  })

  it("each have one writer: the module that declares them", () => {
    expect(scan.strays).toEqual([])
  })

  it("are written whole (a sandbox at once) only by the reset, the snapshots and the forks", () => {
    expect(scan.wholeStore).toEqual([])
  })
})
