import * as z from 'zod/mini';
import type { SkillActionBodies } from './index';
import { lazySchema } from '../route';
import { EVM_ADDRESS } from '../evm';

/** Addresses tracked per account besides its own wallet. */
export const TREASURY_MAX_WALLETS = 50;

const Address = lazySchema(() => z.string().check(z.regex(EVM_ADDRESS, 'a 0x-prefixed 20-byte hex address')));

export const treasuryBodies = lazySchema(() => ({
  get_balances: z
    .strictObject({ action: z.literal('get_balances') })
    .check(z.describe("native and configured token balances of the account's wallet and every tracked address, with totals per asset")),
  add_wallet: z.strictObject({
    action: z.literal('add_wallet'),
    address: Address(),
    label: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))),
  }),
  remove_wallet: z.strictObject({ action: z.literal('remove_wallet'), address: Address() }),
  list_wallets: z.strictObject({ action: z.literal('list_wallets') }),
}));

export const treasuryActions: SkillActionBodies = { bodies: treasuryBodies, example: { action: 'get_balances' } };
