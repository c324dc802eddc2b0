import { chainClient } from '#adapters/chain';
import { skillTokensConfig, walletConfig } from '#platform/config';
import { TREASURY_MAX_WALLETS, treasuryBodies as bodies } from '#contract/skill-actions/treasury';
import { addTrackedWallet, listTrackedWallets, removeTrackedWallet } from '#data/skills/treasury';
import { getWalletSummary } from '#data/wallets';
import { notFound } from '#platform/errors';
import { logger } from '#http/logger';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Balances of the account's own wallet and the addresses it tracks, read from the chain through
 * the chain adapter (WALLET_RPC_URL): the native coin and the ERC-20 tokens of TREASURY_TOKENS.
 * Totals are exact (integer base units added, then formatted). A wallet whose balances cannot be
 * read is reported `unavailable` and left out of the totals, which then say `complete: false`.
 */
const NATIVE = { symbol: 'ETH', decimals: 18 };

interface Holding {
  address: `0x${string}`;
  label: string | null;
  source: 'account' | 'tracked';
}

type Readout = { status: 'ok'; units: Record<string, bigint> } | { status: 'unavailable' };

async function readHolding(address: `0x${string}`): Promise<Readout> {
  const { rpcUrl, rpcTimeoutMs } = walletConfig();
  if (!rpcUrl) return { status: 'unavailable' };
  const { erc20Abi, getBalance, readContract } = await import('../viem-payments');
  const client = await chainClient(rpcUrl, rpcTimeoutMs);
  try {
    const tokens = skillTokensConfig().treasuryTokens;
    const [native, ...tokenUnits] = await Promise.all([
      getBalance(client, { address }),
      ...tokens.map((t) => readContract(client, { address: t.address, abi: erc20Abi, functionName: 'balanceOf', args: [address] })),
    ]);
    return { status: 'ok', units: { [NATIVE.symbol]: native, ...Object.fromEntries(tokens.map((t, i) => [t.symbol, tokenUnits[i]!])) } };
  } catch (err) {
    logger().warn('treasury balance unavailable', { reason: (err as Error)?.name ?? 'unknown' });
    return { status: 'unavailable' };
  }
}

const assets = () => [NATIVE, ...skillTokensConfig().treasuryTokens];
const formatting = (formatUnits: (value: bigint, decimals: number) => string) => (units: Record<string, bigint>) =>
  Object.fromEntries(assets().map((a) => [a.symbol, formatUnits(units[a.symbol] ?? 0n, a.decimals)]));

async function holdings(userId: string): Promise<Holding[]> {
  const [own, tracked] = await Promise.all([getWalletSummary(userId), listTrackedWallets(userId)]);
  const list: Holding[] = own ? [{ address: own.address, label: 'account wallet', source: 'account' }] : [];
  const { getAddress } = await import('../viem-payments');
  for (const t of tracked) {
    const address = getAddress(t.address);
    if (!list.some((h) => h.address.toLowerCase() === address.toLowerCase())) list.push({ address, label: t.label ?? null, source: 'tracked' });
  }
  return list;
}

export const skill: SkillModule = {
  name: 'treasury',
  actions: {
    get_balances: action(bodies().get_balances, async (call) => {
      const list = await holdings(call.userId);
      const readouts = await Promise.all(list.map((h) => readHolding(h.address)));
      const totals: Record<string, bigint> = Object.fromEntries(assets().map((a) => [a.symbol, 0n]));
      const format = formatting((await import('../viem-payments')).formatUnits);
      const wallets = list.map((h, i) => {
        const r = readouts[i]!;
        if (r.status === 'ok') for (const symbol of Object.keys(totals)) totals[symbol]! += r.units[symbol] ?? 0n;
        return { ...h, status: r.status, balances: r.status === 'ok' ? format(r.units) : null };
      });
      return {
        network: walletConfig().network,
        assets: assets().map((a) => a.symbol),
        wallets,
        totals: format(totals),
        complete: readouts.every((r) => r.status === 'ok'),
        ...(walletConfig().rpcUrl ? {} : { message: 'no chain RPC is configured (WALLET_RPC_URL): balances are unavailable' }),
      };
    }),
    add_wallet: action(bodies().add_wallet, async (call, body) => {
      const { getAddress } = await import('../viem-payments');
      const address = getAddress(body.address.toLowerCase());
      await addTrackedWallet(call.userId, { address, label: body.label, addedAt: call.now.toISOString() }, TREASURY_MAX_WALLETS);
      return { wallet: { address, label: body.label ?? null, source: 'tracked' } };
    }),
    remove_wallet: action(bodies().remove_wallet, async (call, body) => {
      if (!(await removeTrackedWallet(call.userId, body.address))) throw notFound('this address is not tracked');
      const { getAddress } = await import('../viem-payments');
      return { removed: getAddress(body.address.toLowerCase()) };
    }),
    list_wallets: action(bodies().list_wallets, async (call) => {
      const list = await holdings(call.userId);
      return { wallets: list, count: list.length };
    }),
  },
};
