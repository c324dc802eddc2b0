import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback CloudWatch Logs speaking the JSON 1.1 wire format the SDK uses (POST /, `X-Amz-Target:
 * Logs_20140328.<Operation>`, `application/x-amz-json-1.1` bodies, errors as `{__type, message}`):
 * GetLogEvents over one group, with the time range, the limit and backward paging as CloudWatch
 * pages (events oldest first within a page; at the start of the stream the token it was given
 * comes back, which is how a reader knows it is done).
 */
export interface FakeLogEvent {
  timestamp: number;
  message: string;
  ingestionTime?: number;
}

export interface FakeCloudWatchLogs {
  endpoint: string;
  /** stream name → its events, in any order. */
  streams: Map<string, FakeLogEvent[]>;
  requests: { target: string; authorization: string; body: Record<string, any> }[];
  close(): Promise<void>;
}

export async function fakeCloudWatchLogs(group: string): Promise<FakeCloudWatchLogs> {
  const streams = new Map<string, FakeLogEvent[]>();
  const requests: FakeCloudWatchLogs['requests'] = [];
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(body));
  };
  const fail = (res: http.ServerResponse, type: string, message: string) => send(res, 400, { __type: type, message });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let body: Record<string, any>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return fail(res, 'SerializationException', 'not JSON');
      }
      requests.push({ target, authorization: String(req.headers.authorization ?? ''), body });
      if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/x-amz-json-1.1')) {
        return fail(res, 'SerializationException', 'expected a JSON 1.1 POST');
      }
      if (target !== 'Logs_20140328.GetLogEvents') return fail(res, 'UnknownOperationException', target);
      if (body.logGroupName !== group) return fail(res, 'ResourceNotFoundException', 'The specified log group does not exist.');
      const events = streams.get(body.logStreamName);
      if (!events) return fail(res, 'ResourceNotFoundException', 'The specified log stream does not exist.');
      const inRange = events
        .filter((e) => (body.startTime === undefined || e.timestamp >= body.startTime) && (body.endTime === undefined || e.timestamp < body.endTime))
        .sort((a, b) => a.timestamp - b.timestamp);
      const limit = Math.min(Number(body.limit ?? 10_000), 10_000);
      if (body.startFromHead !== false) return fail(res, 'InvalidParameterException', 'this fake pages backwards only');
      const end = body.nextToken ? Number(String(body.nextToken).slice(2)) : inRange.length;
      const start = Math.max(0, end - limit);
      const page = inRange.slice(start, end).map((e) => ({ timestamp: e.timestamp, message: e.message, ingestionTime: e.ingestionTime ?? e.timestamp + 5 }));
      send(res, 200, { events: page, nextBackwardToken: `b/${start}`, nextForwardToken: `f/${end}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
