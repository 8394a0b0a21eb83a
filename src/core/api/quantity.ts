// Kubernetes resource quantities ('500m', '1.5Gi', '1e3'): parsing to numbers, formatting back, and the schema kinds use.
import * as v from 'valibot';
import { mapSchema } from './meta.js';

/** The regular expression Kubernetes quotes in its own error message. */
export const QUANTITY_PATTERN = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

/** What we actually accept: a decimal number, then one suffix (or an exponent). */
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_EXPONENTS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** A quantity split into a decimal mantissa and either a power of ten or a power of two. */
interface ParsedQuantity {
  mantissa: string;
  base: 10 | 2;
  exponent: number;
}

function split(input: string): ParsedQuantity {
  const m = QUANTITY.exec(input);
  if (!m)
    throw new Error(
      `invalid quantity "${input.length > 40 ? `${input.slice(0, 40)}...` : input}": quantities must match the regular expression '${QUANTITY_PATTERN}'`,
    );
  const [, mantissa, suffix = ''] = m;
  if (suffix in BINARY_EXPONENTS) return { mantissa, base: 2, exponent: BINARY_EXPONENTS[suffix] };
  if (suffix in DECIMAL_EXPONENTS) return { mantissa, base: 10, exponent: DECIMAL_EXPONENTS[suffix] };
  return { mantissa, base: 10, exponent: Number(suffix.slice(1)) };
}

/** Scales a parsed quantity by an extra power of ten, going through the decimal string so that `0.1` times 1000 is exactly 100. */
function toNumber(q: ParsedQuantity, extraDecimalExponent = 0): number {
  if (q.base === 10) return Number(`${q.mantissa}e${q.exponent + extraDecimalExponent}`);
  return Number(`${q.mantissa}e${extraDecimalExponent}`) * 2 ** q.exponent;
}

/**
 * The value of a quantity in base units: cores for CPU (`'500m'` -> 0.5), bytes for memory
 * (`'1Gi'` -> 1073741824). Numbers pass through. Throws on anything that is not a quantity.
 */
export function parseQuantity(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new Error(`invalid quantity ${input}: must be a finite number`);
    return input;
  }
  const value = toNumber(split(input));
  if (!Number.isFinite(value)) throw new Error(`invalid quantity "${input}": out of range`);
  return value;
}

/** True when the input parses as a quantity. */
export function isQuantity(input: unknown): input is string | number {
  if (typeof input === 'number') return Number.isFinite(input);
  if (typeof input !== 'string') return false;
  try {
    parseQuantity(input);
    return true;
  } catch {
    return false;
  }
}

/** The value in thousandths, rounded up as Kubernetes' MilliValue does (`'500m'` -> 500, `'2'` -> 2000). */
export function toMilli(input: string | number): number {
  const milli = toNumber(split(String(input)), 3);
  // The decimal-string scaling above is exact for decimal inputs; round away tiny binary noise before ceiling.
  const rounded = Math.round(milli);
  return Math.abs(milli - rounded) < 1e-9 ? rounded : Math.ceil(milli);
}

export interface FormatQuantityOptions {
  /** Use power-of-two suffixes (Ki, Mi, ...) where the value is a whole multiple of 1024, as memory is shown. */
  binary?: boolean;
}

const DECIMAL_SUFFIXES = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** Strips factors of `step` from an integer, returning the reduced value and how many were removed. */
function reduce(value: bigint, step: bigint, max: number): [bigint, number] {
  let n = 0;
  while (value !== 0n && value % step === 0n && n < max) {
    value /= step;
    n++;
  }
  return [value, n];
}

/**
 * Kubernetes' canonical form: the largest suffix that keeps the mantissa whole
 * (0.5 -> '500m', 1500 -> '1500', 2000 -> '2k', 1536 MiB in bytes with binary -> '1536Mi').
 * Fractions finer than a nanounit are rounded up, as Kubernetes does.
 */
export function formatQuantity(value: number, options: FormatQuantityOptions = {}): string {
  if (!Number.isFinite(value)) throw new Error(`cannot format ${value} as a quantity`);
  if (value === 0) return '0';
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  if (Number.isInteger(abs)) {
    const whole = BigInt(abs);
    if (options.binary) {
      const [m, n] = reduce(whole, 1024n, BINARY_SUFFIXES.length - 1);
      if (n > 0) return `${sign}${m}${BINARY_SUFFIXES[n]}`;
    }
    const [m, n] = reduce(whole, 1000n, DECIMAL_SUFFIXES.length - 1);
    return `${sign}${m}${DECIMAL_SUFFIXES[n]}`;
  }
  for (const [suffix, exponent] of [
    ['m', 3],
    ['u', 6],
  ] as const) {
    const scaled = toNumber(split(String(abs)), exponent);
    if (Number.isInteger(scaled)) return `${sign}${scaled}${suffix}`;
  }
  return `${sign}${Math.ceil(toNumber(split(String(abs)), 9))}n`;
}

/** A quantity as written in manifests: a string such as `'250m'` or a plain number. */
export const quantitySchema = v.union(
  [
    v.pipe(v.number(), v.finite()),
    v.pipe(
      v.string(),
      v.check((s) => isQuantity(s), `quantities must match the regular expression '${QUANTITY_PATTERN}'`),
    ),
  ],
  'must be a quantity (a string such as "500m" or "1Gi", or a number)',
);

/** Resource names: `cpu`, `memory`, or a qualified name such as `nvidia.com/gpu`. */
const RESOURCE_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** A map of resource name to non-negative quantity (requests, limits, capacity, allocatable). */
export const resourceListSchema = mapSchema(
  v.pipe(v.string(), v.regex(RESOURCE_NAME, 'must be a standard resource name such as cpu or memory, or a qualified name')),
  v.pipe(
    quantitySchema,
    v.check((q) => !isQuantity(q) || parseQuantity(q) >= 0, 'must be greater than or equal to 0'),
  ),
);
export type ResourceList = v.InferOutput<typeof resourceListSchema>;
