import { useId, useState } from 'react';
import { downloadText, formatDate, relative } from '../lib/format';
import { JwtAddress } from './NetworkAddress';
import { QrCode } from './Qr';

/** An enrollment JWT three ways: as text (copyable), as a file download and as a QR code. */
export function JwtView({ jwt, filename, expiresAt, what }: { jwt: string; filename: string; expiresAt?: unknown; what: string }) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  return (
    <div className="jwt-view">
      <div className="jwt-text">
        <label htmlFor={id}>{`${what} (JWT)`}</label>
        <textarea id={id} className="code jwt" readOnly rows={6} value={jwt} onFocus={(e) => e.currentTarget.select()} />
        {typeof expiresAt === 'string' && <p className="hint">{`Expires ${formatDate(expiresAt)} (${relative(expiresAt)}).`}</p>}
        <JwtAddress jwt={jwt} />
        <div className="button-row">
          <button type="button" onClick={() => downloadText(filename, jwt)}>
            Download {filename}
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              navigator.clipboard?.writeText(jwt).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      </div>
      <figure className="jwt-qr">
        <QrCode text={jwt} label={`QR code of the ${what.toLowerCase()} JWT`} />
        <figcaption>Scan with a Ziti app to enroll.</figcaption>
      </figure>
    </div>
  );
}
