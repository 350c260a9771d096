/** The console's tRPC router type for the renderer (a type-only import: no main-process code reaches the bundle). */
export type { AppRouter } from '../main/console/router';
