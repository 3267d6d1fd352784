import { AppError } from '#lib/errors.js';
import type { AssetService } from '../assets/asset.service.js';
import { SurveyStatus, type Survey } from '../survey/survey.entity.js';
import type { SurveyService } from '../survey/survey.service.js';
import { EXPORT_FORMATS, type ExportFormat, type SurveyExport } from './export.types.js';

/** Exports are shared (a WhatsApp message, a printed page), so their photo links live longer (S3's maximum). */
const EXPORT_LINK_SECONDS = 7 * 24 * 60 * 60;

/** An asset as an export shows it: its name, its kind and a link that outlives the request. */
interface ExportedAsset {
  filename: string;
  contentType: string;
  url: string | null;
}

/** A survey the user may see, as a document in one of EXPORT_FORMATS with links to its committed assets. */
export class ExportService {
  constructor(
    private readonly surveys: SurveyService,
    private readonly assets: AssetService,
  ) {}

  async export(id: string, format: string | null | undefined): Promise<SurveyExport> {
    const exportFormat = parseExportFormat(format);
    const survey = await this.surveys.get(id);
    const committed = (await this.assets.committedOf([survey.id])).get(survey.id) ?? [];
    const linked = await Promise.all(
      committed.map(async (asset) => ({
        filename: asset.filename,
        contentType: asset.contentType,
        url: await this.assets.downloadUrl(asset, EXPORT_LINK_SECONDS),
      })),
    );
    return renderSurvey(survey, linked, exportFormat);
  }
}

function parseExportFormat(format: string | null | undefined): ExportFormat {
  const value = (format ?? '').trim().toLowerCase();
  if (!(EXPORT_FORMATS as readonly string[]).includes(value)) {
    throw AppError.badInput('format', `must be one of ${EXPORT_FORMATS.join(', ')}`);
  }
  return value as ExportFormat;
}

interface Row {
  label: string;
  value: string;
}

function rowsOf(survey: Survey): Row[] {
  const rows: Row[] = [
    {
      label: 'Status',
      value:
        survey.status === SurveyStatus.SUBMITTED && survey.submittedAt
          ? `submitted ${survey.submittedAt.toISOString()}`
          : survey.status,
    },
    { label: 'Address', value: survey.address ?? '' },
    { label: 'Contact', value: survey.contactName ?? '' },
    { label: 'Phone', value: survey.contactPhone ?? '' },
    { label: 'Capacity', value: survey.capacity === null ? '' : String(survey.capacity) },
    { label: 'Surveyor', value: survey.ownerEmail },
  ];
  return rows.map((row) => ({ ...row, value: row.value || '—' }));
}

const slug = (text: string) =>
  text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'survey';

// ---------- HTML ----------

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Only http(s) links may appear in href/src: a stored `javascript:` URL would otherwise run on click. */
function safeUrl(url: string | null): string | null {
  return url && /^https?:\/\//i.test(url) ? url : null;
}

function renderHtml(survey: Survey, assets: ExportedAsset[]): string {
  const rows = rowsOf(survey)
    .map((row) => `      <tr><th scope="row">${escapeHtml(row.label)}</th><td>${escapeHtml(row.value)}</td></tr>`)
    .join('\n');
  const amenities = survey.amenities.length
    ? `<ul>\n${survey.amenities.map((item) => `      <li>${escapeHtml(item)}</li>`).join('\n')}\n    </ul>`
    : '<p>None recorded.</p>';
  const notes = survey.notes ? `<p class="notes">${escapeHtml(survey.notes)}</p>` : '<p>None.</p>';
  const photos = assets.length
    ? assets
        .map((asset) => {
          const url = safeUrl(asset.url);
          const name = escapeHtml(asset.filename);
          if (!url) return `      <figure><figcaption>${name}</figcaption></figure>`;
          const href = escapeHtml(url);
          const preview = asset.contentType.startsWith('image/')
            ? `<img src="${href}" alt="${name}">`
            : `<span class="doc">${name} (PDF)</span>`;
          return `      <figure><a href="${href}">${preview}</a><figcaption><a href="${href}">${name}</a></figcaption></figure>`;
        })
        .join('\n')
    : '      <p>No photos.</p>';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Venue survey: ${escapeHtml(survey.venueName)}</title>
  <style>
    body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 48rem; padding: 0 1rem; color: #111; }
    table { border-collapse: collapse; width: 100%; }
    th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
    th { width: 10rem; }
    .notes { white-space: pre-wrap; }
    .photos { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: 1rem; }
    figure { margin: 0; break-inside: avoid; }
    img { max-width: 100%; height: auto; border: 1px solid #ccc; }
    @media print { a { color: inherit; text-decoration: none; } body { margin: 0; } }
  </style>
</head>
<body>
  <h1>${escapeHtml(survey.venueName)}</h1>
  <table>
${rows}
  </table>
  <section>
    <h2>Amenities</h2>
    ${amenities}
  </section>
  <section>
    <h2>Notes</h2>
    ${notes}
  </section>
  <section>
    <h2>Photos</h2>
    <div class="photos">
${photos}
    </div>
  </section>
</body>
</html>
`;
}

// ---------- Markdown ----------

/**
 * Escapes text for CommonMark: every character that could start emphasis, code, links, HTML or
 * a table is backslash-escaped, as are the ones that make a line a heading, list or quote.
 */
function escapeMarkdown(text: string): string {
  return text
    .split(/\r?\n/)
    .map((line) =>
      line
        .replace(/[\\`*_{}[\]()<>#|~!&]/g, (char) => `\\${char}`)
        .replace(/^(\s*)([-+=])/, '$1\\$2')
        .replace(/^(\s*\d+)([.)])/, '$1\\$2'),
    )
    .join('\n');
}

