import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { getAddress } from 'viem';
import { api } from '../api';
import { describeError } from '../errors';
import { currentUrl, Link, navigate } from '../router';
import { loadSession } from '../state';
import { Field, Notice, PageTitle } from '../ui';

const after = () => currentUrl.value.searchParams.get('next') ?? '/';

/** Which OAuth providers are configured: a public, cacheable answer that starts no flow. */
function useOAuthProviders() {
  const providers = useSignal<string[]>([]);
  useEffect(() => {
    void api.GET('/api/auth/providers').then(({ data }) => {
      providers.value = data?.oauthProviders ?? [];
    });
  }, []);
  return { codehost: providers.value.includes('codehost'), webid: providers.value.includes('webid') };
}

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

/** Sign-In with Ethereum through an injected EIP-1193 wallet: the server's nonce, chain 0x2105, personal_sign. */
async function signInWithWallet(): Promise<string | undefined> {
  const wallet = (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
  if (!wallet) return 'No browser wallet found: install one (an EIP-1193 wallet) or sign in with your email.';
  const [account] = (await wallet.request({ method: 'eth_requestAccounts' })) as string[];
  if (!account) return 'The wallet shared no account.';
  const address = getAddress(account);
  const { data: nonce, error, response } = await api.GET('/api/auth/nonce');
  if (!nonce) return describeError(response.status, error);
  const message = [
    `${location.host} wants you to sign in with your Ethereum account:`,
    address,
    '',
    'Sign in to the agent platform.',
    '',
    `URI: ${location.origin}`,
    'Version: 1',
    'Chain ID: 8453',
    `Nonce: ${nonce.nonce}`,
    `Issued At: ${new Date().toISOString()}`,
  ].join('\n');
  const hex = `0x${Array.from(new TextEncoder().encode(message), (b) => b.toString(16).padStart(2, '0')).join('')}`;
  const signature = (await wallet.request({ method: 'personal_sign', params: [hex, address] })) as string;
  const signedIn = await api.POST('/api/auth/callback/wallet', { body: { message, signature }, headers: { accept: 'application/json' } });
  return signedIn.response.ok ? undefined : describeError(signedIn.response.status, signedIn.error);
}

export function SignIn() {
  const email = useSignal('');
  const password = useSignal('');
  const failure = useSignal<string | undefined>(undefined);
  const info = useSignal<string | undefined>(undefined);
  const oauth = useOAuthProviders();
  const done = async () => {
    await loadSession();
    navigate(after(), true);
  };
  return (
    <section class="narrow">
      <PageTitle>Sign in</PageTitle>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          const { response, error } = await api.POST('/api/auth/callback/credentials', { body: { email: email.value, password: password.value } });
          if (response.ok) return done();
          failure.value = response.status === 401 ? 'That email and password do not match an account.' : describeError(response.status, error);
        }}
      >
        <Field label="Email" type="email" autoComplete="email" required value={email.value} onValue={(v) => (email.value = v)} />
        <Field label="Password" type="password" autoComplete="current-password" required value={password.value} onValue={(v) => (password.value = v)} />
        <Notice kind="error" message={failure.value} />
        <button type="submit">Sign in</button>
      </form>
      <div class="row">
        {oauth.codehost && (
          <a class="button secondary" href="/api/auth/oauth-codehost">
            Sign in with the code host
          </a>
        )}
        {oauth.webid && (
          <a class="button secondary" href="/api/auth/oauth-webid">
            Sign in with web identity
          </a>
        )}
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            failure.value = undefined;
            try {
              const problem = await signInWithWallet();
              if (problem) failure.value = problem;
              else await done();
            } catch (err) {
              failure.value = `The wallet refused: ${(err as Error).message}`;
            }
          }}
        >
          Sign in with a wallet
        </button>
      </div>
      <p>
        New here? <Link href="/sign-up">Create an account</Link>
      </p>
      <details>
        <summary>Forgot your password?</summary>
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            const { response, error } = await api.POST('/api/auth/forgot-password', { body: { email: email.value } });
            info.value = response.ok ? 'If an account uses that address, a reset link is on its way.' : describeError(response.status, error);
          }}
        >
          <p>We email a link to the address in the Email field above.</p>
          <button type="submit" class="secondary">
            Email me a reset link
          </button>
          <Notice message={info.value} />
        </form>
      </details>
    </section>
  );
}

