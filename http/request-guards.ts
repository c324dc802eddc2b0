/**
 * Checks the pipeline makes on the raw request before anything parses or trusts it.
 */

/** Deeper than any body of the contract needs; deep enough input would otherwise overflow the stack of recursive code (validation, marshalling). */
export const MAX_JSON_DEPTH = 64;

/** `application/json` and the `+json` media types (`application/merge-patch+json`). */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

/**
 * Whether the JSON text nests arrays/objects deeper than `max`. One pass over the text with no
 * recursion, before JSON.parse, so a body nested thousands of levels deep never reaches a parser
 * or validator that recurses.
 */
export function jsonNestingExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Why a browser request comes from another site, or undefined when it does not (or when the
 * client is not a browser and sends neither header).
 */
export function crossSiteReason(headers: Record<string, string | undefined>, appUrl: string): string | undefined {
  const fetchSite = headers['sec-fetch-site']?.trim().toLowerCase();
  if (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none') return `Sec-Fetch-Site is ${fetchSite}`;
  const origin = headers.origin?.trim();
  if (origin !== undefined && origin !== new URL(appUrl).origin) return `Origin ${origin} is not this application`;
  return undefined;
}
