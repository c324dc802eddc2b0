import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { CONCURRENCY_DEFAULTS, readConcurrency, UNRESERVED_MINIMUM } from '#lib/concurrency';
import { concurrencyFunctions, QUEUE_CONSUMERS } from '#lib/constructs/functions';
import { streamingFunctionDescription } from '#lib/constructs/platform-function';
import { readSettings } from '#lib/platform-stack';
import { contract } from '#contract';
import { cdkContext, inspect, synthStack, type Json } from './synth';

/**
 * The guard rails an operator relies on: every function's reserved concurrency and every SQS event
 * source's ceiling, the streaming Function URLs throttled by their own reservation, every alarm on
 * the alarm topic, and the container images' base pinned by digest.
 */
const defaults = synthStack();
const t = inspect(defaults.template);
const off = inspect(synthStack({ functionConcurrency: 'off', streamingConcurrency: 0, queueConcurrency: 'off' }).template);
const subscribed = synthStack({
  alarmEmail: 'ops@example.com',
  alarmWebhookUrl: 'https://events.pagerduty.example/integration/abc/enqueue',
  'functionConcurrency.agents': '25',
});
const custom = inspect(subscribed.template);

const streamingGroups = contract.filter((g) => g.streams).map((g) => g.group);
const refId = (value: Json) => (value['Fn::GetAtt'] ?? [value.Ref])[0] as string;
const reservedOf = (view: typeof t, id: string) => view.resources[id]!.Properties.ReservedConcurrentExecutions as number | undefined;
const contextOf = (context: Record<string, unknown>) => new App({ context: { ...cdkContext, ...context } }).node;

