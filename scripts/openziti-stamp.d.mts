export function openzitiStamp(root?: string): string;
