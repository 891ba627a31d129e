// A screen that fails to show (an error while rendering it, or its code that could not be loaded: the
// service updated under an open tab, a dropped connection) says so in place, with a way on, instead of
// leaving the whole page blank. Moving to another address tries again; the navigation around it stays.
import { Component, type ErrorInfo, type ReactNode } from 'react';
import { useLocation } from 'react-router';

/** Catches what its screens throw while rendering, until the address changes. */
export function ScreenBoundary({ children }: { children: ReactNode }) {
  const { pathname } = useLocation();
  return <Boundary address={pathname}>{children}</Boundary>;
}

interface BoundaryProps {
  address: string;
  children: ReactNode;
}

class Boundary extends Component<BoundaryProps, { error: unknown; at: string | undefined }> {
  state = { error: undefined as unknown, at: undefined as string | undefined };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  static getDerivedStateFromProps(props: BoundaryProps, state: { error: unknown; at: string | undefined }) {
    // The failure belongs to the address it happened at: another address is shown afresh.
    if (state.error !== undefined && state.at !== undefined && state.at !== props.address) return { error: undefined, at: undefined };
    if (state.error !== undefined && state.at === undefined) return { at: props.address };
    return null;
  }

  componentDidCatch(error: unknown, info: ErrorInfo) {
    console.error('A screen failed to show', error, info.componentStack);
  }

  render() {
    if (this.state.error === undefined) return this.props.children;
    const unloaded = isUnloadedCode(this.state.error);
    return (
      <div className="notice notice-error screen-error" role="alert">
        <strong>This page could not be shown</strong>
        <p>
          {unloaded
            ? "Its code could not be loaded: the connection may have dropped, or the service was updated since this tab opened."
            : 'Something went wrong while showing it.'}{' '}
          Reloading usually helps; if it happens again, tell your administrator.
        </p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload the page
        </button>{' '}
        <a href="/">Go to the start page</a>
      </div>
    );
  }
}

/** A lazily loaded screen whose code did not arrive (browsers word it differently). */
function isUnloadedCode(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /dynamically imported module|Importing a module script failed|error loading dynamically imported module|Loading chunk/i.test(message);
}
