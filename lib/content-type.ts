/**
 * The kinds of file a survey may carry (photos and PDF documents), each with a test of the
 * file's first bytes, so a commit can tell that the bytes really are what was declared.
 */
// Phones label the same HEIF container either way, so both types accept every HEIF brand.
const HEIF_BRANDS = ['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'hevm', 'hevs', 'mif1', 'msf1'];
const ISO_BMFF_BRANDS: Record<string, string[]> = {
  'image/heic': HEIF_BRANDS,
  'image/heif': HEIF_BRANDS,
  'image/avif': ['avif', 'avis'],
};

const startsWith = (head: Buffer, bytes: number[], offset = 0) => bytes.every((byte, index) => head[offset + index] === byte);
const ascii = (head: Buffer, start: number, end: number) => head.subarray(start, end).toString('latin1');

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
};

export const ALLOWED_ASSET_TYPES = Object.keys(SIGNATURES);

/** How many leading bytes `looksLike` needs. */
export const SIGNATURE_BYTES = 16;

// Names some phones and browsers send for a type that has a registered one.
const ALIASES: Record<string, string> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'application/x-pdf': 'application/pdf' };

/** `image/PNG; charset=x` -> `image/png`, `image/jpg` -> `image/jpeg`. */
export function normalizeContentType(contentType: string): string {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return ALIASES[type] ?? type;
}

export function isAllowedAssetType(contentType: string): boolean {
  return Object.hasOwn(SIGNATURES, contentType);
}

/** True when the file's first bytes match the declared (allowed) content type. */
export function looksLike(contentType: string, head: Buffer): boolean {
  return SIGNATURES[contentType]?.(head) ?? false;
}
