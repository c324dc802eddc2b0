import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { config, emailConfig } from '#platform/config';
import { outsideCallSignal } from '#platform/deadline';
import { type EmailMessage, EmailRejectedError } from './email';

/** The SES half of adapters/email.ts, imported by it on the first send outside the outbox. */

/** One send, retries included; bounded further by the request's deadline (platform/deadline.ts). */
const SES_TIMEOUT_MS = 5000;

let ses: SESv2Client | undefined;
function sesClient(): SESv2Client {
  const endpoint = emailConfig().sesEndpoint;
  ses ??= new SESv2Client({
    region: config().region,
    maxAttempts: 3,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
  return ses;
}

export async function sendWithSes(message: EmailMessage, from: string): Promise<string> {
  try {
    const out = await sesClient().send(
      new SendEmailCommand({
        FromEmailAddress: from,
        Destination: { ToAddresses: [message.to] },
        Content: {
          Simple: {
            Subject: { Data: message.subject, Charset: 'UTF-8' },
            Body: {
              Text: { Data: message.text, Charset: 'UTF-8' },
              ...(message.html ? { Html: { Data: message.html, Charset: 'UTF-8' } } : {}),
            },
          },
        },
      }),
      { abortSignal: outsideCallSignal(SES_TIMEOUT_MS) },
    );
    return out.MessageId ?? '';
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'BadRequestException' || name === 'MessageRejected') throw new EmailRejectedError(`email service refused the message: ${name}`);
    throw err;
  }
}

export function resetSesClient(): void {
  ses?.destroy();
  ses = undefined;
}
