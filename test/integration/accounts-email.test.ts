import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EmailRejectedError, readOutbox, resetEmailClient, sendEmail } from '#adapters/email';
import { ConfigError, reloadConfig } from '#platform/config';
import { uniqueEmail } from './accounts-helpers';

// SES has no local emulator, so the AWS path is checked against a mocked client (docs/architecture.md §7).
const ses = mockClient(SESv2Client);

afterAll(() => ses.restore());
afterEach(() => {
  ses.reset();
  resetEmailClient();
  reloadConfig({ STAGE: 'test', EMAIL_FROM: undefined, SES_ENDPOINT: undefined, AWS_LAMBDA_FUNCTION_NAME: undefined });
});

describe('email adapter', () => {
  it('writes each message to the local outbox as JSON', async () => {
    const to = uniqueEmail('mail');
    await sendEmail({ to, subject: 'Hello', text: 'body text' });
    const [entry] = await readOutbox(to);
    expect(entry).toMatchObject({ to, subject: 'Hello', text: 'body text', from: 'no-reply@localhost' });
    expect(ses.calls()).toHaveLength(0);
  });

  it('sends through SES v2 in AWS with the configured sender', async () => {
    reloadConfig({ STAGE: 'aws', EMAIL_FROM: 'accounts@platform.example' });
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-1' });
    const to = uniqueEmail('ses');
    expect(await sendEmail({ to, subject: 'Reset', text: 'link' })).toBe('ses-1');
    const input = ses.commandCalls(SendEmailCommand)[0]!.args[0].input;
    expect(input.FromEmailAddress).toBe('accounts@platform.example');
    expect(input.Destination?.ToAddresses).toEqual([to]);
    expect(input.Content?.Simple?.Subject?.Data).toBe('Reset');
    expect(input.Content?.Simple?.Body?.Text?.Data).toBe('link');
    expect(await readOutbox(to)).toEqual([]);
  });

  it("turns SES's refusal of a message into EmailRejectedError", async () => {
    reloadConfig({ STAGE: 'aws' });
    ses.on(SendEmailCommand).rejects(Object.assign(new Error('bad address'), { name: 'BadRequestException' }));
    await expect(sendEmail({ to: uniqueEmail(), subject: 's', text: 't' })).rejects.toBeInstanceOf(EmailRejectedError);
  });

  it('SES_ENDPOINT sends through SES outside AWS (not the outbox), and is refused in AWS', async () => {
    reloadConfig({ SES_ENDPOINT: 'http://127.0.0.1:9' });
    ses.on(SendEmailCommand).resolves({ MessageId: 'ses-local' });
    const to = uniqueEmail('ses-endpoint');
    expect(await sendEmail({ to, subject: 'Hi', text: 't' })).toBe('ses-local');
    expect(await readOutbox(to)).toEqual([]);
    expect(() => reloadConfig({ SES_ENDPOINT: 'http://127.0.0.1:9', STAGE: 'aws' })).toThrow(ConfigError);
    expect(() => reloadConfig({ SES_ENDPOINT: 'http://127.0.0.1:9', STAGE: 'test', AWS_LAMBDA_FUNCTION_NAME: 'accounts' })).toThrow('SES_ENDPOINT');
  });
});
