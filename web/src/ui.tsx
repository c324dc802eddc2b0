import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { type ExplainedError, explainError } from './errors';
import { Link } from './router';

/** A page's heading, focused on navigation so screen readers announce the new page. */
export function PageTitle({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
    document.title = `${ref.current?.textContent ?? ''} · Agent platform`;
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

interface InputProps {
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search';
  autoComplete?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  placeholder?: string;
}

/** A labelled input; the hint is tied to it with aria-describedby. */
export function Field({ label, value, onValue, hint, type = 'text', ...rest }: InputProps) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type={type as 'text'}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
        {...rest}
      />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export function TextArea({
  label,
  value,
  onValue,
  hint,
  rows = 6,
}: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  hint?: string;
  rows?: number;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} rows={rows} value={value} onInput={(e) => onValue(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/** A polite live region: results of actions are announced without moving focus. */
export function Notice({ message, kind = 'info' }: { message: string | undefined; kind?: 'info' | 'error' | 'ok' }) {
  return (
    <p class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'} hidden={!message}>
      {message}
    </p>
  );
}

/** Copies a value with the Clipboard API and says so. */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const copied = useSignal(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        await navigator.clipboard.writeText(value);
        copied.value = true;
        setTimeout(() => (copied.value = false), 2000);
      }}
    >
      {copied.value ? 'Copied' : label}
    </button>
  );
}

/** A button that runs an async action, disabled while it runs. */
export function ActionButton({ onAction, children, class: className }: { onAction: () => Promise<unknown>; children: ComponentChildren; class?: string }) {
  const busy = useSignal(false);
  return (
    <button
      type="button"
      class={className}
      disabled={busy.value}
      aria-busy={busy.value}
      onClick={async () => {
        busy.value = true;
        try {
          await onAction();
        } finally {
          busy.value = false;
        }
      }}
    >
      {children}
    </button>
  );
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
export const formatDay = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'long', day: 'numeric' });

/** An amount in a currency as the reader's locale writes it (`$79.00`, `£29.00`). */
export const formatMoney = (amount: number, currency: string) =>
  new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(amount);

/** A failed call's answer, kept for an ErrorNotice. */
export const failureOf = (status: number | undefined, body: unknown): ExplainedError => explainError(status, body);

/**
 * A failure in words, with the step that fixes it as a control beside it: a plan to choose, the
 * agent to start (`onStart`), a sign-in. Operator-side failures say so.
 */
export function ErrorNotice({ error, onStart }: { error: ExplainedError | undefined; onStart?: () => Promise<unknown> }) {
  return (
    <div class="notice notice-error" role="alert" hidden={!error}>
      {error && (
        <>
          <span>{error.text}</span>
          {(error.next === 'subscribe' || error.next === 'upgrade') && (
            <Link href="/settings/billing" class="button secondary">
              {error.next === 'subscribe' ? 'Choose a plan' : 'See plans'}
            </Link>
          )}
          {error.next === 'start' && onStart && (
            <ActionButton class="secondary" onAction={onStart}>
              Start the agent
            </ActionButton>
          )}
          {error.next === 'sign-in' && (
            <Link href="/sign-in" class="button secondary">
              Sign in
            </Link>
          )}
        </>
      )}
    </div>
  );
}

/**
 * Asks before a destructive action, in a modal dialog (the browser's own: focus moves into it, Escape
 * cancels, the page behind is inert). `onConfirm` runs only on the confirming button.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} class="confirm" aria-labelledby={`${id}-title`} onCancel={onCancel}>
      <h2 id={`${id}-title`} class="confirm-title">
        {title}
      </h2>
      <div>{children}</div>
      <div class="row">
        <button type="button" class="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

/** One list of records, each a line of facts and its actions; the empty state in words. */
export function ItemList<T>({
  label,
  items,
  empty,
  keyOf,
  render,
}: {
  label: string;
  items: readonly T[] | undefined;
  empty: string;
  keyOf: (item: T) => string;
  render: (item: T) => ComponentChildren;
}) {
  if (items === undefined) return <p role="status">Loading…</p>;
  if (items.length === 0) return <p class="empty">{empty}</p>;
  return (
    <ul class="items" aria-label={label}>
      {items.map((item) => (
        <li key={keyOf(item)}>{render(item)}</li>
      ))}
    </ul>
  );
}

/** Sections of a page as links (`?tab=`), so each has an address, the back button works and a reload keeps it. */
export function SectionNav({
  label,
  sections,
  current,
  hrefOf,
}: {
  label: string;
  sections: readonly { id: string; label: string }[];
  current: string;
  hrefOf: (id: string) => string;
}) {
  return (
    <nav aria-label={label} class="sections">
      <ul class="section-list">
        {sections.map((s) => (
          <li key={s.id}>
            <Link href={hrefOf(s.id)} class="section-link" aria-current={s.id === current ? 'page' : undefined}>
              {s.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A page or record that is not there (another user's agent is not there either: the API answers 404). */
export function NotFound({ title = 'Page not found' }: { title?: string }) {
  return (
    <section>
      <PageTitle>{title}</PageTitle>
      <p>
        <Link href="/">Back to your agents</Link>
      </p>
    </section>
  );
}
