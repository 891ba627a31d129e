// Tool approval cards (behaviour 5): a connector's tool call waits for the person's decision. Cards
// come from GET /api/user/approvals (a tab opened later), Socket.IO TOOL_APPROVAL and the SSE approval
// frame; TOOL_APPROVAL_DECIDED (from any tab) closes them. Until the service offers these routes the
// list is empty. The routes are newer than some builds' OpenAPI document, so they are called untyped.
import { useEffect, useState } from 'react';
import { ApiError } from '../api/api-error';
import { rawFetch } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { useLiveSocket } from './live';
import type { ApprovalCard } from './stream-assembly';

type Decision = 'approve' | 'approve_conversation' | 'deny';

async function pendingApprovals(): Promise<ApprovalCard[]> {
  try {
    const answer = (await (await rawFetch('/api/user/approvals')).json()) as { approvals?: ApprovalCard[] };
    return answer.approvals ?? [];
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return [];
    throw error;
  }
}

export function ApprovalCards({ extra, decided }: { extra: ApprovalCard[]; decided: string[] }) {
  const link = useLiveSocket();
  const [cards, setCards] = useState<ApprovalCard[]>([]);
  const [error, setError] = useState<unknown>(null);

  const add = (card: ApprovalCard) => setCards((current) => (current.some((c) => c.approvalId === card.approvalId) ? current : [...current, card]));
  const close = (approvalId: string) => setCards((current) => current.filter((card) => card.approvalId !== approvalId));

  useEffect(() => {
    pendingApprovals().then((list) => list.forEach(add), () => undefined);
  }, []);
  useEffect(() => extra.forEach(add), [extra]);
  useEffect(() => decided.forEach(close), [decided]);
  useEffect(() => {
    if (!link) return;
    const onCard = (card: ApprovalCard) => add(card);
    const onDecided = (payload: { approvalId: string }) => close(payload.approvalId);
    link.socket.on('TOOL_APPROVAL', onCard);
    link.socket.on('TOOL_APPROVAL_DECIDED', onDecided);
    return () => {
      link.socket.off('TOOL_APPROVAL', onCard);
      link.socket.off('TOOL_APPROVAL_DECIDED', onDecided);
    };
  }, [link]);

  const decide = async (card: ApprovalCard, decision: Decision) => {
    setError(null);
    try {
      await rawFetch(`/api/ai/approval/${encodeURIComponent(card.approvalId)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision }),
      });
      close(card.approvalId);
    } catch (caught) {
      if (caught instanceof ApiError && caught.code === 'APPROVAL_DECIDED') close(card.approvalId);
      else setError(caught);
    }
  };

  if (cards.length === 0 && !error) return null;
  return (
    <section className="approvals" aria-label="Waiting for your approval">
      {cards.map((card) => (
        <article key={card.approvalId} className="approval-card" role="alertdialog" aria-labelledby={`approval-${card.approvalId}`}>
          <h2 id={`approval-${card.approvalId}`}>
            Allow {card.tool} on {card.server}?
          </h2>
          <pre className="approval-arguments">{JSON.stringify(card.arguments, null, 2)}</pre>
          <p className="muted">Nothing runs until you decide. Waits until {new Date(card.expiresAt).toLocaleTimeString()}.</p>
          <div className="button-row">
            <button type="button" onClick={() => void decide(card, 'approve')}>
              Approve
            </button>
            <button type="button" className="button-secondary" onClick={() => void decide(card, 'approve_conversation')}>
              Approve for this conversation
            </button>
            <button type="button" className="button-danger" onClick={() => void decide(card, 'deny')}>
              Deny
            </button>
          </div>
        </article>
      ))}
      <ErrorNotice error={error} />
    </section>
  );
}
