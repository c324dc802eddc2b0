import { describe, expect, it } from 'vitest';
import { failoverCauseInWords, openFailovers } from '../../web/src/failover';

const failover = (at: string, model: string, fallback: string, agentId?: string, cause = 'rate-limited') => ({
  type: 'model.failover',
  at,
  ...(agentId ? { agentId } : {}),
  details: { model, fallback, cause },
});
const restored = (at: string, model: string, agentId?: string) => ({
  type: 'model.restored',
  at,
  ...(agentId ? { agentId } : {}),
  details: { model, fallback: 'x' },
});

describe("the agent page's model fallbacks (from the events, newest first)", () => {
  it('shows a failover no restore has ended, with its cause', () => {
    const events = [{ type: 'instance.running', at: '2026-12-02T10:05:00Z' }, failover('2026-12-02T10:00:00Z', 'openai/gpt-4o', 'anthropic/claude', 'a1')];
    expect(openFailovers(events, 'a1')).toEqual([
      { model: 'openai/gpt-4o', fallback: 'anthropic/claude', cause: 'rate-limited', since: '2026-12-02T10:00:00Z' },
    ]);
    expect(failoverCauseInWords('rate-limited')).toMatch(/rate limited/);
    expect(failoverCauseInWords('something new')).toBe('it failed');
  });

  it('hides a failover the newer restore ended, and keeps one that came back after an older restore', () => {
    expect(openFailovers([restored('2026-12-02T11:00:00Z', 'm', 'a1'), failover('2026-12-02T10:00:00Z', 'm', 'f', 'a1')], 'a1')).toEqual([]);
    expect(openFailovers([failover('2026-12-02T12:00:00Z', 'm', 'f', 'a1'), restored('2026-12-02T11:00:00Z', 'm', 'a1')], 'a1')).toHaveLength(1);
  });

  it("ignores other agents' failovers and counts the account's own calls for every agent", () => {
    expect(openFailovers([failover('2026-12-02T10:00:00Z', 'm', 'f', 'a2')], 'a1')).toEqual([]);
    expect(openFailovers([failover('2026-12-02T10:00:00Z', 'm', 'f')], 'a1')).toHaveLength(1);
  });
});
