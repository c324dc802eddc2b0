import { Parser } from 'htmlparser2';
import { guardedFetch } from '#adapters/guarded-fetch';
import { BROWSER_MAX_LINKS, browserBodies as bodies } from '#contract/skill-actions/development-creative';
import { DomainError } from '#platform/errors';
import { action, type SkillModule } from '#domain/skills/skill-module';

/**
 * Reads a public web page for the agent: fetched through the guarded fetch (public addresses only,
 * every redirect re-checked, at most PAGE_MAX_BYTES read), parsed with htmlparser2. Scripts, styles
 * and other non-text elements are dropped; links are resolved against the page (or its `<base>`)
 * to absolute http(s) URLs. Nothing is stored.
 */
const PAGE_MAX_BYTES = 2 * 1024 * 1024;
const PAGE_TIMEOUT_MS = 10_000;

/** Elements whose content is never readable text. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'head', 'title']);
/** Elements that end a line of text. */
const BLOCKS = new Set([
  'p',
  'div',
  'br',
  'li',
  'ul',
  'ol',
  'tr',
  'table',
  'section',
  'article',
  'header',
  'footer',
  'nav',
  'main',
  'aside',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'pre',
  'blockquote',
  'hr',
  'dt',
  'dd',
  'figcaption',
  'form',
]);

interface PageLink {
  url: string;
  text: string;
}

interface ReadPage {
  title: string;
  text: string;
  links: PageLink[];
  linkCount: number;
}

const squash = (s: string) => s.replace(/[ \t\f\v\r\u00a0]+/g, ' ');

function absolute(href: string, base: URL): string | undefined {
  try {
    const url = new URL(href.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}

export function readHtml(html: string, pageUrl: string): ReadPage {
  let base = new URL(pageUrl);
  let title = '';
  let text = '';
  let skipDepth = 0;
  let inTitle = false;
  const links: PageLink[] = [];
  const seen = new Set<string>();
  let linkCount = 0;
  let openLink: PageLink | undefined;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'base' && attribs.href) {
          const resolved = absolute(attribs.href, base);
          if (resolved) base = new URL(resolved);
        }
        if (name === 'title') inTitle = true;
        if (SKIPPED.has(name)) skipDepth++;
        if (BLOCKS.has(name)) text += '\n';
        if (name === 'a' && attribs.href && skipDepth === 0) {
          const url = absolute(attribs.href, base);
          if (url && !seen.has(url)) {
            seen.add(url);
            linkCount++;
            openLink = { url, text: '' };
            if (links.length < BROWSER_MAX_LINKS) links.push(openLink);
          }
        }
      },
      ontext(data) {
        if (inTitle) title += data;
        if (skipDepth > 0) return;
        text += data;
        if (openLink) openLink.text += data;
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (SKIPPED.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        if (BLOCKS.has(name)) text += '\n';
        if (name === 'a' && openLink) {
          openLink.text = squash(openLink.text).replace(/\s+/g, ' ').trim().slice(0, 200);
          openLink = undefined;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  const readable = squash(text)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
  return { title: squash(title).replace(/\s+/g, ' ').trim(), text: readable, links, linkCount };
}

function charsetOf(contentType: string): string {
  const label = /charset="?([\w-]+)"?/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return 'utf-8';
  }
}

export const skill: SkillModule = {
  name: 'browser',
  defaultAction: 'fetch',
  actions: {
    fetch: action(bodies().fetch, async (_call, body) => {
      const page = await guardedFetch(body.url, {
        maxBytes: PAGE_MAX_BYTES,
        timeoutMs: PAGE_TIMEOUT_MS,
        headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9' },
      });
      const contentType = String(page.headers['content-type'] ?? 'text/html');
      const isHtml = /html|xml/i.test(contentType);
      if (!isHtml && !/^text\//i.test(contentType))
        throw new DomainError('invalid', `the page is ${contentType.split(';')[0]}, not text or HTML`, 'UNSUPPORTED_CONTENT', { contentType });
      const raw = new TextDecoder(charsetOf(contentType)).decode(page.body);
      const read = isHtml ? readHtml(raw, page.url) : { title: '', text: raw.trim(), links: [], linkCount: 0 };
      const textTruncated = read.text.length > body.maxChars;
      return {
        url: page.url,
        status: page.status,
        contentType: contentType.split(';')[0]!.trim(),
        title: read.title,
        text: textTruncated ? read.text.slice(0, body.maxChars) : read.text,
        textLength: read.text.length,
        textTruncated,
        /** The page itself was longer than the platform reads; text and links come from its first part. */
        pageTruncated: page.truncated,
        links: read.links,
        linkCount: read.linkCount,
        linksTruncated: read.linkCount > read.links.length,
      };
    }),
  },
};
