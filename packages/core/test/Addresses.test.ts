/**
 * Chain addresses: published addresses of every chain pass their chain's validator, mutated ones fail with the code
 * the spec names, and every deposit address the engine derives is valid on its chain, deterministic and distinct.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import { type Chain, Chains } from "@fos/contract"
import * as Addresses from "../src/money/Addresses.ts"
import * as Problem from "../src/kernel/Problem.ts"

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
const bech32Alphabet = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

/** A checked address's outcome in one comparable shape. */
const outcome = (chain: Chain, address: string) => {
  const result = Addresses.checkAddress(chain, address)
  return result.ok ? "ok" : result.code
}

const expectValid = (chain: Chain, address: string, normalized = address) =>
  expect(Addresses.checkAddress(chain, address), `${chain} ${address}`).toEqual({ ok: true, normalized })

const expectRejected = (chain: Chain, address: string, code: "INVALID_ADDRESS_FORMAT" | "VALIDATION_ERROR") => {
  const result = Addresses.checkAddress(chain, address)
  expect(result.ok ? "ok" : result.code, `${chain} ${JSON.stringify(address)}`).toBe(code)
  // The project's rule for error details: name what is wrong, never echo the rejected value.
  if (!result.ok && address.length >= 8) expect(result.detail).not.toContain(address)
}

/** Every string that differs from `address` in exactly one position, the new character taken from `alphabet`. */
const substitutions = function*(address: string, alphabet: string): Generator<string> {
  for (let i = 0; i < address.length; i++) {
    for (const c of alphabet) if (c !== address[i]) yield address.slice(0, i) + c + address.slice(i + 1)
  }
}

const seedArb = fc.string({ minLength: 1, maxLength: 40 })

