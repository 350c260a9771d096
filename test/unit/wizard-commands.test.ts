// The service wizard's plan as `ziti edge create` commands and Management API requests: every step, in order,
// names quoted for a shell, `@id` roles written with the name the preview shows, references to what an earlier
// step creates as names (CLI) or `${STEP_ID}` variables (REST).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { WizardPlan } from '../../src/main/core/policy/wizardPlan';
import { shellQuote, wizardCommands } from '../../src/main/core/policy/wizardCommands';

const plan: WizardPlan = {
  notes: [],
  steps: [
    {
      key: 'intercept-config',
      resource: 'configs',
      name: "it's web-intercept",
      summary: '',
      body: {
        name: "it's web-intercept",
        configTypeId: 'g7cIWbcGg',
        data: { protocols: ['tcp'], addresses: ['web.lab'], portRanges: [{ low: 80, high: 80 }] },
      },
    },
    {
      key: 'host-config',
      resource: 'configs',
      name: 'web-host',
      summary: '',
      body: { name: 'web-host', configTypeId: 'NH5p4FpGR', data: { protocol: 'tcp', address: '127.0.0.1', port: 3000 } },
    },
    {
      key: 'service',
      resource: 'services',
      name: 'web app',
      summary: '',
      body: { name: 'web app', encryptionRequired: false, roleAttributes: ['a,b', 'web'], configs: ['$intercept-config', '$host-config'] },
    },
    {
      key: 'dial-policy',
      resource: 'service-policies',
      name: 'web app-dial',
      summary: '',
      body: {
        name: 'web app-dial',
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: ['#users', '@id1'],
        serviceRoles: ['@$service'],
        postureCheckRoles: [],
      },
      roles: {
        identityRoles: [
          { role: '#users', name: '#users' },
          { role: '@id1', name: '@laptop 1' },
        ],
        serviceRoles: [{ role: '@$service', name: '@web app (new)' }],
      },
    },
    {
      key: 'bind-policy',
      resource: 'service-policies',
      name: 'web app-bind',
      summary: '',
      body: { name: 'web app-bind', type: 'Bind', semantic: 'AnyOf', identityRoles: ['@r1'], serviceRoles: ['@$service'], postureCheckRoles: [] },
      roles: { identityRoles: [{ role: '@r1', name: '@router' }], serviceRoles: [{ role: '@$service', name: '@web app (new)' }] },
    },
    {
      key: 'service-edge-router-policy',
      resource: 'service-edge-router-policies',
      name: 'web app-routers',
      summary: '',
      body: { name: 'web app-routers', semantic: 'AnyOf', serviceRoles: ['@$service'], edgeRouterRoles: ['@r1'] },
      roles: { serviceRoles: [{ role: '@$service', name: '@web app (new)' }], edgeRouterRoles: [{ role: '@r1', name: '@router' }] },
    },
    {
      key: 'edge-router-policy',
      resource: 'edge-router-policies',
      name: 'web app-clients',
      summary: '',
      body: { name: 'web app-clients', semantic: 'AnyOf', identityRoles: ['#all'], edgeRouterRoles: ['@r1'] },
      roles: { identityRoles: [{ role: '#all', name: '#all' }], edgeRouterRoles: [{ role: '@r1', name: '@router' }] },
    },
  ],
};

describe('wizard commands', () => {
  it('writes one ziti edge create command per step, quoted for a shell, with names for ids', () => {
    expect(wizardCommands(plan).cli).toEqual([
      `ziti edge create config 'it'\\''s web-intercept' intercept.v1 '{"protocols":["tcp"],"addresses":["web.lab"],"portRanges":[{"low":80,"high":80}]}'`,
      `ziti edge create config web-host host.v1 '{"protocol":"tcp","address":"127.0.0.1","port":3000}'`,
      `ziti edge create service 'web app' --configs 'it'\\''s web-intercept,web-host' --role-attributes '"a,b",web' --encryption OFF`,
      `ziti edge create service-policy 'web app-dial' Dial --semantic AnyOf --identity-roles '#users,@laptop 1' --service-roles '@web app'`,
      `ziti edge create service-policy 'web app-bind' Bind --semantic AnyOf --identity-roles @router --service-roles '@web app'`,
      `ziti edge create service-edge-router-policy 'web app-routers' --semantic AnyOf --service-roles '@web app' --edge-router-roles @router`,
      `ziti edge create edge-router-policy 'web app-clients' --semantic AnyOf --identity-roles '#all' --edge-router-roles @router`,
    ]);
  });

  it('the shell reads every quoted word back as it was', () => {
    const words = ["it's", '#all', 'a b', '{"x":"$HOME `id`"}', 'plain-word_1.2', '@name', '"q"', ''];
    const out = execFileSync('sh', ['-c', `printf '%s\\n' ${words.map(shellQuote).join(' ')}`], { encoding: 'utf8' });
    expect(out.split('\n').slice(0, -1)).toEqual(words);
  });

  it('writes one POST per step; ids an earlier step creates are $STEP_ID variables, existing ids stay', () => {
    const { rest } = wizardCommands(plan);
    expect(rest.map((r) => [r.method, r.path, r.saveIdAs])).toEqual([
      ['POST', '/edge/management/v1/configs', 'INTERCEPT_CONFIG_ID'],
      ['POST', '/edge/management/v1/configs', 'HOST_CONFIG_ID'],
      ['POST', '/edge/management/v1/services', 'SERVICE_ID'],
      ['POST', '/edge/management/v1/service-policies', 'DIAL_POLICY_ID'],
      ['POST', '/edge/management/v1/service-policies', 'BIND_POLICY_ID'],
      ['POST', '/edge/management/v1/service-edge-router-policies', 'SERVICE_EDGE_ROUTER_POLICY_ID'],
      ['POST', '/edge/management/v1/edge-router-policies', 'EDGE_ROUTER_POLICY_ID'],
    ]);
    expect(rest[2]!.body).toEqual({
      name: 'web app',
      encryptionRequired: false,
      roleAttributes: ['a,b', 'web'],
      configs: [`\${INTERCEPT_CONFIG_ID}`, `\${HOST_CONFIG_ID}`],
    });
    expect(rest[3]!.body).toMatchObject({ identityRoles: ['#users', '@id1'], serviceRoles: [`@\${SERVICE_ID}`] });
    expect(rest[0]!.body).toEqual(plan.steps[0]!.body);
  });

  it('a plan without configs or attributes gives a service command without those flags', () => {
    const sdk: WizardPlan = {
      notes: [],
      steps: [
        {
          key: 'service',
          resource: 'services',
          name: 'sdk',
          summary: '',
          body: { name: 'sdk', encryptionRequired: true, roleAttributes: [], configs: [] },
        },
      ],
    };
    expect(wizardCommands(sdk).cli).toEqual(['ziti edge create service sdk --encryption ON']);
  });
});
