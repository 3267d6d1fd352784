/**
 * Content types an upload may be checked against, each with a test of the file's first bytes, so a
 * commit can tell that the bytes really are what was declared (`lib/storage/uploads.ts`). Each service
 * names the types it allows; the tests live here once.
 */
// Phones label the same HEIF container either way, so both types accept every HEIF brand.
const HEIF_BRANDS = ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'hevm', 'hevs', 'mif1', 'msf1'];
const ISO_BMFF_BRANDS: Record<string, string[]> = {
  'image/heic': HEIF_BRANDS,
  'image/heif': HEIF_BRANDS,
  'image/avif': ['avif', 'avis'],
};
/** ISO BMFF brands that are pictures, not films: `video/mp4` is any other `ftyp` but QuickTime's. */
const IMAGE_BRANDS = new Set([...HEIF_BRANDS, 'avif', 'avis']);
/** The atoms a QuickTime file may open with when it has no `ftyp` (older cameras). */
const QUICKTIME_ATOMS = ['moov', 'mdat', 'wide', 'free', 'skip', 'pnot'];

const startsWith = (head: Buffer, bytes: number[], offset = 0) =>
  bytes.every((byte, index) => head[offset + index] === byte);
const ascii = (head: Buffer, start: number, end: number) => head.subarray(start, end).toString('latin1');

/** Text: no NUL byte, and UTF-8 as far as it goes (the head may cut a character in two). */
function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

const SIGNATURES: Record<string, (head: Buffer) => boolean> = {
  'image/jpeg': (head) => startsWith(head, [0xff, 0xd8, 0xff]),
  'image/png': (head) => startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/gif': (head) => ascii(head, 0, 6) === 'GIF87a' || ascii(head, 0, 6) === 'GIF89a',
  'image/webp': (head) => ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 12) === 'WEBP',
  'application/pdf': (head) => ascii(head, 0, 5) === '%PDF-',
  ...Object.fromEntries(
    Object.entries(ISO_BMFF_BRANDS).map(([type, brands]) => [
      type,
      (head: Buffer) => ascii(head, 4, 8) === 'ftyp' && brands.includes(ascii(head, 8, 12)),
    ]),
  ),
  'video/mp4': (head) =>
    ascii(head, 4, 8) === 'ftyp' && ascii(head, 8, 12) !== 'qt  ' && !IMAGE_BRANDS.has(ascii(head, 8, 12)),
  'video/quicktime': (head) =>
    (ascii(head, 4, 8) === 'ftyp' && ascii(head, 8, 12) === 'qt  ') || QUICKTIME_ATOMS.includes(ascii(head, 4, 8)),
  'video/webm': (head) => startsWith(head, [0x1a, 0x45, 0xdf, 0xa3]),
  'text/csv': looksLikeText,
  'text/plain': looksLikeText,
};

/** Every type whose first bytes can be checked. */
export const CHECKABLE_TYPES = Object.keys(SIGNATURES);

/** How many leading bytes `looksLike` needs. */
export const SIGNATURE_BYTES = 16;

// Names some phones and browsers send for a type that has a registered one.
const ALIASES: Record<string, string> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'application/x-pdf': 'application/pdf',
};

/** `image/PNG; charset=x` -> `image/png`, `image/jpg` -> `image/jpeg`. */
export function normalizeContentType(contentType: string): string {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return ALIASES[type] ?? type;
}

/** True when the first bytes of a file of `contentType` can be checked. */
export function isCheckable(contentType: string): boolean {
  return Object.hasOwn(SIGNATURES, contentType);
}

/** True when the file's first bytes match the declared (checkable) content type. */
export function looksLike(contentType: string, head: Buffer): boolean {
  return SIGNATURES[contentType]?.(head) ?? false;
}
