// pngjs ships no types; the tests use only PNG.sync.read (to decode QR codes).
declare module 'pngjs' {
  export const PNG: { sync: { read(buffer: Buffer): { width: number; height: number; data: Buffer } } };
}
