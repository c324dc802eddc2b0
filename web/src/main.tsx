import 'uplot/dist/uPlot.min.css';
import './styles.css';
import type { ComponentChildren } from 'preact';
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { ResetPassword, SignIn, SignUp, VerifyEmail } from './pages/auth';
import { AgentPage } from './pages/agent';
import { BillingPage } from './pages/billing';
import { Dashboard } from './pages/dashboard';
import { GatewayReceipt } from './pages/gateway-receipt';
import { ApiKeys } from './pages/keys';
import { Marketplace } from './pages/marketplace';
import { OAuthConsent } from './pages/oauth-consent';
import { SettingsPage } from './pages/settings';
import { WalletPage } from './pages/wallet';
import { currentUrl, Link, matchPath, navigate } from './router';
import { loadLocalMode } from './local-mode';
import { loadSession, me, signOut } from './state';
import { NotFound } from './ui';

interface Route {
  path: string;
  /** Reachable without a session (the emails' links, sign-in itself). */
  public?: boolean;
  render(params: Record<string, string>): ComponentChildren;
}

const ROUTES: Route[] = [
  { path: '/sign-in', public: true, render: () => <SignIn /> },
  { path: '/sign-up', public: true, render: () => <SignUp /> },
  { path: '/verify-email', public: true, render: () => <VerifyEmail /> },
  { path: '/reset-password', public: true, render: () => <ResetPassword /> },
  // Where a one-off gateway card checkout returns (functions/billing/checkout.ts); the payer may have no account.
  { path: '/gateway/receipt', public: true, render: () => <GatewayReceipt /> },
  { path: '/', render: () => <Dashboard /> },
  { path: '/agents/:id', render: (p) => <AgentPage id={p.id!} /> },
  { path: '/marketplace', render: () => <Marketplace /> },
  { path: '/keys', render: () => <ApiKeys /> },
  // The path the card processor returns to after checkout and the portal (functions/http/billing).
  { path: '/settings/billing', render: () => <BillingPage /> },
  { path: '/wallet', render: () => <WalletPage /> },
  { path: '/settings', render: () => <SettingsPage /> },
  // The authorization endpoint of the MCP server's OAuth (a signed-in session decides).
  { path: '/oauth/authorize', render: () => <OAuthConsent /> },
];

const NAV = [
  { href: '/', label: 'Agents' },
  { href: '/marketplace', label: 'Marketplace' },
  { href: '/keys', label: 'API keys' },
  { href: '/settings/billing', label: 'Billing' },
  { href: '/wallet', label: 'Wallet' },
  { href: '/settings', label: 'Settings' },
];

function Header() {
  const path = currentUrl.value.pathname;
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Link href="/" class="brand">
        Agent platform
      </Link>
      {me.value && (
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={path === item.href || (item.href === '/' && path.startsWith('/agents/')) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
            <li>
              <button
                type="button"
                class="link"
                onClick={async () => {
                  await signOut();
                  navigate('/sign-in');
                }}
              >
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      )}
    </header>
  );
}

function App() {
  const url = currentUrl.value;
  useEffect(() => {
    void loadSession();
    void loadLocalMode();
  }, []);
  const found = ROUTES.map((route) => ({ route, params: matchPath(route.path, url.pathname) })).find((m) => m.params);
  let page: ComponentChildren;
  if (me.value === undefined) page = <p role="status">Loading…</p>;
  else if (!found) page = <NotFound />;
  else if (!found.route.public && !me.value) page = <Redirect to={`/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`} />;
  else page = found.route.render(found.params!);
  return (
    <>
      <Header />
      <main id="main" key={url.pathname}>
        {page}
      </main>
    </>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

render(<App />, document.getElementById('app')!);
