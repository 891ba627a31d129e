// The call button of the chat toolbar: a real-time voice call with the twin (voice-session.ts), live
// captions, the approval cards of the call's tool calls counting down their 45 seconds (a card
// arrives as Socket.IO TOOL_APPROVAL in every tab; hanging up cancels it and the tool does not run),
// and hang-up. A twin or deployment without voice answers the call with its reason.
import { useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/api-error';
import { rawFetch } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { useLiveSocket } from './live';
import type { ApprovalCard } from './stream-assembly';
import { startVoiceCall, type VoiceCallHandle } from './voice-session';

interface Caption {
  who: 'you' | 'twin';
  text: string;
  final: boolean;
}

const ENDINGS: Record<string, string> = {
  HANG_UP: 'Call ended.',
  ENDED: 'Call ended.',
  RT_MAX_MINUTES: 'The call reached its longest length.',
  INSUFFICIENT_CREDITS: 'The call ended: your credit balance is too low.',
  USAGE_LIMIT_REACHED: 'The call ended: the daily usage limit is reached.',
  PROVIDER_CLOSED: 'The voice provider closed the call.',
  SESSION_FAILED: 'The call could not go on.',
};

export function VoiceCall({ assistantId }: { assistantId: string }) {
  const [call, setCall] = useState<VoiceCallHandle | null>(null);
  const [starting, setStarting] = useState(false);
  const [captions, setCaptions] = useState<Caption[]>([]);
  const [ending, setEnding] = useState('');
  const [error, setError] = useState<unknown>(null);
  const callRef = useRef<VoiceCallHandle | null>(null);

  useEffect(() => () => void callRef.current?.hangUp(), []);

  const start = async () => {
    setError(null);
    setEnding('');
    setCaptions([]);
    setStarting(true);
    try {
      const handle = await startVoiceCall(assistantId || undefined, {
        onCaption: (caption) =>
          setCaptions((current) => {
            const last = current.at(-1);
            if (last && !last.final && last.who === caption.who) return [...current.slice(0, -1), caption];
            return [...current, caption].slice(-20);
          }),
        onEnded: (reason) => {
          callRef.current = null;
          setCall(null);
          setEnding(ENDINGS[reason] ?? `Call ended (${reason}).`);
        },
      });
      callRef.current = handle;
      setCall(handle);
    } catch (caught) {
      setError(caught);
    } finally {
      setStarting(false);
    }
  };

  return (
    <div className="voice-call">
      {call ? (
        <button type="button" className="button-danger" onClick={() => void call.hangUp()}>
          Hang up
        </button>
      ) : (
        <button type="button" className="button-secondary" disabled={starting} onClick={() => void start()}>
          {starting ? 'Calling…' : 'Call'}
        </button>
      )}
      {call && (
        <section className="voice-panel" aria-label="Voice call">
          <ol className="voice-captions" aria-live="polite">
            {captions.map((caption, index) => (
              <li key={index} className={`caption caption-${caption.who}`}>
                <strong>{caption.who === 'you' ? 'You' : 'Twin'}:</strong> {caption.text}
              </li>
            ))}
          </ol>
          <CallApprovals />
        </section>
      )}
      {ending && !call && <p className="muted" role="status">{ending}</p>}
      {error instanceof ApiError && error.code === 'RT_NOT_CONFIGURED' ? <p className="muted">Voice calls are not available on this service.</p> : <ErrorNotice error={error} />}
    </div>
  );
}

/** The cards waiting during the call, each with the seconds left to decide. */
function CallApprovals() {
  const link = useLiveSocket();
  const [cards, setCards] = useState<ApprovalCard[]>([]);
  // The tick only re-renders; the seconds left are read from the clock at render, so a card that
  // arrives between ticks never shows more than its window.
  const [, setTick] = useState(0);

  useEffect(() => {
    const timer = setInterval(() => setTick((tick) => tick + 1), 250);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (!link) return;
    const onCard = (card: ApprovalCard) => setCards((current) => (current.some((c) => c.approvalId === card.approvalId) ? current : [...current, card]));
    const onDecided = (payload: { approvalId: string }) => setCards((current) => current.filter((card) => card.approvalId !== payload.approvalId));
    link.socket.on('TOOL_APPROVAL', onCard);
    link.socket.on('TOOL_APPROVAL_DECIDED', onDecided);
    return () => {
      link.socket.off('TOOL_APPROVAL', onCard);
      link.socket.off('TOOL_APPROVAL_DECIDED', onDecided);
    };
  }, [link]);

  const decide = async (card: ApprovalCard, decision: 'approve' | 'deny') => {
    setCards((current) => current.filter((c) => c.approvalId !== card.approvalId));
    await rawFetch(`/api/ai/approval/${encodeURIComponent(card.approvalId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision }),
    }).catch(() => undefined);
  };

  const now = Date.now();
  const open = cards.filter((card) => new Date(card.expiresAt).getTime() > now);
  if (open.length === 0) return null;
  return (
    <div className="voice-approvals">
      {open.map((card) => (
        <article key={card.approvalId} className="approval-card" role="alertdialog" aria-label={`Allow ${card.tool}?`}>
          <p>
            Allow <strong>{card.tool}</strong> on {card.server}? <span className="countdown">{Math.ceil((new Date(card.expiresAt).getTime() - now) / 1000)} s</span>
          </p>
          <div className="button-row">
            <button type="button" onClick={() => void decide(card, 'approve')}>
              Approve
            </button>
            <button type="button" className="button-secondary" onClick={() => void decide(card, 'deny')}>
              Deny
            </button>
          </div>
        </article>
      ))}
    </div>
  );
}
