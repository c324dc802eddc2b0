import { randomInt } from 'node:crypto';
import { formatUnits, parseUnits } from 'viem';
import { describe, expect, it } from 'vitest';
import { decimalToUnits, minorToAmount, TIP20_DECIMALS } from '#domain/payments/gateway-card';

/** The card price's own decimal arithmetic gives exactly what viem's did, on every input the settings accept. */
const decimalsAccepted = (): string[] => {
  const fixed = ['0', '1', '0.1', '0.01', '0.000001', '1.234561', '1.5', '0.79', '2', '10.000000', '999999999.999999', '007.5'];
  const random = Array.from({ length: 2000 }, () => {
    const whole = String(randomInt(0, 1_000_000_000));
    const places = randomInt(0, 7);
    return places ? `${whole}.${String(randomInt(0, 10 ** places)).padStart(places, '0')}` : whole;
  });
  return [...fixed, ...random];
};

describe('gateway card price units', () => {
  it('decimalToUnits equals parseUnits for every decimal with at most 6 places', () => {
    for (const value of decimalsAccepted()) expect([value, decimalToUnits(value, TIP20_DECIMALS)]).toEqual([value, parseUnits(value, TIP20_DECIMALS)]);
  });

  it('refuses what parseUnits would round or read otherwise, instead of guessing', () => {
    for (const value of ['0.0000001', '1.2345678', '', '.5', '5.', '-1', '1e-6', '0x10', ' 1', '1,5']) {
      expect(() => decimalToUnits(value, TIP20_DECIMALS), value).toThrow(RangeError);
    }
  });

  it('minorToAmount equals Number(formatUnits(minor, 2)) for every price up to 2000.00 and random ones up to the 100,000,000 cap', () => {
    const minors = [...Array.from({ length: 200_001 }, (_, i) => i), ...Array.from({ length: 5000 }, () => randomInt(0, 100_000_001))];
    const mismatches = minors.filter((minor) => minorToAmount(minor) !== Number(formatUnits(BigInt(minor), 2)));
    expect(mismatches).toEqual([]);
  });
});
