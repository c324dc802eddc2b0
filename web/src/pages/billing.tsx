import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { operations } from '../../../clients/typescript';
import { type Answer, api, describeError } from '../api';
import { currentUrl } from '../router';
import { ActionButton, formatDate, Notice, PageTitle } from '../ui';

type Billing = Answer<'getBilling'>;
type Usage = Extract<Answer<'postBilling'>, { usage: unknown }>['usage'];
type Plan = 'label' | 'solo' | 'collective' | 'network';
type BillingAction = operations['postBilling']['requestBody']['content']['application/json'];

const PLANS: { plan: Plan; price: string; agents: number }[] = [
  { plan: 'label', price: '29', agents: 1 },
  { plan: 'solo', price: '79', agents: 3 },
  { plan: 'collective', price: '199', agents: 10 },
  { plan: 'network', price: '499', agents: 100 },
];
const PALETTE = ['#0b5cad', '#c25400', '#1d6b2f', '#7a1fa2', '#a4161a', '#4a5360'];

/** Plan, checkout and portal redirects, credits, and the usage of the period per day and model. */
export function BillingPage() {
  const billing = useSignal<Billing | undefined>(undefined);
  const usage = useSignal<Usage | undefined>(undefined);
  const failure = useSignal<string | undefined>(undefined);
  const outcome = currentUrl.value.searchParams.get('checkout');
  const load = async () => {
    const [b, u] = await Promise.all([api.GET('/api/billing'), api.POST('/api/billing', { body: { action: 'get-usage' } })]);
    billing.value = b.data;
    usage.value = u.data && 'usage' in u.data ? u.data.usage : undefined;
  };
  useEffect(() => void load(), []);

  /** Starts a processor page (checkout, portal) through the API and goes there. */
  const redirectThrough = async (body: BillingAction) => {
    failure.value = undefined;
    const { data, error, response } = await api.POST('/api/billing', { body });
    if (data && 'url' in data) return location.assign(data.url);
    if (data && 'status' in data && data.status === 'pending')
      return void (failure.value = `Moving to ${data.plan}: the change applies when the payment is confirmed.`);
    failure.value = describeError(response.status, error);
  };

  const b = billing.value;
  return (
    <section>
      <PageTitle>Billing</PageTitle>
      {outcome === 'success' && <Notice kind="ok" message="Payment received: your plan is active once the processor confirms it (usually at once)." />}
      {outcome === 'cancelled' && <Notice message="Checkout cancelled: nothing was charged." />}
      <Notice kind="error" message={failure.value} />
      {!b ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          <div class="panel">
            <h2>Plan</h2>
            <dl class="facts">
              <dt>Plan</dt>
              <dd data-testid="plan">{b.active ? `${b.plan} (active)` : b.plan ? `${b.plan} (${b.status})` : 'none'}</dd>
              <dt>Renews</dt>
              <dd>{b.cancelAtPeriodEnd ? 'cancels at period end' : formatDate(b.currentPeriodEnd)}</dd>
              <dt>Agents</dt>
              <dd>{b.limits.agents}</dd>
              <dt>Skills per agent</dt>
              <dd>{b.limits.skills}</dd>
              <dt>Credits</dt>
              <dd>{b.credits}</dd>
            </dl>
            <h3>{b.active ? 'Change plan' : 'Subscribe'}</h3>
            <div class="row">
              {PLANS.map(({ plan, price, agents }) => (
                <ActionButton
                  key={plan}
                  class={plan === b.plan && b.active ? 'secondary' : undefined}
                  onAction={() => redirectThrough(b.active ? { action: 'change-plan', plan } : { action: 'create-checkout', plan })}
                >
                  {plan}: {price}/month, {agents} agent{agents === 1 ? '' : 's'}
                </ActionButton>
              ))}
            </div>
            <div class="row">
              <ActionButton class="secondary" onAction={() => redirectThrough({ action: 'billing-portal' })}>
                Billing portal (card, invoices, cancel)
              </ActionButton>
              {b.creditPacks.map((pack) => (
                <ActionButton key={pack.price} class="secondary" onAction={() => redirectThrough({ action: 'buy-credits', price: pack.price })}>
                  Buy {pack.credits} credits
                </ActionButton>
              ))}
            </div>
          </div>
          {usage.value && <UsagePanel usage={usage.value} />}
        </>
      )}
    </section>
  );
}

/** One uPlot chart: a series per model over the days of the period. */
function DayChart({
  title,
  days,
  models,
  period,
  figureOf,
  format = String,
}: {
  title: string;
  days: string[];
  models: string[];
  /** The billing period: the x axis spans it, so one day of usage sits where it belongs. */
  period: [string, string];
  figureOf: (day: string, model: string) => number;
  format?: (value: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current || days.length === 0) return;
    const x = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const data: uPlot.AlignedData = [x, ...models.map((m) => days.map((d) => figureOf(d, m)))];
    const width = Math.min(720, box.current.clientWidth || 320);
    const plot = new uPlot(
      {
        title,
        width,
        height: 220,
        scales: { x: { time: true, range: () => [Date.parse(period[0]) / 1000, Date.parse(period[1]) / 1000] } },
        axes: [{}, { size: 70, values: (_u, splits) => splits.map(format) }],
        series: [
          {},
          ...models.map((m, i) => ({
            label: m,
            stroke: PALETTE[i % PALETTE.length],
            width: 2,
            points: { show: true, size: 8 },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : format(v)),
          })),
        ],
      },
      data,
      box.current,
    );
    return () => plot.destroy();
  }, [days.join(), models.join()]);
  return <div class="chart" ref={box} role="img" aria-label={`${title}: the table below has the same figures`} />;
}

function UsagePanel({ usage }: { usage: Usage }) {
  const days = [...new Set(usage.days.map((d) => d.day))];
  const models = [...new Set(usage.days.map((d) => d.model))];
  const period: [string, string] = [usage.periodStart, usage.periodEnd];
  const cell = (day: string, model: string) => usage.days.find((d) => d.day === day && d.model === model);
  return (
    <div class="panel">
      <h2>Usage this period</h2>
      <p>
        {formatDate(usage.periodStart)} to {formatDate(usage.periodEnd)}: <span data-testid="total-tokens">{usage.tokens.total}</span> tokens, $
        {usage.costUsd.toFixed(4)}, {usage.allowance.usedCredits} of {usage.allowance.includedCredits} included credits used.
      </p>
      {days.length === 0 ? (
        <p>No model calls yet this period.</p>
      ) : (
        <>
          <DayChart title="Tokens per day" days={days} models={models} period={period} figureOf={(d, m) => cell(d, m)?.totalTokens ?? 0} />
          <DayChart
            title="Cost per day (USD)"
            days={days}
            models={models}
            period={period}
            figureOf={(d, m) => cell(d, m)?.costUsd ?? 0}
            format={(v) => (v === 0 ? '0' : v.toPrecision(2))}
          />
        </>
      )}
      <table class="responsive">
        <caption>Per day and model</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Model</th>
            <th scope="col">Calls</th>
            <th scope="col">Tokens</th>
            <th scope="col">Cost (USD)</th>
          </tr>
        </thead>
        <tbody>
          {usage.days.map((d) => (
            <tr key={`${d.day}${d.model}`}>
              <td>{d.day}</td>
              <td>{d.model}</td>
              <td>{d.calls}</td>
              <td>{d.totalTokens}</td>
              <td>{d.costUsd.toFixed(6)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
