import { it } from 'vitest';
import { RouterLink } from '../../src/main/sdk';
import { startTestApp } from '../support/app';
import { sdkIdentity, openRouter } from '../support/overlay';
it('debug', async () => {
  const app = await startTestApp();
  const admin = await app.adminClient();
  await openRouter(app, admin);
  const d = await sdkIdentity(app, admin, 'd');
  const reasons: Record<string, number> = {};
  for (let i = 0; i < 30; i++) {
    const err: any = await RouterLink.open({ url: app.urls.router!, ca: app.core.pki.caBundlePem, cert: d.cert, key: d.key, apiSessionToken: 'bad', timeoutMs: 5000 }).catch((e) => e);
    reasons[err.reason] = (reasons[err.reason] ?? 0) + 1;
  }
  console.log(reasons);
  await app.stop();
}, 60000);