/** Link targets may not break out of `( )`; spaces and parentheses are percent-encoded. */
function markdownUrl(url: string): string {
  return url.replace(/[\s()<>]/g, (char) => encodeURIComponent(char));
}

function renderMarkdown(survey: Survey, assets: ExportedAsset[]): string {
  const lines = [`# Venue survey: ${escapeMarkdown(survey.venueName)}`, ''];
  for (const row of rowsOf(survey)) lines.push(`- **${row.label}:** ${escapeMarkdown(row.value)}`);
  lines.push('', '## Amenities', '');
  if (survey.amenities.length) for (const item of survey.amenities) lines.push(`- ${escapeMarkdown(item)}`);
  else lines.push('None recorded.');
  lines.push('', '## Notes', '');
  // Two trailing spaces keep the surveyor's line breaks inside the paragraph.
  lines.push(survey.notes ? escapeMarkdown(survey.notes).split('\n').join('  \n') : 'None.');
  lines.push('', '## Photos', '');
  if (!assets.length) lines.push('No photos.');
  for (const asset of assets) {
    const url = safeUrl(asset.url);
    const name = escapeMarkdown(asset.filename);
    if (!url) lines.push(`- ${name}`);
    else if (asset.contentType.startsWith('image/')) lines.push(`![${name}](${markdownUrl(url)})`, '');
    else lines.push(`- [${name}](${markdownUrl(url)})`);
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

// ---------- WhatsApp ----------

// WhatsApp has no escape character: its markers in user text are swapped for look-alikes that it
// does not interpret (∗ asterisk operator, ＿ fullwidth low line, ∼ tilde operator, ˋ modifier grave).
const WHATSAPP_LOOKALIKES: Record<string, string> = { '*': '∗', _: '＿', '~': '∼', '`': 'ˋ' };

function escapeWhatsApp(text: string): string {
  return (
    text
      .replace(/[*_~`]/g, (char) => WHATSAPP_LOOKALIKES[char])
      .split(/\r?\n/)
      // A leading "> " quotes and "- " or "1. " starts a list; neither belongs to user text.
      .map((line) =>
        line
          .replace(/^(\s*)>/, '$1›')
          .replace(/^(\s*)-(\s)/, '$1–$2')
          .replace(/^(\s*\d+)\.(\s)/, '$1․$2'),
      )
      .join('\n')
  );
}

function renderWhatsApp(survey: Survey, assets: ExportedAsset[]): string {
  const lines = [`*Venue survey: ${escapeWhatsApp(survey.venueName)}*`, ''];
  for (const row of rowsOf(survey)) lines.push(`*${row.label}:* ${escapeWhatsApp(row.value)}`);
  lines.push('', '*Amenities:*');
  if (survey.amenities.length) for (const item of survey.amenities) lines.push(`- ${escapeWhatsApp(item)}`);
  else lines.push('None recorded.');
  lines.push('', '*Notes:*', survey.notes ? escapeWhatsApp(survey.notes) : 'None.');
  lines.push('', '*Photos:*');
  if (!assets.length) lines.push('No photos.');
  for (const asset of assets) {
    const url = safeUrl(asset.url);
    lines.push(`- ${escapeWhatsApp(asset.filename)}${url ? `: ${url}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Renders a survey in one of the three formats; every piece of user text is escaped for that format. */
function renderSurvey(survey: Survey, assets: ExportedAsset[], format: ExportFormat): SurveyExport {
  const base = `survey-${slug(survey.venueName)}`;
  switch (format) {
    case 'html':
      return {
        format,
        contentType: 'text/html; charset=utf-8',
        filename: `${base}.html`,
        body: renderHtml(survey, assets),
      };
    case 'markdown':
      return {
        format,
        contentType: 'text/markdown; charset=utf-8',
        filename: `${base}.md`,
        body: renderMarkdown(survey, assets),
      };
    case 'whatsapp':
      return {
        format,
        contentType: 'text/plain; charset=utf-8',
        filename: `${base}.txt`,
        body: renderWhatsApp(survey, assets),
      };
  }
}
