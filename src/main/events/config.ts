import { z } from 'zod';
import { EMITTED_TYPES, LEGACY_TYPES, SILENT_TYPES } from '../core/ops/index';

/**
 * The `events:` section, as OpenZiti's controller config writes it (controller/events/dispatcher.go, v1.7.2): named
 * loggers, each with its subscriptions and one handler. Weft's handlers are `file` and `stdout`, with `format: json`
 * (OpenZiti's only format): one JSON object per line.
 *
 *   events:
 *     jsonLogger:
 *       subscriptions: [{ type: entityChange, include: [identities] }, { type: apiSession }]
 *       handler: { type: file, format: json, path: /var/log/weft-events.json, maxsizemb: 10, maxbackups: 5 }
 */
const KNOWN = [...EMITTED_TYPES, ...Object.keys(LEGACY_TYPES), ...SILENT_TYPES] as string[];

/** What `include` may name, per type (as OpenZiti checks it). */
const INCLUDES: Record<string, readonly string[] | 'any'> = {
  entityChange: 'any',
  apiSession: ['created', 'deleted'],
  session: ['created', 'deleted'],
  circuit: ['created', 'pathUpdated', 'deleted', 'failed'],
  authentication: ['success', 'fail'],
};

const stringList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((v) => (Array.isArray(v) ? v : [v]));
const flag = z.union([z.boolean(), z.enum(['true', 'false'])]).transform((v) => v === true || v === 'true');

const subscriptionSchema = z
  .object({
    type: z.string().refine((t) => KNOWN.includes(t), { error: (i) => `unknown event type ${String(i.input)} (one of ${KNOWN.join(', ')})` }),
    include: stringList.optional(),
    propagateAlways: flag.optional(),
    includeParentEvents: flag.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (!s.include) return;
    const allowed = INCLUDES[LEGACY_TYPES[s.type] ?? s.type];
    if (!allowed) ctx.addIssue({ code: 'custom', path: ['include'], message: `${s.type} events take no include list` });
    else if (allowed !== 'any') {
      const bad = s.include.find((v) => !allowed.includes(v));
      if (bad)
        ctx.addIssue({ code: 'custom', path: ['include'], message: `invalid include ${bad} for ${s.type}; valid values are ${allowed.join(', ')}` });
    }
  });

const handlerSchema = z
  .object({
    type: z.string().refine((t) => t === 'file' || t === 'stdout', {
      error: (i) => `invalid handler type ${String(i.input)}; Weft writes events to file or stdout (not to AMQP or Service Bus)`,
    }),
    format: z.string().refine((f) => f.toLowerCase() === 'json', { error: (i) => `invalid 'format' ${String(i.input)}: only json` }),
    path: z.string().min(1).optional(),
    /** rotate the file before it grows past this size */
    maxsizemb: z.number().int().min(1).max(1_000_000).default(10),
    /** rotated files kept (0: all) */
    maxbackups: z.number().int().min(0).max(10_000).default(0),
    /** OpenZiti's queue depth per handler; accepted (Weft's loggers read the outbox at their own pace) */
    bufferSize: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict()
  .superRefine((h, ctx) => {
    if (h.type === 'file' && !h.path) ctx.addIssue({ code: 'custom', path: ['path'], message: "missing required 'path' for a file handler" });
  });

export const eventLoggerSchema = z
  .object({
    subscriptions: z.array(subscriptionSchema).min(1, 'at least one subscription'),
    handler: handlerSchema,
  })
  .strict();

export const eventsConfigSchema = z.record(z.string().min(1), eventLoggerSchema);
export type EventsConfig = z.infer<typeof eventsConfigSchema>;
export type EventLoggerConfig = z.infer<typeof eventLoggerSchema>;
export type Subscription = z.infer<typeof subscriptionSchema>;
