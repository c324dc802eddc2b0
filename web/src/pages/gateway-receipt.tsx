import { currentUrl } from '../router';
import { CopyButton, PageTitle } from '../ui';

/**
 * The return page of a one-off gateway card checkout (functions/billing/checkout.ts,
 * GATEWAY_RECEIPT_PAGE). The receipt token is in the fragment, which never reaches a server:
 * only this page sees it, so it is public (the payer may have no account).
 */
export function GatewayReceipt() {
  const url = currentUrl.value;
  const plugin = url.searchParams.get('plugin') ?? 'generate-text';
  if (url.searchParams.get('checkout') !== 'success')
    return (
      <section class="narrow">
        <PageTitle>Gateway call not bought</PageTitle>
        <p>The checkout was cancelled: nothing was charged.</p>
      </section>
    );
  const receipt = new URLSearchParams(url.hash.slice(1)).get('receipt');
  if (!receipt)
    return (
      <section class="narrow">
        <PageTitle>Gateway call paid</PageTitle>
        <p role="alert">This link holds no receipt token: open the exact address the checkout returned you to.</p>
      </section>
    );
  const example = `curl -X POST ${location.origin}/api/v1/gateway \\\n  -H 'content-type: application/json' \\\n  -H 'authorization: Bearer ${receipt}' \\\n  -d '{"plugin":"${plugin}", …}'`;
  return (
    <section class="narrow">
      <PageTitle>Gateway call paid</PageTitle>
      <p>
        This receipt token pays one <code>{plugin}</code> call, once, within 24 hours. Keep it: it is shown only here.
      </p>
      <p class="row">
        <code data-testid="receipt">{receipt}</code>
        <CopyButton value={receipt} label="Copy receipt token" />
      </p>
      <h2>How to use it</h2>
      <p>
        Send it as <code>Authorization: Bearer {receipt}</code> on <code>POST /api/v1/gateway</code>. If the call fails, the receipt is not spent.
      </p>
      <pre>
        <code>{example}</code>
      </pre>
    </section>
  );
}
