/**
 * Config types every controller starts with: OpenZiti's tunneler types (same ids and field names as OpenZiti,
 * so SDKs and tunnelers recognise them) and Weft's public-share type, whose schema is the shares engine's
 * (shares/schema.ts, floors above: bootstrap.ts adds it to these).
 */

const portRange = {
  type: 'object',
  additionalProperties: false,
  required: ['low', 'high'],
  properties: { low: { $ref: '#/definitions/port' }, high: { $ref: '#/definitions/port' } },
};
const definitions = {
  port: { type: 'integer', minimum: 0, maximum: 65535 },
  protocol: { type: 'string', enum: ['tcp', 'udp'] },
  portRange,
  nonEmptyString: { type: 'string', minLength: 1 },
};

const interceptV1 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['protocols', 'addresses', 'portRanges'],
  definitions,
  properties: {
    protocols: { type: 'array', minItems: 1, uniqueItems: true, items: { $ref: '#/definitions/protocol' } },
    addresses: { type: 'array', minItems: 1, uniqueItems: true, items: { $ref: '#/definitions/nonEmptyString' } },
    portRanges: { type: 'array', minItems: 1, items: { $ref: '#/definitions/portRange' } },
    dialOptions: {
      type: 'object',
      additionalProperties: false,
      properties: { identity: { type: 'string' }, connectTimeoutSeconds: { type: 'integer', minimum: 0 } },
    },
    sourceIp: { type: 'string' },
  },
};

/** host.v1: each of protocol/address/port is either fixed or forwarded from the dialer within an allowed set. */
const forwardable = (fixed: string, forward: string, allowed: string) => ({
  if: { properties: { [forward]: { const: true } }, required: [forward] },
  then: { required: [allowed] },
  else: { required: [fixed] },
});
const hostV1 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  definitions,
  allOf: [
    forwardable('protocol', 'forwardProtocol', 'allowedProtocols'),
    forwardable('address', 'forwardAddress', 'allowedAddresses'),
    forwardable('port', 'forwardPort', 'allowedPortRanges'),
  ],
  properties: {
    protocol: { $ref: '#/definitions/protocol' },
    forwardProtocol: { type: 'boolean' },
    allowedProtocols: { type: 'array', minItems: 1, uniqueItems: true, items: { $ref: '#/definitions/protocol' } },
    address: { $ref: '#/definitions/nonEmptyString' },
    forwardAddress: { type: 'boolean' },
    allowedAddresses: { type: 'array', minItems: 1, uniqueItems: true, items: { $ref: '#/definitions/nonEmptyString' } },
    allowedSourceAddresses: { type: 'array', uniqueItems: true, items: { $ref: '#/definitions/nonEmptyString' } },
    port: { $ref: '#/definitions/port' },
    forwardPort: { type: 'boolean' },
    allowedPortRanges: { type: 'array', minItems: 1, items: { $ref: '#/definitions/portRange' } },
    listenOptions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        bindUsingEdgeIdentity: { type: 'boolean' },
        connectTimeoutSeconds: { type: 'integer', minimum: 0 },
        cost: { $ref: '#/definitions/port' },
        identity: { type: 'string' },
        maxConnections: { type: 'integer', minimum: 1 },
        precedence: { type: 'string', enum: ['default', 'required', 'failed'] },
      },
    },
    httpChecks: { type: 'array', items: { type: 'object' } },
    portChecks: { type: 'array', items: { type: 'object' } },
  },
};

/** Weft's public share: the frontend serves `<token>.<share domain>` from a config of this type. */
export const SVC_PROXY_CONFIG_TYPE_ID = 'svc-proxy-v1';

export const TUNNELER_CONFIG_TYPES = [
  { id: 'g7cIWbcGg', name: 'intercept.v1', schema: interceptV1 },
  { id: 'NH5p4FpGR', name: 'host.v1', schema: hostV1 },
];
