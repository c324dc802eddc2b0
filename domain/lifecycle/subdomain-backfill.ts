import {
  ensureSubdomainLookup,
  instancesWithoutLookupPage,
  readBackfillCursor,
  saveBackfillCursor,
  type BackfillCursor,
  type ScanPosition,
} from '#data/subdomain-lookups';
import { logger } from '#platform/logger';

/**
 * Makes every instance routable by the edge: an instance recorded before the `SUBDOMAIN#` look-up
 * existed gets it (data/subdomain-lookups.ts says why this takes a scan). Runs beside the
 * stranded-work reconciler (the heartbeat's 5-minute sweep; locally also once at start), a bounded
 * slice of the table per pass, so a large table is covered over several passes at a steady cost,
 * and nothing at all once a sweep completed. Idempotent: a look-up already there is left as it is,
 * and another account's is never overwritten (logged and counted as a collision).
 */

/** Items evaluated per scan page, and pages per pass: the bound on one pass's reads. */
export const BACKFILL_PAGE_ITEMS = 500;
export const BACKFILL_PAGES_PER_PASS = 4;

export interface SubdomainBackfillOptions {
  pageItems?: number;
  pagesPerPass?: number;
}

export interface SubdomainBackfillResult {
  /** Instances without a look-up found by this pass. */
  found: number;
  written: number;
  collisions: number;
  /** Failed or raced: a later sweep tries them again. */
  failed: number;
  /** True once a whole sweep is done with nothing left to try again. */
  complete: boolean;
}

export async function backfillSubdomainLookups(opts: SubdomainBackfillOptions = {}): Promise<SubdomainBackfillResult> {
  const result: SubdomainBackfillResult = { found: 0, written: 0, collisions: 0, failed: 0, complete: false };
  const cursor = await readBackfillCursor();
  if (cursor.completedAt) return { ...result, complete: true };
  const pageItems = opts.pageItems ?? BACKFILL_PAGE_ITEMS;
  const pagesPerPass = opts.pagesPerPass ?? BACKFILL_PAGES_PER_PASS;
  let next: ScanPosition | undefined = cursor.next;
  let retry = cursor.retry ?? false;
  for (let page = 0; page < pagesPerPass; page += 1) {
    const slice = await instancesWithoutLookupPage(next, pageItems);
    for (const { userId, subdomain } of slice.instances) {
      result.found += 1;
      try {
        const outcome = await ensureSubdomainLookup(userId, subdomain);
        if (outcome === 'written') result.written += 1;
        if (outcome === 'collision') {
          result.collisions += 1;
          logger().error('an instance subdomain is held by another account; its look-up was left as it is', { userId, subdomain });
        }
        if (outcome === 'raced') {
          result.failed += 1;
          retry = true;
        }
      } catch (err) {
        // One account's failure never stops the others; the sweep is run again for it.
        result.failed += 1;
        retry = true;
        logger().error('backfilling an instance subdomain look-up failed', { userId, error: err as Error });
      }
    }
    next = slice.next;
    if (!next) break;
  }
  const state = cursorAfterPass(next, retry, new Date());
  // Another pass stored its cursor meanwhile: it read the same slice, and its position stands.
  await saveBackfillCursor(cursor, state);
  result.complete = !!state.completedAt;
  return result;
}

/**
 * What a pass leaves: where the sweep goes on; at the end of the table, done, unless something is
 * left to try again, which a new sweep from the start does.
 */
export function cursorAfterPass(next: ScanPosition | undefined, retry: boolean, now: Date): Omit<BackfillCursor, 'passes'> {
  if (next) return { next, retry };
  return retry ? {} : { completedAt: now.toISOString() };
}
