import pg from 'pg';
import type { Logger } from '../observability/logger.js';
import type { Orm } from './database.js';

/**
 * The database's word that a service's event log grew: the trigger of the log (`eventLogSql`) calls
 * `pg_notify` in the writing transaction, which PostgreSQL delivers on commit to every session
 * listening on the channel, in every process. `onSignal` also runs after a (re)connection, since
 * notifications sent while no one listened are gone: the reader then reads what it missed.
 */
export interface EventSignals {
  close(): Promise<void>;
}

/** How long a dropped listening connection waits before it tries again, doubling up to the second figure. */
const RECONNECT_MS = [250, 5000] as const;

/** Listens on `channel` with one connection of its own to `databaseUrl`, reconnecting after a drop. */
export function listenOnPostgres(
  databaseUrl: string,
  channel: string,
  onSignal: () => void,
  log: Logger,
): EventSignals {
  let closed = false;
  let client: pg.Client | undefined;
  let delay: number = RECONNECT_MS[0];
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    retry = undefined;
    if (closed) return;
    const connecting = new pg.Client({ connectionString: databaseUrl });
    client = connecting;
    const dropped = (error?: Error) => {
      if (client !== connecting) return;
      client = undefined;
      connecting.removeAllListeners();
      connecting.end().catch(() => undefined);
      if (closed) return;
      log.warn({ err: error, channel, retryInMs: delay }, 'event notifications lost their connection; reconnecting');
      retry = setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, RECONNECT_MS[1]);
    };
    connecting.on('error', dropped);
    connecting.on('end', () => dropped());
    connecting.on('notification', onSignal);
    try {
      await connecting.connect();
      await connecting.query(`listen "${channel}"`);
      delay = RECONNECT_MS[0];
      // Whatever was committed while no one listened is read now.
      onSignal();
    } catch (error) {
      dropped(error as Error);
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const open = client;
      client = undefined;
      if (open) {
        open.removeAllListeners();
        open.on('error', () => undefined);
        await open.end().catch(() => undefined);
      }
    },
  };
}

interface PgliteLike {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** Listens on `channel` of the embedded PGlite: its one connection delivers the notifications of this process's commits. */
export async function listenOnPglite(orm: Orm, channel: string, onSignal: () => void): Promise<EventSignals> {
  const connection = orm.em.getConnection() as unknown as { getNativeClient(): Promise<PgliteLike> };
  const pglite = await connection.getNativeClient();
  const unlisten = await pglite.listen(channel, () => onSignal());
  return { close: () => unlisten().catch(() => undefined) };
}
