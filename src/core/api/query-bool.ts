// Boolean query parameters read as Kubernetes reads them (Go's strconv.ParseBool), so `watch=True` from the Python client and `follow=1` mean what they say.
import { BadRequestError } from '../errors.js';

const TRUE_WORDS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** The parameter's value, undefined when absent or empty; a word Go would not parse is a 400. */
export function parseQueryBool(value: string | null | undefined, name: string): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (TRUE_WORDS.has(value)) return true;
  if (FALSE_WORDS.has(value)) return false;
  throw new BadRequestError(`invalid value for query parameter ${name}: "${value}" is not a boolean (true, false, 1 or 0)`);
}

/** True only for a true word; absent, empty and unreadable values are false (for callers that must not throw). */
export function isTrueWord(value: string | null | undefined): boolean {
  return value !== undefined && value !== null && TRUE_WORDS.has(value);
}
