import { DECIMAL_PATTERN } from '#contract/skill-actions/royalty-tracker';

/**
 * Exact decimal money: amounts travel as decimal strings and are added as integers of a fixed
 * scale (BigInt), so no binary floating point ever touches a total.
 */
export const MONEY_SCALE_DIGITS = 6;
const SCALE = 10n ** BigInt(MONEY_SCALE_DIGITS);

export function toMicros(decimal: string): bigint {
  if (!DECIMAL_PATTERN.test(decimal)) throw new Error(`not a decimal amount: ${decimal}`);
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = (negative ? decimal.slice(1) : decimal).split('.');
  const micros = BigInt(whole!) * SCALE + BigInt(fraction.padEnd(MONEY_SCALE_DIGITS, '0'));
  return negative ? -micros : micros;
}

/** `fractionDigits` (0..6) rounds half away from zero; the default keeps every digit. */
export function fromMicros(micros: bigint, fractionDigits = MONEY_SCALE_DIGITS): string {
  const negative = micros < 0n;
  let abs = negative ? -micros : micros;
  const drop = 10n ** BigInt(MONEY_SCALE_DIGITS - fractionDigits);
  abs = (abs + drop / 2n) / drop;
  const unit = 10n ** BigInt(fractionDigits);
  const whole = abs / unit;
  const fraction = fractionDigits ? '.' + (abs % unit).toString().padStart(fractionDigits, '0') : '';
  return `${negative && abs !== 0n ? '-' : ''}${whole}${fraction}`;
}

/** Whole cents, rounded half away from zero. */
export const microsToCents = (micros: bigint): bigint => BigInt(fromMicros(micros, 2).replace('.', ''));
