/** Offers base64 data (e.g. a ZIP archive from the core) as a file download. */
export function downloadBase64(filename: string, base64: string, type: string): void {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Reads a file the user picked as text. */
export function readText(file: File): Promise<string> {
  return file.text();
}
