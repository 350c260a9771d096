export interface CoreFloor {
  name: string;
  units: readonly string[];
  holds: string;
}
export const CORE_FLOORS: ReadonlyArray<CoreFloor>;
export const ENGINES: readonly string[];
export const COMPOSITION: string;
export function unitOf(path: string): string;
export function floorOf(unit: string): number;
export function floorViolations(graph: Readonly<Record<string, readonly string[]>>): string[];
