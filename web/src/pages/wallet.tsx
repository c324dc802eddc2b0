import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from '../api';
import { describeError } from '../errors';
import { ActionButton, CopyButton, formatDate, Notice, PageTitle } from '../ui';

/** The user-wallet forms of `GET /api/wallet` (the hosted-wallet form has none of these fields). */
interface WalletView {
  address?: string | null;
  balance?: string;
  network?: string;
  hasWallet?: boolean;
  createdAt?: string;
  message?: string;
}

/** The account's wallet: create it once, then its address and balance (keys never leave the server). */
export function WalletPage() {
  const wallet = useSignal<WalletView | undefined>(undefined);
  const note = useSignal<{ kind: 'ok' | 'error'; text: string } | undefined>(undefined);
  const load = async () => {
    wallet.value = (await api.GET('/api/wallet')).data as WalletView | undefined;
  };
  useEffect(() => void load(), []);
  const w = wallet.value;
  return (
    <section>
      <PageTitle>Wallet</PageTitle>
      {!w ? (
        <p role="status">Loading…</p>
      ) : w.hasWallet && w.address ? (
        <dl class="facts panel">
          <dt>Address</dt>
          <dd class="row">
            <code>{w.address}</code>
            <CopyButton value={w.address} label="Copy address" />
          </dd>
          <dt>Balance</dt>
          <dd>{w.balance}</dd>
          <dt>Network</dt>
          <dd>{w.network}</dd>
          <dt>Created</dt>
          <dd>{formatDate(w.createdAt)}</dd>
        </dl>
      ) : (
        <div class="panel">
          <p class="empty">You have no wallet yet. Create one to hold and send USDC from your agents; it takes a moment and costs nothing.</p>
          <ActionButton
            onAction={async () => {
              const { response, error } = await api.POST('/api/wallet', { body: { action: 'create' } });
              note.value = response.ok ? { kind: 'ok', text: 'Wallet created.' } : { kind: 'error', text: describeError(response.status, error) };
              await load();
            }}
          >
            Create wallet
          </ActionButton>
        </div>
      )}
      <Notice kind={note.value?.kind} message={note.value?.text} />
      <p class="hint">The private key is kept encrypted on the server and is never shown or exported.</p>
    </section>
  );
}
