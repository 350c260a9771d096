import { downloadBlob } from './format';
/** Offers base64 data (e.g. a ZIP archive from the core) as a file download. */
export function downloadBase64(filename: string, base64: string, type: string): void {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  downloadBlob(filename, new Blob([bytes], { type }));
}

/** Reads a file the user picked as text. */
export function readText(file: File): Promise<string> {
  return file.text();
}
