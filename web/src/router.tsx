import { signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';

/** The History API router: real paths, so the emails' links (/verify-email, /reset-password) are routes. */
export const currentUrl = signal(new URL(location.href));

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  currentUrl.value = new URL(location.href);
}

addEventListener('popstate', () => {
  currentUrl.value = new URL(location.href);
});

/** An in-app link: a real anchor (keyboard, middle click), routed without a reload. */
export function Link({ href, children, class: className, ...rest }: { href: string; children: ComponentChildren; class?: string; 'aria-current'?: 'page' }) {
  return (
    <a
      href={href}
      class={className}
      {...rest}
      onClick={(event) => {
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** Matches `/agents/:id`-style patterns; answers the parameters or null. */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
  const names: string[] = [];
  const re = new RegExp(
    `^${pattern.replace(/:(\w+)/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    })}/?$`,
  );
  const m = re.exec(pathname);
  return m ? Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) : null;
}
