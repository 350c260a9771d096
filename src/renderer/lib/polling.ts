/** Live views poll every 2 s; after failures the interval doubles up to 30 s; nothing is polled in the background. */
const POLL_MS = 2000;
const MAX_BACKOFF_MS = 30_000;

export const livePolling = {
  refetchInterval: (q: { state: { errorUpdateCount: number } }) => Math.min(MAX_BACKOFF_MS, POLL_MS * 2 ** q.state.errorUpdateCount),
  refetchIntervalInBackground: false,
} as const;
