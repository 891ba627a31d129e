// Dictation into the question box: the microphone records (MediaRecorder) until the person stops it,
// the recording goes to POST /api/ai/transcribe, and the text lands in the box for the person to edit
// and send. Hidden when the service has no transcription provider: the client asks the route itself
// once per visit (an empty form answers 503 TRANSCRIBE_NOT_CONFIGURED without a provider, 400 NO_FILE
// with one), so no other answer has to carry the flag.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/api-error';
import { rawFetch } from '../api/client';
import { explainError } from '../api/errors';

const TRANSCRIBE = '/api/ai/transcribe';
/** A dictation stops by itself after this long (the service's upload limit is far above it). */
const MAX_RECORDING_MS = 120_000;
const RECORDING_TYPES = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm', 'audio/mp4'];

/**
 * Whether the service transcribes for this caller: the empty form is refused as 400 NO_FILE (or 429 when
 * the person is past the rate) only where a provider is configured; 503 (no provider), 403 (an embedded
 * page's visitor) or 404 (an older service) hide the button.
 */
export async function probeTranscription(): Promise<boolean> {
  try {
    await rawFetch(TRANSCRIBE, { method: 'POST', body: new FormData() });
    return true;
  } catch (error) {
    return error instanceof ApiError && (error.status === 400 || error.status === 429);
  }
}

function recordingType(): string | undefined {
  return RECORDING_TYPES.find((type) => MediaRecorder.isTypeSupported(type));
}

async function transcribe(audio: Blob): Promise<string> {
  const form = new FormData();
  const extension = audio.type.includes('ogg') ? 'ogg' : audio.type.includes('mp4') ? 'm4a' : 'webm';
  form.append('file', audio, `dictation.${extension}`);
  const response = await rawFetch(TRANSCRIBE, { method: 'POST', body: form });
  const answer = (await response.json()) as { text?: string };
  return (answer.text ?? '').trim();
}

type Phase = 'idle' | 'recording' | 'transcribing';

export function DictationButton({ onText, disabled }: { onText: (text: string) => void; disabled?: boolean }) {
  const available = useQuery({ queryKey: ['transcription-available'], queryFn: probeTranscription, staleTime: Infinity, retry: false });
  const [phase, setPhase] = useState<Phase>('idle');
  const [error, setError] = useState<unknown>(null);
  const recorder = useRef<MediaRecorder | null>(null);
  const limit = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // Leaving the page stops the microphone.
  useEffect(
    () => () => {
      clearTimeout(limit.current);
      recorder.current?.stream.getTracks().forEach((track) => track.stop());
    },
    [],
  );

  if (!available.data || typeof MediaRecorder === 'undefined' || !navigator.mediaDevices) return null;

  const start = async () => {
    setError(null);
    let stream: MediaStream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch {
      setError(new Error('The microphone could not be used: allow it in the browser to dictate.'));
      return;
    }
    const type = recordingType();
    const media = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
    const chunks: Blob[] = [];
    media.ondataavailable = (event) => {
      if (event.data.size > 0) chunks.push(event.data);
    };
    media.onstop = () => {
      clearTimeout(limit.current);
      stream.getTracks().forEach((track) => track.stop());
      recorder.current = null;
      setPhase('transcribing');
      transcribe(new Blob(chunks, { type: media.mimeType || type || 'audio/webm' }))
        .then((text) => text && onText(text))
        .catch((failure: unknown) => setError(failure))
        .finally(() => setPhase('idle'));
    };
    recorder.current = media;
    media.start();
    setPhase('recording');
    limit.current = setTimeout(() => media.state === 'recording' && media.stop(), MAX_RECORDING_MS);
  };

  const stop = () => {
    if (recorder.current?.state === 'recording') recorder.current.stop();
  };

  return (
    <>
      {phase === 'recording' ? (
        <button type="button" className="button-danger" onClick={stop} aria-label="Stop dictation">
          Stop dictation
        </button>
      ) : (
        <button type="button" className="button-secondary" onClick={() => void start()} disabled={disabled || phase === 'transcribing'} aria-label="Dictate with the microphone">
          {phase === 'transcribing' ? 'Transcribing…' : 'Dictate'}
        </button>
      )}
      {error !== null && (
        <p className="notice notice-error" role="alert">
          {explainError(error).detail}
        </p>
      )}
    </>
  );
}
