import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { claimIdempotencyKey } from '#data/idempotency';
import { idempotencyCredential, idempotencyFingerprint } from '#http/steps/idempotency';
import * as keys from '#data/keys';
import { accountSession, call, subscribedSession } from '../helpers/api';
import { tenant } from '#data/tenant';

/** Idempotency-Key on the skill-call routes, through the real pipeline against DynamoDB Local. */
const subscriber = () => subscribedSession();

const createNote = (session: Awaited<ReturnType<typeof subscriber>>, key: string | undefined, title: string) =>
  call('POST', '/api/skills/notes-workspace', { session, body: { action: 'create_note', title }, headers: key ? { 'idempotency-key': key } : {} });

const notesOf = async (userId: string) => (await tenant(userId).queryAll(keys.notePrefix, { consistent: true })).length;

describe('Idempotency-Key on skill calls', () => {
  it('replays the first answer for a repeated key and runs the action once', async () => {
    const session = await subscriber();
    const key = randomUUID();
    const first = await createNote(session, key, 'Rider');
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await createNote(session, key, 'Rider');
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await notesOf(session.userId)).toBe(1);
    // Without a key, or with another key, the action runs again.
    expect((await createNote(session, undefined, 'Rider')).status).toBe(200);
    expect((await createNote(session, randomUUID(), 'Rider')).status).toBe(200);
    expect(await notesOf(session.userId)).toBe(3);
  });

  it('refuses the same key with a different body (422) and keeps keys per account', async () => {
    const session = await subscriber();
    const key = randomUUID();
    expect((await createNote(session, key, 'Rider')).status).toBe(200);
    const reused = await createNote(session, key, 'Stage plot');
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Another account's identical key is its own.
    const other = await subscriber();
    expect((await createNote(other, key, 'Stage plot')).status).toBe(200);
    expect(await notesOf(session.userId)).toBe(1);
    expect(await notesOf(other.userId)).toBe(1);
  });

  it('answers 409 while a request with the key is in flight, and concurrent repeats run the action once', async () => {
    const session = await subscriber();
    const held = randomUUID();
    const body = JSON.stringify({ action: 'create_note', title: 'Rider' });
    const credential = idempotencyCredential({ via: 'cookie', sessionId: decodeJwt(session.token).jti });
    const fingerprint = idempotencyFingerprint({}, body);
    expect((await claimIdempotencyKey(session.userId, 'skillNotesWorkspace', credential, held, fingerprint)).outcome).toBe('claimed');
    const busy = await createNote(session, held, 'Rider');
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(await notesOf(session.userId)).toBe(0);

    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => createNote(session, key, 'Rider')));
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === 'IDEMPOTENCY_IN_PROGRESS')).toBe(true);
    expect(await notesOf(session.userId)).toBe(1);
    const noteIds = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.note.noteId ?? a.body.note.id));
    expect(noteIds.size).toBe(1);
  });

  it('keeps nothing for a failed request, so the same key may be retried; a malformed key is refused', async () => {
    const session = await subscriber();
    const key = randomUUID();
    const bad = await call('POST', '/api/skills/notes-workspace', { session, body: { action: 'create_note' }, headers: { 'idempotency-key': key } });
    expect(bad.status).toBe(400);
    expect((await createNote(session, key, 'Rider')).status).toBe(200);
    const malformed = await createNote(session, 'has spaces in it', 'Rider');
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('INVALID_IDEMPOTENCY_KEY');
    expect(await notesOf(session.userId)).toBe(1);
  });
});

describe('Idempotency-Key replays are bound to the credential and the path', () => {
  it("an API key repeating a session's key creation with its Idempotency-Key gets 403 and no key", async () => {
    const session = await accountSession();
    const apiKey = (await call('POST', '/api/keys', { session, body: { name: 'ci' } })).body.key as string;
    const key = randomUUID();
    const body = { name: 'deploy' };
    const first = await call('POST', '/api/keys', { session, body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^sk_/);

    const replayed = await call('POST', '/api/keys', { bearer: apiKey, body, headers: { 'idempotency-key': key } });
    expect(replayed.status, replayed.text).toBe(403);
    expect(replayed.body).toMatchObject({ code: 'SESSION_REQUIRED' });
    expect(replayed.text).not.toContain('sk_');
    expect(replayed.headers['idempotent-replayed']).toBeUndefined();
    // The session that earned the answer still gets it back.
    const again = await call('POST', '/api/keys', { session, body, headers: { 'idempotency-key': key } });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await call('GET', '/api/keys', { session })).body.keys).toHaveLength(2);
  });

  it('the same key and body for another path parameter is another request (422), never a replay', async () => {
    const session = await accountSession();
    const credential = idempotencyCredential({ via: 'cookie', sessionId: decodeJwt(session.token).jti });
    const key = randomUUID();
    const mine = idempotencyFingerprint({ userId: session.userId }, '{}');
    expect((await claimIdempotencyKey(session.userId, 'resetInstanceMemory', credential, key, mine)).outcome).toBe('claimed');
    const other = idempotencyFingerprint({ userId: 'u_someone_else' }, '{}');
    expect((await claimIdempotencyKey(session.userId, 'resetInstanceMemory', credential, key, other)).outcome).toBe('reused');
  });
});
