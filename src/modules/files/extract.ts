// Text extraction for each kind the vault takes. Bad input (corrupt PDF, ZIP bomb in a DOCX,
// invalid UTF-8) raises ExtractionError with a reason a person can read; the file then ends in the
// `error` status with that reason instead of being retried. The readers of each kind (unpdf, mammoth,
// html-to-text) are loaded at the first file of that kind, not at start: most processes never read one.
import { Unzip, UnzipInflate, type UnzipFile } from 'fflate';
import type { FileKind } from './detect.js';

export class ExtractionError extends Error {}

/** Largest total of uncompressed bytes a DOCX may inflate to, and its largest compression ratio. */
export const DOCX_LIMITS = { maxTotalBytes: 64 * 1024 * 1024, maxRatio: 200, ratioFloorBytes: 1024 * 1024, maxEntries: 5_000 };

export async function extractText(kind: FileKind, content: Buffer): Promise<string> {
  switch (kind) {
    case 'pdf':
      return extractPdf(content);
    case 'docx':
      return extractDocx(content);
    case 'html':
      return await htmlToText(decodeUtf8(content));
    case 'markdown':
    case 'text':
      return decodeUtf8(content);
    case 'image':
      return '';
  }
}

export function decodeUtf8(content: Buffer): string {
  if (content.includes(0)) throw new ExtractionError('The file is not text: it contains binary data');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(content);
  } catch {
    throw new ExtractionError('The file is not valid UTF-8 text');
  }
}

export async function htmlToText(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
    ],
  });
}

async function extractPdf(content: Buffer): Promise<string> {
  const { extractText: extractPdfText } = await import('unpdf');
  let pages: string[];
  try {
    ({ text: pages } = await extractPdfText(new Uint8Array(content), { mergePages: false }));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExtractionError(`The PDF could not be read (${reason.slice(0, 160)})`);
  }
  return pages.join('\n\n');
}

async function extractDocx(content: Buffer): Promise<string> {
  const entries = inflateZipGuarded(content);
  if (!entries.has('word/document.xml')) throw new ExtractionError('The DOCX file has no document body (word/document.xml)');
  const { default: mammoth } = await import('mammoth');
  try {
    // mammoth re-reads the archive; the guard above has proved it inflates to a bounded size.
    const result = await mammoth.extractRawText({ buffer: content });
    return result.value;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ExtractionError(`The DOCX file could not be read (${reason.slice(0, 160)})`);
  }
}

/**
 * Inflates every entry while counting the real bytes produced (not the sizes the archive declares,
 * which a bomb can fake), and stops as soon as a limit is crossed. Returns the entry names.
 */
export function inflateZipGuarded(content: Buffer, limits = DOCX_LIMITS): Set<string> {
  const names = new Set<string>();
  let total = 0;
  let failure: ExtractionError | null = null;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (file: UnzipFile) => {
    if (failure) return;
    names.add(file.name);
    if (names.size > limits.maxEntries) {
      failure = new ExtractionError('The archive has too many entries');
      return;
    }
    let produced = 0;
    file.ondata = (error, data) => {
      if (failure) return;
      if (error) {
        failure = new ExtractionError(`The archive is corrupt (${error.message})`);
        return;
      }
      produced += data.length;
      total += data.length;
      const ratioExceeded = produced > limits.ratioFloorBytes && produced > (file.size ?? 0) * limits.maxRatio;
      if (total > limits.maxTotalBytes || ratioExceeded) {
        failure = new ExtractionError('The archive expands too much when unpacked (possible ZIP bomb); it was not processed');
        file.terminate();
      }
    };
    file.start();
  };
  try {
    // Pushed in small slices: deflate expands at most ~1032:1, so one 1 KB slice yields at most ~1 MB,
    // and a bomb is stopped after a few MB instead of after inflating everything it declares.
    const slice = 1024;
    for (let offset = 0; offset < content.length && !failure; offset += slice) {
      unzip.push(content.subarray(offset, offset + slice), offset + slice >= content.length);
    }
  } catch (error) {
    if (!failure) failure = new ExtractionError(`The archive is corrupt (${error instanceof Error ? error.message : String(error)})`);
  }
  if (failure) throw failure;
  return names;
}
