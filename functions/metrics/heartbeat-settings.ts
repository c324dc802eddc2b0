import type { AuthContext } from '../../shared/auth/authenticate';
import { defaultHeartbeat, getHeartbeat, saveHeartbeat, type HeartbeatSettings } from '../../shared/db/heartbeat';

const view = (s: HeartbeatSettings): HeartbeatSettings => ({
  frequency: s.frequency,
  enabled: s.enabled,
  lastHeartbeat: s.lastHeartbeat ?? null,
  nextHeartbeat: s.nextHeartbeat ?? null,
});

function describe(s: HeartbeatSettings) {
  if (!s.enabled) return `Heartbeat is off (frequency ${s.frequency}); send enabled: true to start it`;
  if (!s.nextHeartbeat) return `Heartbeat every ${s.frequency}; the first one runs when your instance is running`;
  return `Heartbeat every ${s.frequency}; next at ${s.nextHeartbeat}`;
}

export async function readHeartbeat(auth: AuthContext) {
  const settings = view((await getHeartbeat(auth.userId)) ?? defaultHeartbeat(auth.userId));
  return { heartbeat: settings, message: describe(settings) };
}

export async function updateHeartbeat(auth: AuthContext, body: { frequency?: string; enabled?: boolean }) {
  const saved = await saveHeartbeat(auth.userId, body);
  const settings = view(saved);
  return { ...settings, lastUpdated: saved.lastUpdated, message: `Heartbeat settings saved. ${describe(settings)}` };
}

export async function resetHeartbeat(auth: AuthContext) {
  const saved = await saveHeartbeat(auth.userId, 'reset');
  return { success: true as const, message: `Heartbeat settings reset to the defaults. ${describe(view(saved))}` };
}
