import { buildApp } from 'fauxqs';

/**
 * fauxqs with its SQLite persistence (`dataDir`), listening where we tell it. fauxqs wires
 * persistence only inside `startFauxqs`, which always listens on 0.0.0.0; the stack must stay on
 * loopback, so this repeats that wiring around `buildApp` with fauxqs's own store and persistence
 * classes (they are not in the package's exports map, hence the import by file URL). Every queue,
 * ready, delayed and in-flight message is written through at once and restored on the next start.
 */
type Stores = NonNullable<NonNullable<Parameters<typeof buildApp>[0]>['stores']>;
interface Persistence {
  load(sqs: Stores['sqsStore'], sns: Stores['snsStore'], s3: Stores['s3Store']): void;
  close(): void;
}
type Persisted<T> = T & { persistence?: Persistence };

async function fauxqsModule<T>(relativePath: string): Promise<T> {
  return (await import(new URL(relativePath, import.meta.resolve('fauxqs')).href)) as T;
}

export async function buildPersistentFauxqs(opts: { host: string; dataDir: string }) {
  const [{ SqsStore }, { SnsStore }, { S3Store }, { PersistenceManager }] = await Promise.all([
    fauxqsModule<{ SqsStore: new () => Stores['sqsStore'] }>('./sqs/sqsStore.js'),
    fauxqsModule<{ SnsStore: new () => Stores['snsStore'] }>('./sns/snsStore.js'),
    fauxqsModule<{ S3Store: new () => Stores['s3Store'] }>('./s3/s3Store.js'),
    fauxqsModule<{ PersistenceManager: new (dataDir: string) => Persistence }>('./persistence.js'),
  ]);
  const stores: Stores = { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() };
  const persistence = new PersistenceManager(opts.dataDir);
  // As startFauxqs does: load first, then attach, so restoring does not write every row back.
  persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
  for (const store of [stores.sqsStore, stores.snsStore, stores.s3Store, ...stores.sqsStore.allQueues()])
    (store as Persisted<object>).persistence = persistence;
  const app = buildApp({ logger: false, host: opts.host, stores });
  app.addHook('preClose', () => persistence.close());
  return app;
}
