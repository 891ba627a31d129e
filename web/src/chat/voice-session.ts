// A real-time voice call from the browser: opens the session (POST /api/ai/rt/session), connects to the
// service's relay with its one-use token as the subprotocol `twin-token.<token>`, streams the microphone
// as 24 kHz PCM16 `input_audio_buffer.append` frames (the provider detects turns), plays the answer's
// audio deltas, and reports captions. The service sets the instructions, voice and tools and runs the
// tools; this side only talks and listens. Hang-up ends the session for every process (the end route).
import { rawFetch } from '../api/client';

const SAMPLE_RATE = 24_000;

export interface VoiceCallEvents {
  onCaption(caption: { who: 'you' | 'twin'; text: string; final: boolean }): void;
  onEnded(reason: string): void;
}

export interface VoiceCallHandle {
  hangUp(): Promise<void>;
}

interface OpenedSession {
  sessionId: string;
  url: string;
  token: string;
}

export async function startVoiceCall(assistantId: string | undefined, events: VoiceCallEvents): Promise<VoiceCallHandle> {
  const opened = (await (
    await rawFetch('/api/ai/rt/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(assistantId ? { assistantId } : {}) })
  ).json()) as OpenedSession;
  const media = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
  const audio = new AudioContext({ sampleRate: SAMPLE_RATE });
  const socket = new WebSocket(`${location.origin.replace(/^http/, 'ws')}${opened.url}`, ['realtime', `twin-token.${opened.token}`]);
  let ended = false;
  let playAt = 0;
  let answer = '';

  // The microphone, 20-ish ms at a time (ScriptProcessor: no extra module to load).
  const source = audio.createMediaStreamSource(media);
  const capture = audio.createScriptProcessor(512, 1, 1);
  capture.onaudioprocess = (event) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: pcm16Base64(event.inputBuffer.getChannelData(0)) }));
  };
  source.connect(capture);
  capture.connect(audio.destination);

  socket.onmessage = (message) => {
    const event = JSON.parse(String(message.data)) as { type: string; delta?: string; transcript?: string; error?: { message?: string } };
    switch (event.type) {
      case 'response.output_audio.delta':
        if (event.delta) playAt = play(audio, event.delta, playAt);
        break;
      case 'conversation.item.input_audio_transcription.completed':
        events.onCaption({ who: 'you', text: event.transcript ?? '', final: true });
        break;
      case 'response.output_audio_transcript.delta':
        answer += event.delta ?? '';
        events.onCaption({ who: 'twin', text: answer, final: false });
        break;
      case 'response.output_audio_transcript.done':
        events.onCaption({ who: 'twin', text: event.transcript ?? answer, final: true });
        answer = '';
        break;
    }
  };

  const release = (reason: string) => {
    if (ended) return;
    ended = true;
    capture.disconnect();
    source.disconnect();
    for (const track of media.getTracks()) track.stop();
    void audio.close();
    events.onEnded(reason);
  };
  socket.onclose = (close) => release(close.reason || 'HANG_UP');

  return {
    async hangUp() {
      socket.close(1000, 'HANG_UP');
      release('HANG_UP');
      await rawFetch(`/api/ai/rt/session/${encodeURIComponent(opened.sessionId)}/end`, { method: 'POST' }).catch(() => undefined);
    },
  };
}

function pcm16Base64(samples: Float32Array): string {
  const bytes = new Uint8Array(samples.length * 2);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, Math.max(-1, Math.min(1, samples[i]!)) * 0x7fff, true);
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary);
}

/** Queues one PCM16 delta after the audio already queued; answers when it will end. */
function play(audio: AudioContext, delta: string, playAt: number): number {
  const binary = atob(delta);
  const samples = new Float32Array(Math.floor(binary.length / 2));
  for (let i = 0; i < samples.length; i++) {
    const value = binary.charCodeAt(i * 2) | (binary.charCodeAt(i * 2 + 1) << 8);
    samples[i] = (value >= 0x8000 ? value - 0x10000 : value) / 0x8000;
  }
  if (samples.length === 0) return playAt;
  const buffer = audio.createBuffer(1, samples.length, SAMPLE_RATE);
  buffer.copyToChannel(samples, 0);
  const node = audio.createBufferSource();
  node.buffer = buffer;
  node.connect(audio.destination);
  const start = Math.max(audio.currentTime, playAt);
  node.start(start);
  return start + buffer.duration;
}
