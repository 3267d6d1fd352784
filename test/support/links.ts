/** The targets of an RFC 8288 `Link` header by relation. */
export function linksOf(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  for (const match of (header ?? '').matchAll(/<([^>]*)>;\s*rel="([^"]+)"/g)) links[match[2]] = match[1];
  return links;
}
