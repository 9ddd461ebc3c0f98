/**
 * ABA routing numbers, the US rails' bank identifier (spec, Errors: "detail ... never echoes the rejected value,
 * except that it may name a routing number"; the whitelist recipient on ach, fedwire, rtp and fednow, and the
 * us_domestic block of a virtual account's deposit instructions, carry one). The rule: nine digits, the first two a
 * Federal Reserve routing symbol (00-12 banks, 21-32 thrifts, 61-72 electronic, 80 traveller's cheques), and the
 * check digit: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 mod 10.
 *
 * One module for the rule both sides use: Recipients.ts checks a number a caller sends by it, and VirtualAccounts.ts
 * mints the numbers fos issues by it, so a number fos issues is one fos takes back (a whitelist recipient of a
 * virtual account's own details). A refusal names its cause: the form, the prefix or the check digit.
 */

/** Whether the first two digits are a Federal Reserve routing symbol. */
const isFederalReservePrefix = (prefix: number): boolean =>
  prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80

/** The check digit of a number's first eight digits (3, 7, 1 weights, mod 10). */
const checkDigit = (eight: ReadonlyArray<number>): number => {
  const d = eight
  const partial = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + d[2]! + d[5]!
  return (10 - (partial % 10)) % 10
}

/** What is wrong with a routing number, as a predicate of the field ("… is not a valid …"), or undefined. */
export const abaRoutingNumberProblem = (s: string): string | undefined => {
  const why = (cause: string) => `is not a valid ABA routing number (${cause})`
  if (!/^\d{9}$/.test(s)) return why("it must be 9 digits")
  if (!isFederalReservePrefix(Number(s.slice(0, 2)))) {
    return why(`its prefix ${s.slice(0, 2)} is not a Federal Reserve routing symbol: 00-12, 21-32, 61-72 or 80`)
  }
  const d = [...s].map(Number)
  return checkDigit(d.slice(0, 8)) === d[8] ? undefined : why("its check digit does not match")
}

export const isAbaRoutingNumber = (s: string): boolean => abaRoutingNumberProblem(s) === undefined

/** The Federal Reserve routing symbols, in order. */
const prefixes: ReadonlyArray<string> = Array.from({ length: 81 }, (_, n) => n)
  .filter(isFederalReservePrefix)
  .map((n) => String(n).padStart(2, "0"))

/**
 * A valid routing number from nine decimal digits drawn from a seed: the first two pick a Federal Reserve routing
 * symbol, the next six follow it, and the check digit closes it.
 */
export const mintAbaRoutingNumber = (digits: string): string => {
  const prefix = prefixes[Number(digits.slice(0, 2)) % prefixes.length]!
  const eight = prefix + digits.slice(2, 8)
  return eight + String(checkDigit([...eight].map(Number)))
}
