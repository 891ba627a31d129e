// The chat subscription of the current twin: whether one is connected, the device sign-in (the code
// to enter at the provider's page and the time left, polled at the provider's interval), disconnect.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';

interface Pending {
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  expiresAt: string;
  interval: number;
}

const STATUS_KEY = ['subscription-status'];

export default function Subscription() {
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: STATUS_KEY, queryFn: () => unwrap(api.GET('/api/user/agents/connect/subscription/status')) });
  const [pending, setPending] = useState<Pending | null>(null);
  const [now, setNow] = useState(() => Date.now());
  const [error, setError] = useState<unknown>(null);
  const connected = status.data?.connected ?? false;

  useEffect(() => {
    if (!pending) return;
    const tick = setInterval(() => setNow(Date.now()), 1000);
    const poll = setInterval(async () => {
      try {
        const answer = await unwrap(api.POST('/api/user/agents/connect/subscription/poll', { body: {} }));
        if (answer.connected) {
          setPending(null);
          await queryClient.invalidateQueries({ queryKey: STATUS_KEY });
        }
      } catch (failure) {
        setError(failure);
        setPending(null);
      }
    }, Math.max(1, pending.interval) * 1000);
    return () => {
      clearInterval(tick);
      clearInterval(poll);
    };
  }, [pending, queryClient]);

  const start = async () => {
    setError(null);
    try {
      setPending(await unwrap(api.POST('/api/user/agents/connect/subscription/start', { body: {} })));
      setNow(Date.now());
    } catch (failure) {
      setError(failure);
    }
  };
  const disconnect = async () => {
    setError(null);
    try {
      await unwrap(api.POST('/api/user/agents/connect/subscription/disconnect', { body: {} }));
      setPending(null);
      await queryClient.invalidateQueries({ queryKey: STATUS_KEY });
    } catch (failure) {
      setError(failure);
    }
  };
  const secondsLeft = pending ? Math.max(0, Math.round((Date.parse(pending.expiresAt) - now) / 1000)) : 0;
  return (
    <>
      <h1>Subscription</h1>
      <section className="card" aria-label="Subscription connection">
        <p role="status">{status.isLoading ? 'Checking…' : connected ? 'A subscription is connected: the twin’s assistants answer through it.' : 'No subscription is connected.'}</p>
        <ErrorNotice error={error ?? status.error} />
        {pending ? (
          <div>
            <p>
              Open <a href={pending.verificationUriComplete ?? pending.verificationUri} target="_blank" rel="noopener noreferrer">{pending.verificationUri}</a> and enter the code
            </p>
            <p className="device-code" aria-label="Code to enter">
              {pending.userCode}
            </p>
            <p aria-live="polite">{secondsLeft > 0 ? `The code works for ${Math.floor(secondsLeft / 60)}:${String(secondsLeft % 60).padStart(2, '0')} more.` : 'The code expired: start again.'}</p>
          </div>
        ) : null}
        <div className="button-row">
          <button type="button" onClick={start}>
            {connected ? 'Connect again' : 'Connect a subscription'}
          </button>
          {(connected || pending) && (
            <button type="button" className="button-secondary" onClick={disconnect}>
              Disconnect
            </button>
          )}
        </div>
      </section>
    </>
  );
}
