/** `npm run routes` prints the route table; `-- --json` prints it for machines. */
import { allRoutes } from '#contract';

const rows = allRoutes.map((r) => ({ method: r.method, path: r.path, group: r.group, operation: r.operation, auth: r.auth, rateLimit: r.rateLimit ?? '-' }));

if (process.argv.includes('--json')) {
  process.stdout.write(
    JSON.stringify(
      rows.map(({ rateLimit: _r, ...rest }) => rest),
      null,
      2,
    ) + '\n',
  );
} else {
  const cols = ['method', 'path', 'group', 'operation', 'auth', 'rateLimit'] as const;
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(c.length, ...rows.map((r) => String(r[c]).length))]));
  const line = (r: Record<string, string>) =>
    cols
      .map((c) => String(r[c]).padEnd(width[c]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(
    [
      line(Object.fromEntries(cols.map((c) => [c, c.toUpperCase()]))),
      ...rows.map(line),
      '',
      `${rows.length} routes in ${new Set(rows.map((r) => r.group)).size} groups`,
    ].join('\n') + '\n',
  );
}