describe('reserved concurrency', () => {
  it('reserves the default for every function and the streaming default for each streaming twin, within the account quota', () => {
    const functions = t.ofType('AWS::Lambda::Function');
    expect(functions.length).toBe(concurrencyFunctions(contract).length);
    const twins = new Set(streamingGroups.map((g) => t.logicalIdOf('AWS::Lambda::Function', (p) => p.Description === streamingFunctionDescription(g))));
    let total = 0;
    for (const [id, fn] of functions) {
      const expected = twins.has(id) ? CONCURRENCY_DEFAULTS.streamingConcurrency : CONCURRENCY_DEFAULTS.functionConcurrency;
      expect(fn.Properties.ReservedConcurrentExecutions, id).toBe(expected);
      total += expected;
    }
    expect(total).toBeLessThanOrEqual(CONCURRENCY_DEFAULTS.lambdaConcurrencyLimit - UNRESERVED_MINIMUM);
  });

  it("takes one function's own value from functionConcurrency.<name>", () => {
    expect(reservedOf(custom, custom.functionId('agents'))).toBe(25);
    expect(reservedOf(custom, custom.functionId('accounts'))).toBe(CONCURRENCY_DEFAULTS.functionConcurrency);
  });

  it('reserves nothing when turned off', () => {
    for (const [id, fn] of off.ofType('AWS::Lambda::Function')) expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
  });

  it('refuses at synth what Lambda would refuse at deploy, and what would park messages', () => {
    const functions = concurrencyFunctions(contract);
    const read = (context: Record<string, unknown>) => () => readConcurrency(contextOf(context), functions, QUEUE_CONSUMERS);
    // A new account's quota of 10 leaves no room for any reservation.
    expect(read({ lambdaConcurrencyLimit: 10 })).toThrow(/keeps 100 unreserved/);
    expect(read({ lambdaConcurrencyLimit: 10, functionConcurrency: 'off', streamingConcurrency: 'off' })).not.toThrow();
    expect(read({ 'functionConcurrency.provisioner': 2 })).toThrow(/provisioner reserves 2 .* below queueConcurrency 5/);
    expect(read({ 'functionConcurrency.nobody': 3 })).toThrow(/names no function/);
    expect(read({ queueConcurrency: 1 })).toThrow(/queueConcurrency" must be 2 to 1000/);
    expect(read({ functionConcurrency: 'lots' })).toThrow(/whole number/);
  });
});

describe('SQS event sources', () => {
  it('carry maxConcurrency from queueConcurrency on every mapping, none when off', () => {
    const mappings = t.ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(QUEUE_CONSUMERS.length);
    for (const [id, m] of mappings) expect(m.Properties.ScalingConfig, id).toEqual({ MaximumConcurrency: CONCURRENCY_DEFAULTS.queueConcurrency });
    for (const [id, m] of off.ofType('AWS::Lambda::EventSourceMapping')) expect(m.Properties.ScalingConfig, id).toBeUndefined();
  });
});

describe('streaming Function URLs', () => {
  it('are open only on a function with its own reserved concurrency, their throttle', () => {
    const urls = t.ofType('AWS::Lambda::Url');
    expect(urls).toHaveLength(streamingGroups.length);
    for (const [id, url] of urls) {
      const target = refId(url.Properties.TargetFunctionArn);
      if (url.Properties.AuthType === 'AWS_IAM') continue;
      expect(reservedOf(t, target), id).toBeGreaterThanOrEqual(1);
      expect(reservedOf(t, target), id).toBeLessThanOrEqual(CONCURRENCY_DEFAULTS.streamingConcurrency);
    }
  });

  it('are not created when streaming concurrency is off, and neither are their outputs', () => {
    expect(off.ofType('AWS::Lambda::Url')).toEqual([]);
    const outputs = Object.keys(synthStack({ streamingConcurrency: 'off' }).mainTemplate.toJSON().Outputs);
    expect(outputs.filter((o) => /StreamingUrl$/.test(o))).toEqual([]);
  });
});

describe('alarm notifications', () => {
  const topicsOf = (view: typeof t) => view.ofType('AWS::SNS::Topic');

  it('have one SNS topic in the main stack even without a subscriber, its ARN an output', () => {
    expect(topicsOf(t)).toHaveLength(1);
    const [topicId] = topicsOf(t)[0]!;
    expect(defaults.mainTemplate.toJSON().Resources[topicId]).toBeDefined();
    expect(t.ofType('AWS::SNS::Subscription')).toEqual([]);
    expect(defaults.mainTemplate.toJSON().Outputs.AlarmTopicArn.Value).toEqual({ Ref: topicId });
  });

  it('reach the topic from every alarm of every stack, nested ones included', () => {
    for (const view of [t, custom]) {
      const [topicId] = topicsOf(view)[0]!;
      const alarms = view.ofType('AWS::CloudWatch::Alarm');
      expect(alarms.length).toBeGreaterThan(40);
      for (const [id, alarm] of alarms) expect(alarm.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
    }
    // The edge's alarms are among them.
    expect(t.ofType('AWS::CloudWatch::Alarm').filter(([, a]) => /agent edge/.test(a.Properties.AlarmDescription))).toHaveLength(3);
  });

  it('subscribe alarmEmail by mail and alarmWebhookUrl over HTTPS', () => {
    const [topicId] = topicsOf(custom)[0]!;
    const subscriptions = custom.ofType('AWS::SNS::Subscription').map(([, s]) => s.Properties);
    expect(subscriptions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } }),
        expect.objectContaining({ Protocol: 'https', Endpoint: 'https://events.pagerduty.example/integration/abc/enqueue', TopicArn: { Ref: topicId } }),
      ]),
    );
    expect(subscriptions).toHaveLength(2);
  });

  it('refuse a webhook that is not HTTPS', () => {
    expect(() => readSettings(contextOf({ alarmWebhookUrl: 'http://hooks.example.com/x' }))).toThrow(/alarmWebhookUrl.*not an HTTPS URL/);
  });

  it('output a link to the dashboard', () => {
    const value = JSON.stringify(defaults.mainTemplate.toJSON().Outputs.DashboardUrl.Value);
    expect(value).toContain('cloudwatch/home?region=');
    expect(value).toContain('#dashboards:name=');
  });
});

describe('container image bases', () => {
  /** Each FROM's image, global ARGs substituted as Docker does. */
  const basesOf = (path: string) => {
    const text = readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
    const args = new Map([...text.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const stages = new Set([...text.matchAll(/^FROM \S+ AS (\S+)$/gim)].map((m) => m[1]!));
    const images = [...text.matchAll(/^FROM (\S+)/gim)].map((m) => m[1]!.replace(/\$\{(\w+)\}/g, (_, name: string) => args.get(name) ?? ''));
    return images.filter((image) => !stages.has(image));
  };

  it('are one Node 22 image pinned by digest, the same in the runtime and the edge', () => {
    const bases = [...basesOf('runtime/Dockerfile'), ...basesOf('edge/Dockerfile')];
    expect(bases).toHaveLength(4);
    for (const base of bases) expect(base).toMatch(/^node:22-alpine@sha256:[0-9a-f]{64}$/);
    expect(new Set(bases).size).toBe(1);
  });
});
