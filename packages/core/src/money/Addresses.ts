/**
 * Chain addresses: the deposit address every wallet gets, and the one validator per chain that every address input
 * of the API goes through.
 *
 * The spec's rule (Errors): "400 INVALID_ADDRESS_FORMAT — EVM address not all-lowercase or correct EIP-55
 * checksum". Every other malformed address is the catalog's VALIDATION_ERROR; the spec shows no other format rule,
 * so what each chain accepts is fos's choice, written down here and in docs/money.md ("Chain addresses").
 *
 * **Deposit addresses** are derived from the wallet's id alone: hash `fos/deposit-address/<chain>/<seed>` (keccak-256
 * on the EVM chains and Tron, as their real addresses are keccak-derived; SHA-256 elsewhere) and encode the bytes
 * the way the chain encodes an address. The same id always gives the same address, and different chains give
 * different addresses for the same id. They are sandbox addresses: well-formed, but no key pair stands behind them
 * and no one holds a key that could spend from them. Nothing may ever be sent to them on a real chain.
 *
 * **Validators** decode with @scure/base's codecs (no codec is written here; Stellar's CRC16-XModem is a checksum).
 * An address is taken as sent, never trimmed, and at most `MaxAddressLength` characters are looked at. A detail
 * names what is wrong in the words of a JSON Pointer entry ("must be ...") and never echoes the rejected value.
 */
import type { Chain } from "@fos/contract"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, concatBytes, utf8ToBytes } from "@noble/hashes/utils.js"
import { base32nopad, base58, bech32, bech32m, createBase58check } from "@scure/base"
import { Effect } from "effect"
import * as Problem from "../kernel/Problem.ts"

/** The chains whose addresses are EVM addresses: 0x and 20 bytes, EIP-55 checksummed. */
export const EvmChains = ["ethereum", "base", "polygon", "arbitrum", "optimism", "avalanche", "bsc"] as const satisfies ReadonlyArray<Chain>
export type EvmChain = typeof EvmChains[number]
const evmChainSet: ReadonlySet<Chain> = new Set(EvmChains)
export const isEvmChain = (chain: Chain): chain is EvmChain => evmChainSet.has(chain)

/** The longest input a validator decodes (a bech32 string is at most 90 characters, a muxed StrKey 69). */
export const MaxAddressLength = 128

/** The two catalog codes an address is refused with. */
export type AddressErrorCode = "INVALID_ADDRESS_FORMAT" | "VALIDATION_ERROR"

/**
 * A validator's answer: the address in its canonical form (EIP-55 on the EVM chains, lower case for bech32, as sent
 * elsewhere), or the catalog code and a detail that does not echo the input.
 */
export type AddressCheck =
  | { readonly ok: true; readonly normalized: string }
  | { readonly ok: false; readonly code: AddressErrorCode; readonly detail: string }

const accept = (normalized: string): AddressCheck => ({ ok: true, normalized })
const reject = (detail: string, code: AddressErrorCode = "VALIDATION_ERROR"): AddressCheck => ({ ok: false, code, detail })

/** Base58check with Bitcoin's double SHA-256 checksum, as Bitcoin's legacy addresses and Tron use it. */
const base58check = createBase58check(sha256)

