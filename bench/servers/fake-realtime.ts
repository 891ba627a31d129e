// The bench's fake real-time voice provider in its own process (test/support/fake-realtime-server.ts
// with echoFrames: every `input_audio_buffer.append` goes straight back as `response.output_audio.delta`).
// The bench's clients reach it both ways, straight and through the relay, so its own cost is in both
// and drops out of the difference. Reports its URL to the parent.
import { startFakeRealtimeServer } from '../../test/support/fake-realtime-server.js';

const provider = await startFakeRealtimeServer({ echoFrames: true });
process.send?.({ url: provider.url });
