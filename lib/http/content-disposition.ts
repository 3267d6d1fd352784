/**
 * A `Content-Disposition` value that is safe whatever the file name: an ASCII fallback with
 * quotes and control characters removed, and the exact name in RFC 5987 `filename*`.
 */
export function contentDisposition(filename: string, kind: 'attachment' | 'inline' = 'attachment'): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_').slice(0, 200) || 'file';
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}
