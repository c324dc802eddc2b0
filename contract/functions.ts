/**
 * Where each function's handler lives: a contract group's under `functions/http/<group>/`, a worker's
 * (the functions that answer no HTTP route) under `functions/workers/<name>/`. CDK, the local stack,
 * the bench and the tests all find a handler through `handlerPath`, so the layout is spelled once.
 */
export const WORKER_FOLDERS = ['provisioner', 'heartbeat', 'task-events', 'webhook-delivery'] as const;

const isWorker = (folder: string): boolean => (WORKER_FOLDERS as readonly string[]).includes(folder);

/** The handler of a function folder (a contract group or a worker), relative to the repository root. */
export const handlerPath = (folder: string): string => `functions/${isWorker(folder) ? 'workers' : 'http'}/${folder}/handler.ts`;
