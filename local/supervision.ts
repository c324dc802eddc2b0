import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { onLocalChildSpawned, type LocalChildKind } from '#adapters/local-children';

/**
 * Keeps the local stack's child processes (DynamoDB Local's JVM, agent runtimes) from outliving it:
 *
 * - each child is recorded in a pid file under `$DATA_DIR/pids` while it runs;
 * - a watchdog process (local/watchdog.ts) holds a pipe from the stack: when the stack dies,
 *   however it dies (SIGKILL included), the pipe closes and the watchdog kills every recorded child;
 * - a start reaps what a crash of the stack and its watchdog together left behind;
 * - DynamoDB Local dying under a running stack stops the stack with a clear message (see
 *   `watchDatabase` for why it is not restarted).
 */

interface PidRecord {
  pid: number;
  kind: LocalChildKind;
  /** The process's start time (Linux), so a pid reused by another process is never killed. */
  startedAt: string | null;
}

const pidDirOf = (dataDir: string) => path.join(dataDir, 'pids');
const WATCHDOG = path.join(import.meta.dirname, 'watchdog.ts');

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); null where there is no /proc or no such process. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid files of `pidDir`; unreadable ones are dropped. */
export function readPidRecords(pidDir: string): { file: string; record: PidRecord }[] {
  let names: string[];
  try {
    names = readdirSync(pidDir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const file = path.join(pidDir, name);
    try {
      return [{ file, record: JSON.parse(readFileSync(file, 'utf8')) as PidRecord }];
    } catch {
      rmSync(file, { force: true });
      return [];
    }
  });
}

/** Kills each recorded process still alive as the same process, and removes its file. Returns what was killed. */
export function killRecorded(pidDir: string): PidRecord[] {
  const killed: PidRecord[] = [];
  for (const { file, record } of readPidRecords(pidDir)) {
    const same = isAlive(record.pid) && (record.startedAt === null || processStartTime(record.pid) === record.startedAt);
    if (same) {
      try {
        process.kill(record.pid, 'SIGKILL');
        killed.push(record);
      } catch {
        // Gone in between: nothing to do.
      }
    }
    rmSync(file, { force: true });
  }
  return killed;
}

function record(pidDir: string, child: ChildProcess, kind: LocalChildKind) {
  if (child.pid === undefined) return;
  const file = path.join(pidDir, `${kind}-${child.pid}.json`);
  const entry: PidRecord = { pid: child.pid, kind, startedAt: processStartTime(child.pid) };
  writeFileSync(file, JSON.stringify(entry));
  child.once('exit', () => rmSync(file, { force: true }));
}

export interface Supervision {
  /** Called when DynamoDB Local exits while the stack did not ask it to. */
  onDatabaseDeath(listener: (why: string) => void): void;
  /** The stack is stopping on purpose: children exiting now are expected. */
  stopping(): void;
}

/**
 * Reaps what an earlier crash left, starts the watchdog and records every child from now on. Call
 * before the emulators start, so the JVM is recorded too.
 */
export function superviseLocalChildren(dataDir: string, progress: (msg: string) => void): Supervision {
  const pidDir = pidDirOf(dataDir);
  mkdirSync(pidDir, { recursive: true });
  for (const stale of killRecorded(pidDir)) progress(`stopped a ${stale.kind} process (pid ${stale.pid}) left by an earlier crash`);

  // Detached: Ctrl-C in the terminal reaches the stack (which stops its children itself), not the watchdog.
  const watchdog = spawn(process.execPath, ['--import', 'tsx', WATCHDOG, pidDir, String(process.pid)], {
    stdio: ['pipe', 'ignore', 'inherit'],
    detached: true,
  });
  watchdog.unref();

  let expected = false;
  const deathListeners: ((why: string) => void)[] = [];
  onLocalChildSpawned((child, kind) => {
    record(pidDir, child, kind);
    if (kind !== 'dynamodb-local') return;
    child.once('exit', (code, signal) => {
      if (expected) return;
      const why = `DynamoDB Local (pid ${child.pid}) exited unexpectedly (${signal ?? `code ${code}`})`;
      for (const listener of deathListeners) listener(why);
    });
  });
  return {
    onDatabaseDeath: (listener) => deathListeners.push(listener),
    stopping: () => {
      expected = true;
    },
  };
}
