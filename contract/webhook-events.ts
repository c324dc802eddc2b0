/*
 * The event names of webhook deliveries, apart from the webhooks group and the skill actions: the
 * delivery worker checks every event against them and builds neither.
 */

/** The account events an endpoint can take (the operator's own endpoints get `user.*`). */
export const ACCOUNT_EVENT_TYPES = [
  'instance.requested',
  'instance.launching',
  'instance.running',
  'instance.unhealthy',
  'instance.stopped',
  'instance.error',
  'instance.superseded',
  'instance.rolled_back',
  'agent.running',
  'agent.error',
  // Budgets and scheduled prompts.
  'agent.paused',
  'agent.resumed',
  'budget.warning',
  'budget.exceeded',
  'schedule.run',
  'schedule.skipped',
  // The loop breaker paused an agent (repeated identical calls or spend velocity), with the evidence.
  'agent.loop_detected',
  // A message kept while its idle-stopped instance woke, delivered once it ran.
  'agent.delivered',
  // A model's calls answered by its fallback chain, and back on the model itself.
  'model.failover',
  'model.restored',
] as const;

/** A dotted event type of the user's naming (`show.announced`), sent by the webhook skill. */
export const MESSAGE_EVENT_TYPE = /^[a-z][a-z0-9_-]{0,39}(\.[a-z0-9_-]{1,40}){1,4}$/;
