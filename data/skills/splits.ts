import * as keys from '../keys';
import { outboundCountUpdate } from '../metrics';
import { ConditionFailedError, tenant, transact, tx } from '../tenant';
import { transactRetrying } from '../transact-retry';

/**
 * instant-split records: a rule at `SPLITRULE#<splitId>` and the legs of each execution at
 * `SPLITLEG#<splitId>#<executionId>#<recipient>`. An execution's legs are all written, with the
 * rule's `openExecution`, in one transaction before anything is signed; each leg then moves
 * prepared → signed (its signed bytes recorded) → pending (broadcast) → confirmed/failed by
 * conditional writes, so a retry resumes where the last attempt stopped and never pays a leg twice.
 */
export interface SplitRecipientRecord {
  recipientAddress: string;
  percentage: string;
  role?: string;
  name?: string;
}

export interface SplitRule extends Record<string, unknown> {
  splitId: string;
  recipients: SplitRecipientRecord[];
  threshold: string;
  createdAt: string;
  openExecution?: { executionId: string; amount: string; startedAt: string };
}

export type LegStatus = 'prepared' | 'signed' | 'pending' | 'confirmed' | 'failed';

export interface SplitLeg extends Record<string, unknown> {
  splitId: string;
  executionId: string;
  recipientAddress: string;
  amount: string;
  units: string;
  status: LegStatus;
  hash?: string;
  signedTransaction?: string;
  nonce?: number;
  createdAt: string;
  settledAt?: string;
}

export class ExecutionOpenError extends Error {}

export async function createSplitRule(userId: string, rule: SplitRule): Promise<void> {
  await tenant(userId).put({ ...keys.splitRule(userId, rule.splitId), ...rule }, { expression: 'attribute_not_exists(pk)' });
}

export const getSplitRule = (userId: string, splitId: string) => tenant(userId).get<SplitRule>(keys.splitRule(userId, splitId), true);
export const listSplitRules = (userId: string) => tenant(userId).queryAll<SplitRule>(keys.splitRulePrefix, { consistent: true });
export const listSplitLegs = (userId: string, splitId?: string) =>
  tenant(userId).queryAll<SplitLeg>(splitId ? `${keys.splitLegPrefix}${splitId}#` : keys.splitLegPrefix, { consistent: true });

/** Opens an execution with all its legs; another execution still open → ExecutionOpenError. */
export async function openExecution(userId: string, splitId: string, execution: NonNullable<SplitRule['openExecution']>, legs: SplitLeg[]): Promise<void> {
  try {
    await transactRetrying([
      tx.update(
        keys.splitRule(userId, splitId),
        { expression: 'SET openExecution = :execution', values: { ':execution': execution } },
        { expression: 'attribute_exists(pk) AND attribute_not_exists(openExecution)' },
      ),
      ...legs.map((leg) =>
        tx.put({ ...keys.splitLeg(userId, splitId, leg.executionId, leg.recipientAddress), ...leg }, { expression: 'attribute_not_exists(pk)' }),
      ),
    ]);
  } catch (err) {
    if (err instanceof ConditionFailedError) throw new ExecutionOpenError('an execution is open');
    throw err;
  }
}

export async function closeExecution(userId: string, splitId: string, executionId: string): Promise<void> {
  await tenant(userId)
    .update(
      keys.splitRule(userId, splitId),
      { expression: 'REMOVE openExecution' },
      { expression: 'openExecution.executionId = :id', values: { ':id': executionId } },
    )
    .catch((err) => {
      if (!(err instanceof ConditionFailedError)) throw err;
    });
}

/** Moves a leg from one status to the next with the given fields; false when it was not in `from` any more. */
/** A leg that reaches `confirmed` counts as money moved (`movedMicros`, its amount) in the same transaction. */
export async function advanceLeg(
  userId: string,
  leg: SplitLeg,
  from: LegStatus,
  to: LegStatus,
  fields: Record<string, unknown> = {},
  movedMicros = 0,
): Promise<boolean> {
  const sets = Object.keys(fields).map((_field, i) => `#f${i} = :f${i}`);
  const names = Object.fromEntries(Object.keys(fields).map((f, i) => [`#f${i}`, f]));
  const values = Object.fromEntries(Object.values(fields).map((v, i) => [`:f${i}`, v]));
  try {
    await transact([
      tx.update(
        keys.splitLeg(userId, leg.splitId, leg.executionId, leg.recipientAddress),
        {
          expression: `SET #status = :to${sets.length ? `, ${sets.join(', ')}` : ''}`,
          names: { '#status': 'status', ...names },
          values: { ':to': to, ...values },
        },
        { expression: '#status = :from', values: { ':from': from } },
      ),
      ...(to === 'confirmed' ? [outboundCountUpdate(userId, new Date(), { splitPayments: 1, movedMicros })] : []),
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionFailedError) return false;
    throw err;
  }
}

export const getSplitLeg = (userId: string, leg: SplitLeg) =>
  tenant(userId).get<SplitLeg>(keys.splitLeg(userId, leg.splitId, leg.executionId, leg.recipientAddress), true);
