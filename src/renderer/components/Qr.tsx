import QRCode from 'qrcode';
import { useEffect, useState } from 'react';

/** A QR code of `text` as an image (low error correction keeps long JWTs readable). */
export function QrCode({ text, label, size = 360 }: { text: string; label: string; size?: number }) {
  const [url, setUrl] = useState<string>();
  const [failed, setFailed] = useState<string>();
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(text, { errorCorrectionLevel: 'L', margin: 4, width: size })
      .then((u) => live && (setUrl(u), setFailed(undefined)))
      .catch((e: Error) => live && setFailed(e.message));
    return () => {
      live = false;
    };
  }, [text, size]);
  if (failed) return <p className="field-error">{`Could not draw the QR code: ${failed}`}</p>;
  return url ? (
    <img className="qr" src={url} alt={label} width={size} height={size} />
  ) : (
    <div className="qr qr-pending" style={{ width: size, height: size }} aria-hidden="true" />
  );
}