describe("EVM addresses", () => {
  // EIP-55's own test vectors (https://eips.ethereum.org/EIPS/eip-55, "Test Cases"): mixed case, all caps (the
  // checksum happens to capitalise every letter) and all lower (it capitalises none).
  const eip55 = [
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77",
    "0x27b1fdb04752bbc536007a920d24acb045561c26"
  ]

  it("accepts EIP-55's vectors on every EVM chain, normalized to their checksummed form", () => {
    for (const chain of Addresses.EvmChains) for (const address of eip55) expectValid(chain, address)
  })

  it("accepts an all-lowercase address and normalizes it to EIP-55", () => {
    for (const address of eip55) expectValid("ethereum", address.toLowerCase(), address)
  })

  it("answers INVALID_ADDRESS_FORMAT for a wrong checksum, one flipped letter or an all-uppercase address", () => {
    expectRejected("ethereum", "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "INVALID_ADDRESS_FORMAT")
    expectRejected("base", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5D359", "INVALID_ADDRESS_FORMAT")
    // All-uppercase is neither all-lowercase nor, for these, the EIP-55 form: the spec's rule refuses it.
    expectRejected("polygon", "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", "INVALID_ADDRESS_FORMAT")
    // An all-caps vector with one letter lowered: mixed case, checksum wrong.
    expectRejected("bsc", "0x52908400098527886E0F7030069857D2E4169eE7", "INVALID_ADDRESS_FORMAT")
  })

  it("flipping the case of any one letter of a checksummed address fails, unless that leaves it all-lowercase", () => {
    for (const address of eip55.slice(0, 6)) {
      for (let i = 2; i < address.length; i++) {
        const c = address[i]!
        if (!/[a-fA-F]/.test(c)) continue
        const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()
        const mutated = address.slice(0, i) + flipped + address.slice(i + 1)
        const expected = mutated === mutated.toLowerCase() ? "ok" : "INVALID_ADDRESS_FORMAT"
        expect(outcome("ethereum", mutated), mutated).toBe(expected)
      }
    }
  })

  it("answers VALIDATION_ERROR for input that is not 0x and 40 hex digits", () => {
    const good = eip55[0]!
    for (
      const bad of [
        "",
        "0x",
        good.slice(2), // no 0x
        "0X" + good.slice(2), // the prefix is lower-case 0x
        good.slice(0, -1), // 39 digits
        good + "a", // 41 digits
        good.slice(0, -1) + "g", // not hex
        ` ${good}`, // not trimmed
        `${good}\n`,
        "0x" + "ａ".repeat(40) // full-width letters are not hex
      ]
    ) expectRejected("ethereum", bad, "VALIDATION_ERROR")
  })
})

describe("Solana addresses", () => {
  // Well-known program and mint ids (docs.solana.com, "Programs"; spl.solana.com; Circle's published USDC mint):
  // the System Program, SPL Token, Associated Token Account, wrapped SOL and USDC.
  const published = [
    "11111111111111111111111111111111",
    "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
    "So11111111111111111111111111111111111111112",
    "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
  ]

  it("accepts base58 that decodes to exactly 32 bytes", () => {
    for (const address of published) expectValid("solana", address)
  })

  it("refuses other lengths, characters outside base58, and padding", () => {
    for (
      const bad of [
        "",
        "1111111111111111111111111111111", // 31 zero bytes
        "111111111111111111111111111111111", // 33 zero bytes
        "1TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", // a leading 1 is one more (zero) byte: 33
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5D", // truncated
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5D0", // 0 is not base58
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DI", // nor is I
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5Dl", // nor l
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DO", // nor O
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" // an EVM address
      ]
    ) expectRejected("solana", bad, "VALIDATION_ERROR")
  })
})

describe("Tron addresses", () => {
  // Tether's USDT TRC-20 contract (tether.to, "Supported protocols"), Circle's USDC on Tron, and the zero ("black
  // hole") address T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb, 0x41 followed by 20 zero bytes.
  const published = ["TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8", "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb"]

  it("accepts base58check of 0x41 and 20 bytes", () => {
    for (const address of published) expectValid("tron", address)
  })

  it("refuses every single-character substitution of USDT's contract address", () => {
    for (const mutated of substitutions(published[0]!, base58Alphabet)) expect(outcome("tron", mutated), mutated).toBe("VALIDATION_ERROR")
  })

  it("refuses a truncated address, a wrong version byte, and other chains' addresses", () => {
    for (
      const bad of [
        "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6",
        "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6tt",
        "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", // valid base58check, version 0x00 (Bitcoin P2PKH)
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "41a614f803b6fd780986a42c78ec9c7f77e6ded13c" // the hex form is not accepted
      ]
    ) expectRejected("tron", bad, "VALIDATION_ERROR")
  })
})

describe("Bitcoin addresses", () => {
  // BIP-173 and BIP-350 valid mainnet vectors of the kinds fos accepts
  // (https://github.com/bitcoin/bips/blob/master/bip-0350.mediawiki, "Test vectors"; sipa/bech32 ref/python/tests.py).
  const segwit: ReadonlyArray<[string, string]> = [
    ["BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"], // P2WPKH, upper case
    ["bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"],
    ["bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"] // P2TR
  ]
  // Legacy base58check: the genesis block's coinbase address (P2PKH); bitcoinjs-lib test/fixtures/base58.js (P2PKH of
  // BIP-173's program); the P2SH example of the Bitcoin wiki's "Invoice address" page.
  const legacy = ["1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"]

  it("accepts P2WPKH and P2TR (lower-cased) and legacy P2PKH and P2SH", () => {
    for (const [address, normalized] of segwit) expectValid("bitcoin", address, normalized)
    for (const address of legacy) expectValid("bitcoin", address)
  })

  it("accepts P2WSH, a version 0 program of 32 bytes", () => {
    // BIP-173, "Examples": the mainnet P2WSH address of its example script.
    expectValid("bitcoin", "bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3")
  })

  it("refuses BIP-350's invalid vectors", () => {
    for (
      const bad of [
        "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut", // invalid HRP
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", // bech32 instead of bech32m
        "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL", // bech32 instead of bech32m
        "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", // bech32m instead of bech32
        "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4", // invalid character in checksum
        "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R", // invalid witness version
        "bc1pw5dgrnzv", // program of 1 byte
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav", // program of 41 bytes
        "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", // v0 program of 16 bytes
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf", // more than 4 padding bits
        "bc1gmk9yu" // empty data section
      ]
    ) expectRejected("bitcoin", bad, "VALIDATION_ERROR")
  })

  it("refuses BIP-350-valid addresses fos does not send to: testnet, future witness versions, v1 not 32 bytes", () => {
    for (
      const bad of [
        "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", // testnet P2WSH
        "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c", // testnet P2TR
        "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y", // v1, 40 bytes
        "BC1SW50QGDZ25J", // v16
        "bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs" // v2
      ]
    ) expectRejected("bitcoin", bad, "VALIDATION_ERROR")
  })

  it("refuses mixed case, single substitutions, truncation and legacy addresses with bad checksums", () => {
    expectRejected("bitcoin", "Bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "VALIDATION_ERROR")
    expectRejected("bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", "VALIDATION_ERROR")
    expectRejected("bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t", "VALIDATION_ERROR")
    expectRejected("bitcoin", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb", "VALIDATION_ERROR")
    expectRejected("bitcoin", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNL", "VALIDATION_ERROR")
    expectRejected("bitcoin", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "VALIDATION_ERROR") // base58check, version 0x41
    for (const mutated of substitutions(segwit[1]![1], bech32Alphabet)) expect(outcome("bitcoin", mutated), mutated).toBe("VALIDATION_ERROR")
    for (const mutated of substitutions(legacy[0]!, base58Alphabet)) expect(outcome("bitcoin", mutated), mutated).toBe("VALIDATION_ERROR")
  })
})

describe("Stellar addresses", () => {
  // SEP-23 (https://github.com/stellar/stellar-protocol/blob/master/ecosystem/sep-0023.md), "Valid test cases".
  const account = "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"

  it("accepts SEP-23's ed25519 account id", () => {
    expectValid("stellar", account)
  })

  it("refuses SEP-23's invalid test cases", () => {
    for (
      const bad of [
        "GAAAAAAAACGC6",
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUR",
        "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZA",
        "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUACUSI",
        "G47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVP2I",
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLKA",
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAAV75I",
        "M47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUQ",
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUK===",
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUO",
        "BAAD6DBUX6J22DMZOHIEZTEQ64CVCHEDRKWZONFEUL5Q26QD7R76RGR4TV"
      ]
    ) expectRejected("stellar", bad, "VALIDATION_ERROR")
  })

  it("refuses SEP-23's valid keys of other kinds: muxed M..., contract C..., signed payload P...", () => {
    for (
      const other of [
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUQ",
        "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLK",
        "CA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUWDA",
        "PA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAQACAQDAQCQMBYIBEFAWDANBYHRAEISCMKBKFQXDAMRUGY4DUPB6IBZGM"
      ]
    ) expectRejected("stellar", other, "VALIDATION_ERROR")
    const muxed = Addresses.checkAddress("stellar", "MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUAAAAAAAAAAAACJUQ")
    expect(!muxed.ok && muxed.detail).toMatch(/muxed/)
  })

  it("refuses lower case, truncation and every single-character substitution", () => {
    expectRejected("stellar", account.toLowerCase(), "VALIDATION_ERROR")
    expectRejected("stellar", account.slice(0, -1), "VALIDATION_ERROR")
    for (const mutated of substitutions(account, base32Alphabet)) expect(outcome("stellar", mutated), mutated).toBe("VALIDATION_ERROR")
  })
})

describe("every chain", () => {
  it("refuses input longer than MaxAddressLength before decoding it", () => {
    for (const chain of Chains) expectRejected(chain, "1".repeat(Addresses.MaxAddressLength + 1), "VALIDATION_ERROR")
  })

  it("refuses another chain's published address where the formats differ", () => {
    expectRejected("solana", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "VALIDATION_ERROR")
    expectRejected("stellar", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "VALIDATION_ERROR")
    expectRejected("tron", "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ", "VALIDATION_ERROR")
    expectRejected("arbitrum", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", "VALIDATION_ERROR")
  })
})

describe("deposit addresses", () => {
  const shapes: Record<Chain, RegExp> = {
    ethereum: /^0x[0-9a-fA-F]{40}$/,
    base: /^0x[0-9a-fA-F]{40}$/,
    polygon: /^0x[0-9a-fA-F]{40}$/,
    arbitrum: /^0x[0-9a-fA-F]{40}$/,
    optimism: /^0x[0-9a-fA-F]{40}$/,
    avalanche: /^0x[0-9a-fA-F]{40}$/,
    bsc: /^0x[0-9a-fA-F]{40}$/,
    solana: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/,
    tron: /^T[1-9A-HJ-NP-Za-km-z]{33}$/,
    bitcoin: /^bc1q[02-9ac-hj-np-z]{38}$/,
    stellar: /^G[A-Z2-7]{55}$/
  }

  it("are valid on their chain and already in their normalized form, for any seed", () => {
    fc.assert(
      fc.property(seedArb, (seed) => {
        for (const chain of Chains) {
          const address = Addresses.depositAddress(chain, seed)
          expect(address).toMatch(shapes[chain])
          expect(Addresses.checkAddress(chain, address)).toEqual({ ok: true, normalized: address })
        }
      }),
      { numRuns: 200 }
    )
  })

  it("are deterministic, and differ between seeds and between chains", () => {
    fc.assert(
      fc.property(seedArb, seedArb, (a, b) => {
        fc.pre(a !== b)
        for (const chain of Chains) {
          expect(Addresses.depositAddress(chain, a)).toBe(Addresses.depositAddress(chain, a))
          expect(Addresses.depositAddress(chain, a)).not.toBe(Addresses.depositAddress(chain, b))
        }
        expect(new Set(Chains.map((chain) => Addresses.depositAddress(chain, a))).size).toBe(Chains.length)
      })
    )
  })

  it("are stable across releases (a stored wallet keeps its address)", () => {
    // Pinned outputs: a change here moves every existing wallet's deposit address.
    const pinned = Object.fromEntries(Chains.map((chain) => [chain, Addresses.depositAddress(chain, "wal_pinned")]))
    expect(pinned).toMatchInlineSnapshot(`
      {
        "arbitrum": "0x073DFDa3963Cf9d1C9c7bD5BC27b4ef503407806",
        "avalanche": "0xCa931A667d08C0430739CF673Ab63C2D2Fc769A0",
        "base": "0xa5dda321E230248Dd4775Fe07d71F4A7f00cd125",
        "bitcoin": "bc1qsg6fgk6sdx28a7lryzw8kwz8q4vluqs9vmer02",
        "bsc": "0x6e6B6BC2ae3868C754aF00B30308ef45FE2bB10a",
        "ethereum": "0x5056fa7d38B00EAa73e9818BE5E3DebFc7dB9080",
        "optimism": "0x5838141698e726982051dF6eCeEE9b79658B85A5",
        "polygon": "0x6F78F293C17d5D9B0Fd0d18e5ddAFFAf13890886",
        "solana": "AeJbVd3eCbvMK9cvJM7f1v8e1YacnNCgmgjdWDSQ2Per",
        "stellar": "GAIKAYJ3JM7IUUX343YTX5T73N3TDYQOKCXQA7LAMQMRJPUNHK6IJZPG",
        "tron": "TCPL7ziALE15JH1eNGXR59pRbYB2vZBkjB",
      }
    `)
  })

  it("EVM: every single-letter case flip fails with INVALID_ADDRESS_FORMAT unless the result is all-lowercase", () => {
    fc.assert(
      fc.property(seedArb, fc.constantFrom(...Addresses.EvmChains), fc.nat(39), (seed, chain, index) => {
        const address = Addresses.depositAddress(chain, seed)
        const i = 2 + index
        const c = address[i]!
        fc.pre(/[a-fA-F]/.test(c))
        const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()
        const mutated = address.slice(0, i) + flipped + address.slice(i + 1)
        expect(outcome(chain, mutated)).toBe(mutated === mutated.toLowerCase() ? "ok" : "INVALID_ADDRESS_FORMAT")
      }),
      { numRuns: 300 }
    )
  })

  it("EVM: a non-hex character anywhere after 0x is VALIDATION_ERROR", () => {
    fc.assert(
      fc.property(seedArb, fc.constantFrom(...Addresses.EvmChains), fc.nat(39), fc.constantFrom(..."ghxzGXZ_- "), (seed, chain, index, c) => {
        const address = Addresses.depositAddress(chain, seed)
        const mutated = address.slice(0, 2 + index) + c + address.slice(3 + index)
        expect(outcome(chain, mutated)).toBe("VALIDATION_ERROR")
      })
    )
  })

  it("checksummed chains: every single-character substitution of a generated address fails", () => {
    const alphabets: ReadonlyArray<[Chain, string]> = [["tron", base58Alphabet], ["bitcoin", bech32Alphabet], ["stellar", base32Alphabet]]
    fc.assert(
      fc.property(seedArb, fc.constantFrom(...alphabets), fc.nat(), fc.nat(), (seed, [chain, alphabet], at, pick) => {
        const address = Addresses.depositAddress(chain, seed)
        const i = at % address.length
        const c = alphabet[pick % alphabet.length]!
        fc.pre(c !== address[i])
        expect(outcome(chain, address.slice(0, i) + c + address.slice(i + 1))).toBe("VALIDATION_ERROR")
      }),
      { numRuns: 1000 }
    )
  })

  it("Solana has no checksum: a generated address loses validity only by its decoded length or its alphabet", () => {
    // One character more or less can still decode to 32 bytes (32 bytes are 43 or 44 base58 digits); two cannot,
    // since 58^2 is more than a byte's worth.
    fc.assert(
      fc.property(seedArb, fc.nat(), (seed, at) => {
        const address = Addresses.depositAddress("solana", seed)
        expect(outcome("solana", address.slice(0, -2))).toBe("VALIDATION_ERROR")
        expect(outcome("solana", address + "zz")).toBe("VALIDATION_ERROR")
        const i = at % address.length
        expect(outcome("solana", address.slice(0, i) + "0" + address.slice(i + 1))).toBe("VALIDATION_ERROR")
      })
    )
  })
})

describe("validAddress", () => {
  it.effect("succeeds with the normalized address", () =>
    Effect.gen(function*() {
      const address = yield* Addresses.validAddress("ethereum", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "/destination/address")
      expect(address).toBe("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed")
    }))

  it.effect("fails with the catalog code, naming the pointer (errors[] on VALIDATION_ERROR only, as the spec allows), echoing nothing", () =>
    Effect.gen(function*() {
      const bad = "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
      const exit = yield* Effect.exit(Addresses.validAddress("ethereum", bad, "/recipient/address"))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = yield* Effect.flip(Addresses.validAddress("ethereum", bad, "/recipient/address"))
      expect(error).toBeInstanceOf(Problem.ApiError)
      expect(error.code).toBe("INVALID_ADDRESS_FORMAT")
      expect(error.errors).toBeUndefined()
      expect(error.detail).toContain("/recipient/address")
      expect(JSON.stringify(error)).not.toContain(bad.slice(2))

      const malformed = yield* Effect.flip(Addresses.validAddress("solana", "not-an-address-at-all", "/address"))
      expect(malformed.code).toBe("VALIDATION_ERROR")
      expect(malformed.errors).toEqual([{ pointer: "/address", detail: expect.any(String) }])
      expect(JSON.stringify(malformed)).not.toContain("not-an-address-at-all")
    }))
})