/** Runs a throwing decoder; undefined where it throws. */
const attempt = <A>(decode: () => A): A | undefined => {
  try {
    return decode()
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------------------------
// EVM: 0x and 40 hex digits; all-lowercase, or exactly EIP-55's letter case.

const evmShape = /^0x[0-9a-fA-F]{40}$/

/**
 * EIP-55: a hex letter is upper case where the matching nibble of keccak-256 of the lower-case hex (ASCII, without
 * 0x) is 8 or more.
 */
export const toChecksumAddress = (lowerHex40: string): string => {
  const hash = bytesToHex(keccak_256(utf8ToBytes(lowerHex40)))
  let out = "0x"
  for (let i = 0; i < 40; i++) out += parseInt(hash[i]!, 16) >= 8 ? lowerHex40[i]!.toUpperCase() : lowerHex40[i]!
  return out
}

/**
 * All-uppercase hex after 0x is not accepted as "unchecksummed": the spec's rule names only all-lowercase as the
 * unchecksummed form, so an all-uppercase address passes only where it is its own EIP-55 form (as two of EIP-55's
 * test vectors are). ethers and web3.js accept any all-uppercase address; fos follows the spec.
 */
const checkEvm = (address: string): AddressCheck => {
  if (!evmShape.test(address)) return reject("must be 0x followed by 40 hexadecimal digits")
  const lower = address.slice(2).toLowerCase()
  const checksummed = toChecksumAddress(lower)
  if (address.slice(2) === lower || address === checksummed) return accept(checksummed)
  return reject(
    "must be all-lowercase or carry a correct EIP-55 checksum; its letter case does not match the checksum",
    "INVALID_ADDRESS_FORMAT"
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Solana: base58 of a 32-byte public key. There is no checksum; program-derived (off-curve) addresses are
// addresses too, so no curve check.

const checkSolana = (address: string): AddressCheck => {
  const bytes = attempt(() => base58.decode(address))
  if (bytes === undefined) return reject("must be base58 (no 0, O, I or l)")
  if (bytes.length !== 32) return reject("must be base58 of exactly 32 bytes")
  return accept(address)
}

// ---------------------------------------------------------------------------------------------------------------
// Tron: base58check of 0x41 and the 20-byte account (T...). The hex form (41...) is not accepted.

const tronPrefix = 0x41

const checkTron = (address: string): AddressCheck => {
  const bytes = attempt(() => base58check.decode(address))
  if (bytes === undefined) return reject("must be a base58check address (T...) with a valid checksum")
  if (bytes.length !== 21 || bytes[0] !== tronPrefix) return reject("must encode 0x41 followed by 20 bytes (T...)")
  return accept(address)
}

// ---------------------------------------------------------------------------------------------------------------
// Bitcoin (mainnet only): P2WPKH and P2WSH (bc1q, witness v0 of 20 or 32 bytes, bech32), P2TR (bc1p, witness v1 of
// 32 bytes, bech32m), and legacy base58check P2PKH (1..., version 0x00) and P2SH (3..., version 0x05).
// Refused though BIP-350 can encode them: witness versions 2 to 16 and v1 programs of other lengths, which no
// deployed output type spends (funds sent there are lost or anyone's), and every testnet or regtest form.

const legacyVersions: ReadonlySet<number> = new Set([0x00, 0x05])

/** Bech32's data characters in value order: the character after "bc1" is the witness version. */
const bech32Alphabet = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

/** A bc1... address (checkBitcoin sends only those here). */
const checkSegwit = (address: string): AddressCheck => {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) {
    return reject("must be all lower case or all upper case")
  }
  const lower = address.toLowerCase()
  const version = lower.length > 3 ? bech32Alphabet.indexOf(lower[3]!) : -1
  const codec = version === 0 ? bech32 : bech32m
  const decoded = codec.decodeUnsafe(lower)
  if (decoded === undefined || decoded.prefix !== "bc" || decoded.words.length === 0) {
    return reject(`must be ${version === 0 ? "bech32" : "bech32m"} with a valid checksum`)
  }
  const program = bech32.fromWordsUnsafe(decoded.words.slice(1))
  if (program === undefined) return reject("must carry a whole witness program (padding bits are not zero)")
  if (version === 0 && (program.length === 20 || program.length === 32)) return accept(lower)
  if (version === 1 && program.length === 32) return accept(lower)
  return reject("must be P2WPKH, P2WSH (witness version 0) or P2TR (witness version 1, 32 bytes)")
}

const checkBitcoin = (address: string): AddressCheck => {
  if (/^bc1/i.test(address)) return checkSegwit(address)
  if (!/^[13]/.test(address)) return reject("must be a mainnet address: bc1..., 1... or 3...")
  const bytes = attempt(() => base58check.decode(address))
  if (bytes === undefined) return reject("must be base58check with a valid checksum")
  if (bytes.length !== 21 || !legacyVersions.has(bytes[0]!)) return reject("must be P2PKH (1...) or P2SH (3...)")
  return accept(address)
}

// ---------------------------------------------------------------------------------------------------------------
// Stellar: a StrKey ed25519 account id (G...): base32 (RFC 4648, upper case, no padding) of the version byte 6 << 3,
// the 32-byte key and its CRC16-XModem, little-endian (SEP-23). Muxed accounts (M...) are refused: they carry a
// 64-bit id that a payout would have to keep, and a deposit address is always a plain G... account. Other StrKey
// kinds (secret seeds S..., contracts C..., signed payloads P...) are not account ids.

const stellarAccountVersion = 6 << 3

/** CRC16-XModem (polynomial 0x1021, initial value 0, no reflection), StrKey's checksum. */
const crc16XModem = (bytes: Uint8Array): number => {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

const strKey = (version: number, key: Uint8Array): string => {
  const payload = concatBytes(Uint8Array.of(version), key)
  const crc = crc16XModem(payload)
  return base32nopad.encode(concatBytes(payload, Uint8Array.of(crc & 0xff, crc >> 8)))
}

const checkStellar = (address: string): AddressCheck => {
  if (address.startsWith("M")) return reject("must be an account id (G...); muxed accounts (M...) are not accepted")
  if (!address.startsWith("G")) return reject("must be an ed25519 account id (G...)")
  if (address.length !== 56) return reject("must be 56 characters")
  const bytes = attempt(() => base32nopad.decode(address))
  if (bytes === undefined) return reject("must be base32 in upper case (A-Z, 2-7) without padding")
  if (bytes.length !== 35 || bytes[0] !== stellarAccountVersion) return reject("must be an ed25519 account id (G...)")
  const crc = crc16XModem(bytes.subarray(0, 33))
  if (bytes[33] !== (crc & 0xff) || bytes[34] !== crc >> 8) return reject("must carry a valid checksum")
  // SEP-23: a StrKey is valid only if its key re-encodes to the same text.
  if (strKey(bytes[0]!, bytes.subarray(1, 33)) !== address) return reject("must be in canonical StrKey form")
  return accept(address)
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The one validator for an address on `chain`: what it accepts is above, per chain. INVALID_ADDRESS_FORMAT only for
 * an EVM address of the right shape whose letter case is neither all-lowercase nor EIP-55; VALIDATION_ERROR for
 * everything else.
 */
export const checkAddress = (chain: Chain, address: string): AddressCheck => {
  if (address.length === 0) return reject("must not be empty")
  if (address.length > MaxAddressLength) return reject(`must be at most ${MaxAddressLength} characters`)
  if (isEvmChain(chain)) return checkEvm(address)
  switch (chain) {
    case "solana":
      return checkSolana(address)
    case "tron":
      return checkTron(address)
    case "bitcoin":
      return checkBitcoin(address)
    case "stellar":
      return checkStellar(address)
  }
}

/** The ApiError for a refused address: the catalog code, and one errors[] entry at `pointer`. */
export const addressError = (chain: Chain, rejected: Extract<AddressCheck, { ok: false }>, pointer: string): Problem.ApiError =>
  // The spec allows errors[] on VALIDATION_ERROR only; INVALID_ADDRESS_FORMAT names the field in its detail.
  rejected.code === "INVALID_ADDRESS_FORMAT"
    ? Problem.apiError(rejected.code, `The EVM address at ${pointer} is neither all-lowercase nor correctly EIP-55 checksummed.`)
    : Problem.apiError(rejected.code, `The ${chain} address failed validation; see errors[].`, { errors: [{ pointer, detail: rejected.detail }] })

/** For handlers and engine operations: the normalized address, or the ApiError naming `pointer`. */
export const validAddress = (chain: Chain, address: string, pointer: string): Effect.Effect<string, Problem.ApiError> => {
  const checked = checkAddress(chain, address)
  return checked.ok ? Effect.succeed(checked.normalized) : Effect.fail(addressError(chain, checked, pointer))
}

// ---------------------------------------------------------------------------------------------------------------
// Deposit addresses.

const derivationInput = (chain: Chain, seed: string): Uint8Array => utf8ToBytes(`fos/deposit-address/${chain}/${seed}`)

/**
 * The sandbox deposit address of the wallet whose id is `seed`, on `chain`: deterministic, valid on the chain, in its
 * normalized form, and held by no one (see the module's comment). EVM: EIP-55 of the last 20 bytes of keccak-256;
 * Tron: base58check of 0x41 and those 20 bytes; Solana: base58 of SHA-256; Bitcoin: P2WPKH (bc1q) of the first 20
 * bytes of SHA-256; Stellar: the G... StrKey of SHA-256.
 */
export const depositAddress = (chain: Chain, seed: string): string => {
  const input = derivationInput(chain, seed)
  if (isEvmChain(chain)) return toChecksumAddress(bytesToHex(keccak_256(input).subarray(12)))
  switch (chain) {
    case "tron":
      return base58check.encode(concatBytes(Uint8Array.of(tronPrefix), keccak_256(input).subarray(12)))
    case "solana":
      return base58.encode(sha256(input))
    case "bitcoin":
      return bech32.encode("bc", [0, ...bech32.toWords(sha256(input).subarray(0, 20))])
    case "stellar":
      return strKey(stellarAccountVersion, sha256(input))
  }
}

/**
 * A transaction hash in `chain`'s own format for a sandbox transfer, derived from `seed` (the transaction's id):
 * `0x` and 64 hex digits on EVM chains, 64 hex digits on Bitcoin, Tron and Stellar, a base58 64-byte signature on
 * Solana. Like the addresses, nothing on any chain has it.
 */
export const sandboxTxHash = (chain: Chain, seed: string): string => {
  const digest = sha256(utf8ToBytes(`fos/tx-hash/${chain}/${seed}`))
  if (isEvmChain(chain)) return `0x${bytesToHex(digest)}`
  return chain === "solana" ? base58.encode(concatBytes(digest, sha256(digest))) : bytesToHex(digest)
}
