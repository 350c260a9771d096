import type { Logger } from 'pino';
import type { Core } from '../core/context';
import { eventFeedOf, LEGACY_TYPES, type FeedItem, type Follower, type ZitiEvent } from '../core/ops/index';
import { ConfigError } from '../config';
import type { EventLoggerConfig, EventsConfig, Subscription } from './config';
import { checkSinkPath, RotatingFile, SinkPathError, stdoutSink, type Sink } from './fileSink';

/** A configured logger at work. */
export interface RunningLogger {
  name: string;
  follower: Follower;
  sink: Sink;
}

/** Checks what start-up can check of the loggers before anything is written: their file paths. Throws ConfigError (one line). */
export function checkEventLoggers(events: EventsConfig): void {
  for (const [name, logger] of Object.entries(events)) {
    if (logger.handler.type !== 'file') continue;
    try {
      checkSinkPath(logger.handler.path!);
    } catch (e) {
      if (e instanceof SinkPathError) throw new ConfigError(`events.${name}.handler.path: ${e.message}`);
      throw e;
    }
  }
}

/**
 * Which events a logger takes, and under which namespace: an event passes when one of its subscriptions takes it
 * (type, then `include`); a subscription by OpenZiti's old name (edge.apiSessions, …) renames the namespace as
 * OpenZiti does (except edge.authentications). A change's `committed` event goes with the change.
 */
export function eventFilter(subscriptions: Subscription[]): (event: ZitiEvent) => ZitiEvent | undefined {
  const byType = new Map<string, Subscription>();
  for (const s of subscriptions) byType.set(LEGACY_TYPES[s.type] ?? s.type, s);
  const passedChanges = new Set<unknown>();
  return (event) => {
    const s = byType.get(event.namespace);
    if (!s) return undefined;
    if (event.namespace === 'entityChange') {
      if (event.eventType === 'committed') {
        if (!passedChanges.delete(event.eventId)) return undefined;
        return event;
      }
      if (s.include && !s.include.includes(String(event.entityType))) return undefined;
      passedChanges.add(event.eventId);
      return event;
    }
    if (s.include && !s.include.includes(String(event.event_type))) return undefined;
    if (s.type !== event.namespace && s.type !== 'edge.authentications') return { ...event, namespace: s.type };
    return event;
  };
}

/** One JSON object per line, as Go's encoding/json writes it (HTML characters escaped). */
export const jsonLine = (event: ZitiEvent): string =>
  JSON.stringify(event).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';

/**
 * Starts the configured loggers: each follows the core's event feed from where it stopped last time (on this node),
 * keeps the events its subscriptions take and appends them to its handler. Writing never holds up the API: a logger
 * reads the outbox at its own pace; a batch its handler cannot take (a full disk, a broken pipe) is dropped with a
 * counted warning, and the logger goes on with the next events.
 */
export async function startEventLoggers(core: Core, events: EventsConfig, log: Logger): Promise<{ loggers: RunningLogger[]; stop(): Promise<void> }> {
  const loggers: RunningLogger[] = [];
  const stop = async () => {
    for (const l of loggers) l.follower.close();
    for (const l of loggers) await l.sink.close();
  };
  try {
    for (const [name, config] of Object.entries(events)) loggers.push(await startLogger(core, name, config, log));
  } catch (e) {
    await stop();
    throw e;
  }
  if (loggers.length) log.info({ loggers: loggers.map((l) => l.name) }, 'event loggers started');
  return { loggers, stop };
}

async function startLogger(core: Core, name: string, config: EventLoggerConfig, log: Logger): Promise<RunningLogger> {
  const h = config.handler;
  const sink: Sink = h.type === 'file' ? new RotatingFile(h.path!, h.maxsizemb * 1024 * 1024, h.maxbackups, () => core.clock.now()) : stdoutSink;
  const accept = eventFilter(config.subscriptions);
  const deliver = async (items: FeedItem[]) => {
    let text = '';
    for (const { event } of items) {
      const kept = accept(event);
      if (kept) text += jsonLine(kept);
    }
    if (text) await sink.write(text);
  };
  const follower = await eventFeedOf(core).follow(
    {
      name,
      onDropped: (count, err) =>
        log.warn({ err, logger: name, count, droppedTotal: follower.dropped }, 'events dropped: the event logger could not write them'),
    },
    deliver,
  );
  return { name, follower, sink };
}
