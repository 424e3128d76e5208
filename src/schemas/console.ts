// The operator console's session API (/console/session on the ops listener): request and answer.
import { successAnswer } from './envelope.js';
export const signInBody = {
  type: 'object',
  required: ['token'],
  additionalProperties: false,
  properties: { token: { type: 'string', minLength: 1, maxLength: 4096, description: 'ADMIN_TOKEN.' } },
} as const;

export const consoleSessionResponse = successAnswer({
  type: 'object',
  required: ['csrfToken', 'idleSeconds', 'actor'],
  additionalProperties: false,
  properties: {
    csrfToken: { type: 'string', description: 'Send it back in X-CSRF-Token on every state-changing request.' },
    idleSeconds: { type: 'integer', description: 'The session ends after this long unused.' },
    actor: { type: 'string', description: 'The name the audit trail records the console\'s actions under.' },
  },
});

export const signedOutResponse = successAnswer({ type: 'object', required: ['signedOut'], additionalProperties: false, properties: { signedOut: { type: 'boolean' } } });
