import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { LOGIN_LINK_FAILED_PARAM, SSO_START_PATH, type SsoFailure } from '../../shared/console';
import { ErrorBox, Notice } from '../components/Status';
import { errorInfo } from '../lib/errors';
import type { Me } from '../lib/types';
import { useTRPC } from '../trpc';
import { MfaEnrollment } from './MfaPage';

export const SIGNED_OUT_KEY = 'weft-console-signed-out';

/** Why a sign-in through an identity provider came back without a session (console/sso.ts). */
const SSO_FAILURE_TEXT: Record<SsoFailure, string> = {
  'sso-signer': 'That identity provider is no longer offered for signing in (its signer was disabled or changed).',
  'sso-unavailable': 'The identity provider could not be reached. Try again later, or sign in with your username and password.',
  'sso-state':
    'The sign-in through your identity provider could not be verified: it expired, was already used, or was started in another browser. Start it again.',
  'sso-idp': 'Your identity provider did not complete the sign-in (it refused it or reported an error).',
  'sso-unknown-identity': 'Your identity provider account matches no identity in this network. An administrator can set your identity’s external ID.',
  'sso-policy': 'Your identity’s auth policy does not allow signing in with this identity provider.',
  'sso-disabled': 'Your identity is disabled.',
  'sso-audience':
    'The token of your identity provider is not for this network: its audience is not the one the signer expects. An administrator can set the signer’s audience to the token’s (an ID token’s is the client ID; an access token’s, the API it was issued for).',
  'sso-refused': 'The network refused the token of your identity provider (its issuer or audience does not match the signer).',
};

function reasonText(): { text: string; kind: 'info' | 'warning' } | undefined {
  const param = new URLSearchParams(window.location.search).get(LOGIN_LINK_FAILED_PARAM);
  if (param && Object.hasOwn(SSO_FAILURE_TEXT, param)) return { kind: 'warning', text: `Sign-in refused: ${SSO_FAILURE_TEXT[param as SsoFailure]}` };
  if (param === 'link-invalid')
    return { kind: 'warning', text: 'That login link has expired or was already used. Sign in with your username and password.' };
  if (param === 'link-refused')
    return { kind: 'warning', text: 'The login link was refused (the admin cannot sign in). Sign in with a username and password.' };
  if (sessionStorage.getItem(SIGNED_OUT_KEY)) return { kind: 'info', text: 'You have signed out.' };
  return undefined;
}

/** Username and password, or an identity provider of the network's external JWT signers (the login link needs neither). */
export function LoginPage({ sessionEnded }: { sessionEnded: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const userId = useId();
  const passId = useId();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [reason] = useState(reasonText);
  const signers = useQuery(trpc.session.ssoSigners.queryOptions());
  const login = useMutation(
    trpc.session.login.mutationOptions({
      onSuccess: async () => {
        sessionStorage.removeItem(SIGNED_OUT_KEY);
        if (window.location.search) window.history.replaceState(null, '', '/' + window.location.hash);
        await qc.invalidateQueries();
      },
    }),
  );
  const field = errorInfo(login.error).ziti?.cause?.field;
  return (
    <main className="login" id="main">
      <form
        className="login-card"
        aria-labelledby="login-title"
        onSubmit={(e) => {
          e.preventDefault();
          login.mutate({ username, password });
        }}
      >
        <h1 id="login-title">Sign in to Weft</h1>
        {reason && <Notice kind={reason.kind}>{reason.text}</Notice>}
        {!reason && sessionEnded && <Notice kind="warning">Your session has ended (it expired or was signed out). Sign in again.</Notice>}
        {login.error && <ErrorBox error={login.error} title={errorInfo(login.error).ziti?.code === 'INVALID_AUTH' ? 'Sign-in failed:' : undefined} />}
        <div className="field">
          <label htmlFor={userId}>Username</label>
          <input
            id={userId}
            name="username"
            autoComplete="username"
            required
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            aria-invalid={field === 'username' || undefined}
            autoFocus
          />
        </div>
        <div className="field">
          <label htmlFor={passId}>Password</label>
          <input
            id={passId}
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            aria-invalid={field === 'password' || undefined}
          />
        </div>
        <button type="submit" disabled={login.isPending}>
          {login.isPending ? 'Signing in…' : 'Sign in'}
        </button>
        {!!signers.data?.length && (
          <div className="sso-signers" role="group" aria-label="Sign in through an identity provider">
            <p className="sso-or">or</p>
            {signers.data.map((s) => (
              <a key={s.id} className="button secondary" href={`${SSO_START_PATH}?signer=${encodeURIComponent(s.id)}`}>
                {`Sign in with ${s.name}`}
              </a>
            ))}
          </div>
        )}
        <p className="hint">
          <code>npm start</code> prints a one-time login link; the first start also prints the admin password.
        </p>
      </form>
    </main>
  );
}

/** A session waiting for its second factor: a TOTP/recovery code, or MFA enrollment when a policy demands it. */
export function SecondFactorPage({ me }: { me: Me }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const codeId = useId();
  const [code, setCode] = useState('');
  const mfa = useMutation(trpc.session.mfaCode.mutationOptions({ onSuccess: () => qc.invalidateQueries() }));
  const logout = useMutation(trpc.session.logout.mutationOptions({ onSuccess: () => qc.resetQueries() }));
  const query = me.authQueries.find((q) => q.typeId === 'MFA');
  return (
    <main className="login" id="main">
      <div className="login-card">
        <h1 tabIndex={-1}>Two-factor authentication</h1>
        <p>{`Signed in as ${me.identity.name}. One more step is needed.`}</p>
        {query && query.isTotpEnrolled === false ? (
          <>
            <Notice kind="warning">Your auth policy requires MFA: enroll an authenticator app to finish signing in.</Notice>
            <MfaEnrollment onDone={() => qc.invalidateQueries()} />
          </>
        ) : (
          <form
            aria-label="Authentication code"
            onSubmit={(e) => {
              e.preventDefault();
              mfa.mutate({ code });
            }}
          >
            {mfa.error && <ErrorBox error={mfa.error} />}
            <div className="field">
              <label htmlFor={codeId}>Code from your authenticator app (or a recovery code)</label>
              <input
                id={codeId}
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                value={code}
                onChange={(e) => setCode(e.target.value.trim())}
                autoFocus
              />
            </div>
            <button type="submit" disabled={mfa.isPending}>
              Verify
            </button>
          </form>
        )}
        <button type="button" className="link-button" onClick={() => logout.mutate()}>
          Sign out
        </button>
      </div>
    </main>
  );
}
