import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { operations } from '../../../clients/typescript';
import { type Answer, api } from '../api';
import { type ExplainedError, explainError } from '../errors';
import { currentUrl } from '../router';
import { ActionButton, ConfirmDialog, ErrorNotice, formatDay, formatMoney, Notice, PageTitle } from '../ui';

type Billing = Answer<'getBilling'>;
type Usage = Extract<Answer<'postBilling'>, { usage: unknown }>['usage'];
type Offer = Billing['plans'][number];
type BillingAction = operations['postBilling']['requestBody']['content']['application/json'];

const usd = (v: number) =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: v !== 0 && Math.abs(v) < 1 ? 4 : 2 }).format(v);
const priceOf = (offer: Offer) => `${formatMoney(offer.price.amount, offer.price.currency)}/${offer.price.interval}`;

/** The plan line: what is in force, in words (no plan reads as such, never "none (none)"). */
function planLine(b: Billing): string {
  if (b.active) return `${b.plan} (active)`;
  if (b.plan === 'none') return 'No plan yet';
  return `${b.plan} (${b.status === 'none' ? 'not active' : b.status.replaceAll('_', ' ')})`;
}

const PALETTE = ['#0b5cad', '#c25400', '#1d6b2f', '#7a1fa2', '#a4161a', '#4a5360'];

/** Plan, checkout and portal redirects, credits, and the usage of the period per day and model. */
export function BillingPage() {
  const billing = useSignal<Billing | undefined>(undefined);
  const usage = useSignal<Usage | undefined>(undefined);
  const failure = useSignal<ExplainedError | undefined>(undefined);
  const pending = useSignal<string | undefined>(undefined);
  const changing = useSignal<Offer | undefined>(undefined);
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
      return void (pending.value = `Moving to ${data.plan}: the change applies when the payment is confirmed.`);
    failure.value = explainError(response.status, error);
  };

  const b = billing.value;
  return (
    <section>
      <PageTitle>Billing</PageTitle>
      {outcome === 'success' && <Notice kind="ok" message="Payment received: your plan is active once the processor confirms it (usually at once)." />}
      {outcome === 'cancelled' && <Notice message="Checkout cancelled: nothing was charged." />}
      <ErrorNotice error={failure.value} />
      <Notice message={pending.value} />
      {!b ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          <div class="panel">
            <h2>Plan</h2>
            <dl class="facts">
              <dt>Plan</dt>
              <dd data-testid="plan">{planLine(b)}</dd>
              {b.active && b.currentPeriodEnd && (
                <>
                  <dt>{b.cancelAtPeriodEnd ? 'Ends on' : 'Renews on'}</dt>
                  <dd data-testid="renews">{formatDay(b.currentPeriodEnd)}</dd>
                </>
              )}
              <dt>Agents</dt>
              <dd>{b.limits.agents}</dd>
              <dt>Skills per agent</dt>
              <dd>{b.limits.skills}</dd>
              <dt>Credits</dt>
              <dd>{b.credits}</dd>
            </dl>
          </div>
          <div class="panel">
            <h2>{b.active ? 'Change plan' : 'Choose a plan'}</h2>
            <ul class="plans" aria-label="Plans">
              {b.plans.map((offer) => {
                const current = b.active && offer.plan === b.plan;
                return (
                  <li key={offer.plan} class={current ? 'plan current' : 'plan'}>
                    <h3>{offer.plan}</h3>
                    <p class="price" data-testid={`price-${offer.plan}`}>
                      {priceOf(offer)}
                    </p>
                    <p>
                      {offer.agents} agent{offer.agents === 1 ? '' : 's'}, {offer.skills} skills each
                    </p>
                    {current ? (
                      <p class="badge badge-active">Your plan</p>
                    ) : b.active ? (
                      <button type="button" class="secondary" onClick={() => (changing.value = offer)}>
                        Move to {offer.plan}
                      </button>
                    ) : (
                      <ActionButton onAction={() => redirectThrough({ action: 'create-checkout', plan: offer.plan })}>Subscribe to {offer.plan}</ActionButton>
                    )}
                  </li>
                );
              })}
            </ul>
            <div class="row">
              {b.active && (
                <ActionButton class="secondary" onAction={() => redirectThrough({ action: 'billing-portal' })}>
                  Billing portal (card, invoices, cancel)
                </ActionButton>
              )}
              {b.creditPacks.map((pack) => (
                <ActionButton key={pack.price} class="secondary" onAction={() => redirectThrough({ action: 'buy-credits', price: pack.price })}>
                  Buy {pack.credits} credits
                </ActionButton>
              ))}
            </div>
          </div>
          <ConfirmDialog
            open={!!changing.value}
            title={`Move to ${changing.value?.plan ?? ''}?`}
            confirmLabel={`Move to ${changing.value?.plan ?? ''}`}
            onCancel={() => (changing.value = undefined)}
            onConfirm={() => {
              const offer = changing.value!;
              changing.value = undefined;
              void redirectThrough({ action: 'change-plan', plan: offer.plan });
            }}
          >
            {changing.value && (
              <p>
                From {b.plan} to {changing.value.plan} at {priceOf(changing.value)}, with {changing.value.agents} agent
                {changing.value.agents === 1 ? '' : 's'}. {changing.value.agents < b.limits.agents ? 'Agents beyond the new limit stop being served. ' : ''}
                The change applies once the payment processor confirms it.
              </p>
            )}
          </ConfirmDialog>
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
    const width = Math.min(720, box.current.clientWidth || 300);
    const plot = new uPlot(
      {
        title,
        width,
        height: 220,
        // From the start of the period's first day: the figures are per day, at midnight UTC.
        scales: { x: { time: true, range: () => [Date.parse(`${period[0].slice(0, 10)}T00:00:00Z`) / 1000, Date.parse(period[1]) / 1000] } },
        padding: [12, 24, 0, 0],
        legend: { live: false },
        axes: [{ size: 56 }, { size: 80, values: (_u, splits) => splits.map(format) }],
        series: [
          { label: 'Day' },
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
        {formatDay(usage.periodStart)} to {formatDay(usage.periodEnd)}: <span data-testid="total-tokens">{usage.tokens.total}</span> tokens,{' '}
        {usd(usage.costUsd)}, {usage.allowance.usedCredits} of {usage.allowance.includedCredits} included credits used.
      </p>
      {days.length === 0 ? (
        <p class="empty">No model calls yet this period.</p>
      ) : (
        <>
          <DayChart title="Tokens per day" days={days} models={models} period={period} figureOf={(d, m) => cell(d, m)?.totalTokens ?? 0} />
          <DayChart
            title="Cost per day (USD)"
            days={days}
            models={models}
            period={period}
            figureOf={(d, m) => cell(d, m)?.costUsd ?? 0}
            format={(v) => (v === 0 ? '$0' : `$${v.toPrecision(2)}`)}
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
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {usage.days.map((d) => (
            <tr key={`${d.day}${d.model}`}>
              <td>{d.day}</td>
              <td>{d.model}</td>
              <td>{d.calls}</td>
              <td>{d.totalTokens}</td>
              <td>{usd(d.costUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
