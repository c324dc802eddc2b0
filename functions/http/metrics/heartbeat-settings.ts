import type { AuthContext } from '#domain/auth/authenticate';
import { defaultHeartbeat, getHeartbeat, saveHeartbeat, type HeartbeatSettings } from '#data/heartbeat';
import { getIdleWatch, setIdleStopMinutes } from '#data/idle-watch';

const view = (s: HeartbeatSettings, idleStopMinutes: number | undefined) => ({
  frequency: s.frequency,
  enabled: s.enabled,
  lastHeartbeat: s.lastHeartbeat ?? null,
  nextHeartbeat: s.nextHeartbeat ?? null,
  idleStopMinutes: idleStopMinutes ?? null,
});

function describe(s: HeartbeatSettings) {
  if (!s.enabled) return `Heartbeat is off (frequency ${s.frequency}); send enabled: true to start it`;
  if (!s.nextHeartbeat) return `Heartbeat every ${s.frequency}; the first one runs when your instance is running`;
  return `Heartbeat every ${s.frequency}; next at ${s.nextHeartbeat}`;
}

export async function readHeartbeat(auth: AuthContext) {
  const [saved, idle] = await Promise.all([getHeartbeat(auth.userId), getIdleWatch(auth.userId)]);
  const settings = saved ?? defaultHeartbeat(auth.userId);
  return { heartbeat: view(settings, idle?.idleStopMinutes), message: describe(settings) };
}

export async function updateHeartbeat(auth: AuthContext, body: { frequency?: string; enabled?: boolean; idleStopMinutes?: number | null }) {
  const { idleStopMinutes, ...heartbeat } = body;
  if (idleStopMinutes !== undefined) await setIdleStopMinutes(auth.userId, idleStopMinutes);
  const [saved, idle] = await Promise.all([saveHeartbeat(auth.userId, heartbeat), getIdleWatch(auth.userId)]);
  return { ...view(saved, idle?.idleStopMinutes), lastUpdated: saved.lastUpdated, message: `Heartbeat settings saved. ${describe(saved)}` };
}

export async function resetHeartbeat(auth: AuthContext) {
  const saved = await saveHeartbeat(auth.userId, 'reset');
  if (await getIdleWatch(auth.userId)) await setIdleStopMinutes(auth.userId, null);
  return { success: true as const, message: `Heartbeat settings reset to the defaults. ${describe(saved)}` };
}
