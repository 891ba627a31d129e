// One-shot speech-to-text: the uploaded audio is checked by its first bytes, then streamed to the
// deployment's OpenAI-compatible `/audio/transcriptions` and dropped. Nothing is stored or logged:
// no file, no row, and no error message carries the file's name or the text.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { AppError, BadRequestError } from '../../platform/http/errors.js';

/** The provider, from the deployment's configuration (trusted like every configuration URL). */
export interface TranscriptionProvider {
  baseUrl: string;
  apiKey?: string;
  model?: string;
}

/** The parts of a multipart request, as @fastify/multipart yields them (only what is used here). */
export type AudioPart =
  | { type: 'file'; fieldname: string; file: Readable & { truncated?: boolean } }
  | { type: 'field'; fieldname: string; value: unknown };

export interface Transcript {
  text: string;
  durationMs: number;
}

const HEAD_BYTES = 12;
const PROVIDER_TIMEOUT_MS = 120_000;
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

class TranscriptionError extends AppError {
  constructor(status: number, message: string, code: string) {
    super(status, message, code);
  }
}

export const notConfigured = () => new TranscriptionError(503, 'Speech-to-text is not configured on this deployment', 'TRANSCRIBE_NOT_CONFIGURED');
const tooLarge = (limit: number) => new TranscriptionError(413, `The audio is larger than the limit of ${Math.round(limit / 1024)} KB`, 'AUDIO_TOO_LARGE');
const notAudio = () =>
  new TranscriptionError(415, 'The file is not audio this service takes (WAV, MP3, OGG/Opus, WebM, M4A or FLAC, recognised by its content)', 'UNSUPPORTED_AUDIO');
const providerFailed = (why: string) => new TranscriptionError(502, `The transcription provider failed: ${why}`, 'TRANSCRIBE_FAILED');

/** The audio format by its first bytes (the declared type and the name are not trusted), or undefined. */
export function audioFormat(head: Buffer): string | undefined {
  const ascii = (start: number, end: number) => head.subarray(start, end).toString('latin1');
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'wav';
  if (ascii(0, 3) === 'ID3') return 'mp3';
  if (head.length >= 2 && head[0] === 0xff && (head[1]! & 0xe0) === 0xe0 && (head[1]! & 0x06) !== 0) return 'mp3';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (ascii(4, 8) === 'ftyp') return 'm4a';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  return undefined;
}

/**
 * An error while reading the request's own parts: the limit, ours, or the parser's (a part cut off, no
 * boundary, too many fields), which comes from the request's bytes: a 400, not a 500.
 */
function refusal(error: unknown, limit: number): unknown {
  if ((error as { code?: unknown } | undefined)?.code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(limit);
  if (error instanceof AppError) return error;
  return new BadRequestError('The multipart body is malformed (a part cut off, no boundary, or too many parts)', 'INVALID_MULTIPART');
}

function languageOf(value: unknown): string {
  if (typeof value !== 'string' || !LANGUAGE.test(value)) {
    throw new BadRequestError("'language' must be a language code such as 'en' or 'pt-BR'", 'INVALID_LANGUAGE');
  }
  return value;
}

export function createTranscriptionService(options: { provider?: TranscriptionProvider; limitBytes: number }) {
  const { provider, limitBytes } = options;

  return {
    configured: () => provider !== undefined,

    async transcribe(parts: AsyncIterable<AudioPart>): Promise<Transcript> {
      if (!provider) throw notConfigured();
      const incoming = parts[Symbol.asyncIterator]();
      let language: string | undefined;
      let file: AudioPart & { type: 'file' } | undefined;
      try {
        // Fields before the file, then the file's first bytes.
        for (let step = await incoming.next(); !step.done; step = await incoming.next()) {
          const part = step.value;
          if (part.type === 'file') {
            if (part.fieldname !== 'file') {
              part.file.resume();
              throw new BadRequestError("Send the audio in the multipart field 'file'", 'NO_FILE');
            }
            file = part;
            break;
          }
          if (part.fieldname === 'language') language = languageOf(part.value);
        }
      } catch (error) {
        throw refusal(error, limitBytes);
      }
      if (!file) throw new BadRequestError("No audio was uploaded: send it in the multipart field 'file'", 'NO_FILE');

      const chunks = file.file[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      const head: Buffer[] = [];
      let headLength = 0;
      let ended = false;
      try {
        while (headLength < HEAD_BYTES) {
          const step = await chunks.next();
          if (step.done) {
            ended = true;
            break;
          }
          head.push(step.value);
          headLength += step.value.length;
        }
      } catch (error) {
        throw refusal(error, limitBytes);
      }
      if (headLength === 0) throw new BadRequestError('The audio is empty', 'EMPTY_FILE');
      const format = audioFormat(Buffer.concat(head));
      if (!format) {
        file.file.resume();
        throw notAudio();
      }

      // The body to the provider, streamed: the file as it arrives, then the fields.
      let uploadError: unknown;
      const boundary = `----transcribe${randomBytes(12).toString('hex')}`;
      const field = (name: string, value: string) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
      async function* body(): AsyncGenerator<Buffer> {
        try {
          yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="audio.${format}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
          yield* head;
          for (let step = ended ? undefined : await chunks.next(); step && !step.done; step = await chunks.next()) yield step.value;
          yield Buffer.from('\r\n');
          for (let step = await incoming.next(); !step.done; step = await incoming.next()) {
            const part = step.value;
            if (part.type === 'file') {
              part.file.resume();
              throw new BadRequestError("Send exactly one audio file, in the multipart field 'file'", 'ONE_FILE');
            }
            if (part.fieldname === 'language') language = languageOf(part.value);
          }
          if (provider!.model) yield field('model', provider!.model);
          if (language) yield field('language', language);
          yield field('response_format', 'json');
          yield Buffer.from(`--${boundary}--\r\n`);
        } catch (error) {
          uploadError = refusal(error, limitBytes);
          throw uploadError;
        }
      }

      const started = Date.now();
      let response: Response;
      try {
        response = await fetch(`${provider.baseUrl.replace(/\/$/, '')}/audio/transcriptions`, {
          method: 'POST',
          headers: {
            'content-type': `multipart/form-data; boundary=${boundary}`,
            ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
          },
          body: Readable.toWeb(Readable.from(body())) as ReadableStream<Uint8Array>,
          duplex: 'half',
          signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
        } as RequestInit & { duplex: 'half' });
      } catch (error) {
        if (uploadError) throw uploadError;
        throw providerFailed((error as Error).name === 'TimeoutError' ? 'no answer in time' : 'unreachable');
      }
      if (uploadError) throw uploadError;
      if (file.file.truncated) throw tooLarge(limitBytes);
      if (!response.ok) {
        await response.body?.cancel();
        throw providerFailed(`it answered ${response.status}`);
      }
      const answer = (await response.json().catch(() => undefined)) as { text?: unknown } | undefined;
      if (typeof answer?.text !== 'string') throw providerFailed('its answer carries no text');
      return { text: answer.text, durationMs: Date.now() - started };
    },
  };
}

export type TranscriptionService = ReturnType<typeof createTranscriptionService>;
