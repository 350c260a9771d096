export function openzitiStamp(root?: string): string;
export function openzitiDir(): string;
