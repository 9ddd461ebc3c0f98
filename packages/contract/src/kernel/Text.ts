/**
 * English for generated texts (problem details, errors[] entries): the one place that picks "a" or "an".
 */

/**
 * `word` after its indefinite article, by the word's first sound: "an" before a vowel sound ("an identity", "an
 * order", "an external_crypto"), "a" before a consonant sound, including the "you" sound of u-words such as user,
 * unique or usual ("a user id").
 */
export const withArticle = (word: string): string => `${/^(?:[aeio]|u(?!s|ni|ti|re))/i.test(word) ? "an" : "a"} ${word}`
