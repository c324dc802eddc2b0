import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
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
