import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChannelCall {
  app: 'telegram' | 'discord' | 'whatsapp' | 'slack';
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

/**
 * One loopback server speaking the four messaging apps' wire shapes, each under its own prefix so
 * each base-URL setting points at one of them:
 * - `/telegram/bot<token>/<method>`: Bot API, `{ok: true, result}` (sendMessage, getMe, setWebhook);
 *   an unknown token answers 401 `{ok: false, error_code: 401, description: 'Unauthorized'}` as Telegram does;
 * - `/discord/channels/{id}/messages`, `/discord/channels/{id}`, `/discord/users/@me`: REST v10,
 *   `Authorization: Bot <token>` required (401 `{message: '401: Unauthorized', code: 0}` otherwise);
 * - `/whatsapp/{phone-number-id}/messages`, `/whatsapp/{phone-number-id}`, `/whatsapp/{waba-id}/message_templates`:
 *   Graph API, `Authorization: Bearer <token>` (401 `{error: {message, type: 'OAuthException', code: 190}}` otherwise);
 * - `/slack/<method>`: Web API, `Authorization: Bearer <token>`, always 200 with `{ok, error?}`.
 * Every call is recorded; the valid tokens are the ones given to `startFakeChannels`.
 */
export async function startFakeChannels(tokens: { telegram?: string; discord?: string; whatsapp?: string; slack?: string }) {
  const calls: ChannelCall[] = [];
  /** Telegram refuses setWebhook as it does for a URL it cannot reach, while set. */
  const refuse = { setWebhook: false };
  let counter = 1000;
  const templates = [
    { id: '1111', name: 'ticket_confirmation', language: 'en_GB', status: 'APPROVED', category: 'UTILITY' },
    { id: '2222', name: 'show_reminder', language: 'en_US', status: 'APPROVED', category: 'MARKETING' },
  ];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const [, app, ...rest] = url.pathname.split('/') as [string, ChannelCall['app'], ...string[]];
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      calls.push({ app, method: req.method ?? 'GET', path: url.pathname, headers: req.headers, body });
      const send = (status: number, out: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      };
      const id = String(++counter);
      const auth = req.headers.authorization;
      switch (app) {
        case 'telegram': {
          const [bot, method] = rest;
          if (bot !== `bot${tokens.telegram}`) return send(401, { ok: false, error_code: 401, description: 'Unauthorized' });
          if (method === 'sendMessage')
            return send(200, {
              ok: true,
              result: { message_id: Number(id), chat: { id: Number(body.chat_id), type: 'private' }, date: 1_700_000_000, text: body.text },
            });
          if (method === 'getMe') return send(200, { ok: true, result: { id: 7_000_001, is_bot: true, first_name: 'Stage Bot', username: 'stage_bot' } });
          if (method === 'setWebhook' && refuse.setWebhook)
            return send(400, { ok: false, error_code: 400, description: 'Bad Request: bad webhook: Failed to resolve host: Name or service not known' });
          if (method === 'setWebhook') return send(200, { ok: true, result: true, description: 'Webhook was set' });
          return send(404, { ok: false, error_code: 404, description: 'Not Found' });
        }
        case 'discord': {
          if (auth !== `Bot ${tokens.discord}`) return send(401, { message: '401: Unauthorized', code: 0 });
          if (rest[0] === 'users' && rest[1] === '@me') return send(200, { id: '880000000000000001', username: 'stage-bot', bot: true });
          if (rest[0] === 'channels' && rest[2] === 'messages' && req.method === 'POST')
            return send(200, { id: `11${id}`, channel_id: rest[1], content: body.content, timestamp: new Date().toISOString(), type: 0 });
          if (rest[0] === 'channels' && rest.length === 2) return send(200, { id: rest[1], name: 'announcements', guild_id: '770000000000000001', type: 0 });
          return send(404, { message: 'Unknown Channel', code: 10003 });
        }
        case 'whatsapp': {
          if (auth !== `Bearer ${tokens.whatsapp}`)
            return send(401, { error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190, fbtrace_id: 'fake' } });
          if (rest[1] === 'messages' && req.method === 'POST')
            return send(200, { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.${id}` }] });
          if (rest[1] === 'message_templates') return send(200, { data: templates, paging: { cursors: { before: 'a', after: 'b' } } });
          if (rest.length === 1) return send(200, { id: rest[0], display_phone_number: '+44 7700 900000', verified_name: 'Nova Lane Music' });
          return send(400, { error: { message: 'Unsupported request', type: 'GraphMethodException', code: 100 } });
        }
        case 'slack': {
          if (auth !== `Bearer ${tokens.slack}`) return send(200, { ok: false, error: 'invalid_auth' });
          const method = rest[0];
          if (method === 'chat.postMessage')
            return send(200, { ok: true, channel: body.channel, ts: `1700000000.${id}`, message: { type: 'message', text: body.text } });
          if (method === 'auth.test') return send(200, { ok: true, team: 'Nova Lane', team_id: 'T0001', user_id: 'U0BOT' });
          if (method === 'conversations.info') return send(200, { ok: true, channel: { id: body.channel, name: 'general', is_private: false } });
          return send(200, { ok: false, error: 'unknown_method' });
        }
        default:
          return send(404, { error: 'no such app' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    calls,
    refuse,
    /** The base-URL settings that point the channel adapters here. */
    settings: {
      CHANNEL_TELEGRAM_API_URL: `${base}/telegram`,
      CHANNEL_DISCORD_API_URL: `${base}/discord`,
      CHANNEL_WHATSAPP_API_URL: `${base}/whatsapp`,
      CHANNEL_SLACK_API_URL: `${base}/slack`,
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
