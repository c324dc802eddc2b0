/**
 * The local stack's watchdog (started by local/supervision.ts): it reads the pipe the stack
 * holds open on its stdin. When the stack process is gone, by a clean stop, a crash or SIGKILL, the
 * pipe closes and the watchdog kills the children recorded under the pid folder, then exits.
 * Usage: watchdog.ts <pidDir> <stackPid>
 */
import { killRecorded } from './supervision';

const [pidDir, stackPid] = process.argv.slice(2);
if (!pidDir || !stackPid) {
  process.stderr.write('usage: watchdog.ts <pidDir> <stackPid>\n');
  process.exit(2);
}

let done = false;
const reap = () => {
  if (done) return;
  done = true;
  const killed = killRecorded(pidDir);
  if (killed.length) {
    const list = killed.map((k) => `${k.kind} ${k.pid}`).join(', ');
    process.stderr.write(`[local] the stack (pid ${stackPid}) is gone: stopped what it left running (${list})\n`);
  }
  process.exit(0);
};

process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
process.stdin.resume();
// A stop signal to the watchdog itself still leaves nothing behind.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, reap);