export function SignUp() {
  const email = useSignal('');
  const password = useSignal('');
  const name = useSignal('');
  const failure = useSignal<string | undefined>(undefined);
  return (
    <section class="narrow">
      <PageTitle>Create an account</PageTitle>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          failure.value = undefined;
          const body = { email: email.value, password: password.value, ...(name.value ? { name: name.value } : {}) };
          const registered = await api.POST('/api/register', { body });
          if (!registered.response.ok) {
            failure.value =
              registered.response.status === 409
                ? 'An account already uses that email: sign in instead.'
                : describeError(registered.response.status, registered.error);
            return;
          }
          const signedIn = await api.POST('/api/auth/callback/credentials', { body: { email: email.value, password: password.value } });
          if (!signedIn.response.ok) return navigate('/sign-in');
          await loadSession();
          navigate('/', true);
        }}
      >
        <Field label="Email" type="email" autoComplete="email" required value={email.value} onValue={(v) => (email.value = v)} />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          minLength={8}
          required
          hint="At least 8 characters."
          value={password.value}
          onValue={(v) => (password.value = v)}
        />
        <Field label="Name (optional)" autoComplete="name" value={name.value} onValue={(v) => (name.value = v)} />
        <Notice kind="error" message={failure.value} />
        <button type="submit">Create account</button>
      </form>
      <p>
        Already have one? <Link href="/sign-in">Sign in</Link>
      </p>
    </section>
  );
}

/** The page the confirmation email links to (`/verify-email?token=`). */
export function VerifyEmail() {
  const outcome = useSignal<{ ok: boolean; text: string } | undefined>(undefined);
  useEffect(() => {
    const token = currentUrl.value.searchParams.get('token') ?? '';
    void api.POST('/api/auth/verify-email', { body: { token } }).then(({ response, error }) => {
      outcome.value = response.ok
        ? { ok: true, text: 'Your email address is confirmed.' }
        : { ok: false, text: `This link did not work: ${describeError(response.status, error)}` };
      if (response.ok) void loadSession();
    });
  }, []);
  return (
    <section class="narrow">
      <PageTitle>Confirm your email</PageTitle>
      {outcome.value ? <Notice kind={outcome.value.ok ? 'ok' : 'error'} message={outcome.value.text} /> : <p role="status">Confirming…</p>}
      <p>
        <Link href="/">Go to your agents</Link>
      </p>
    </section>
  );
}

/** The page the password-reset email links to (`/reset-password?token=`). */
export function ResetPassword() {
  const password = useSignal('');
  const outcome = useSignal<{ ok: boolean; text: string } | undefined>(undefined);
  return (
    <section class="narrow">
      <PageTitle>Choose a new password</PageTitle>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const token = currentUrl.value.searchParams.get('token') ?? '';
          const { response, error } = await api.POST('/api/auth/reset-password', { body: { token, password: password.value } });
          outcome.value = response.ok ? { ok: true, text: 'Password changed: sign in with it.' } : { ok: false, text: describeError(response.status, error) };
        }}
      >
        <Field
          label="New password"
          type="password"
          autoComplete="new-password"
          minLength={6}
          required
          hint="At least 6 characters."
          value={password.value}
          onValue={(v) => (password.value = v)}
        />
        <button type="submit">Set password</button>
      </form>
      {outcome.value && <Notice kind={outcome.value.ok ? 'ok' : 'error'} message={outcome.value.text} />}
      {outcome.value?.ok && (
        <p>
          <Link href="/sign-in">Sign in</Link>
        </p>
      )}
    </section>
  );
}
