// The platform's webhook notification (its "webhook notifications" page) as the service reads
// it, and the answer it gives. Fields the platform may add are let through: the signature
// vouches for the body, and a new field is no reason to refuse (and be sent it again 5 times).
import { successAnswer } from './envelope.js';

export const robloxNotification = {
  type: 'object',
  required: ['NotificationId', 'EventType'],
  properties: {
    NotificationId: { type: 'string', minLength: 1, maxLength: 200, description: 'The notification\'s id: a repeat is a duplicate.' },
    EventType: { type: 'string', minLength: 1, maxLength: 100, description: 'RightToErasureRequest, SampleNotification (the dashboard\'s test), or another event (ignored).' },
    EventTime: { type: 'string', maxLength: 100 },
    EventPayload: { type: 'object' },
  },
} as const;

// A game id must be exact: a number above 2^53 - 1 has already lost digits when parsed (1e300
// passed as an integer and was kept as null, issue 38), so it is refused; larger ids come as
// their decimal digits in a string.
const gameId = {
  anyOf: [
    { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    { type: 'string', pattern: '^[1-9][0-9]{0,19}$' },
  ],
} as const;

export const erasurePayload = {
  type: 'object',
  required: ['UserId', 'GameIds'],
  properties: {
    UserId: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The user who asked to be erased.' },
    GameIds: { type: 'array', minItems: 1, maxItems: 1000, items: gameId, description: 'The studio\'s games (universe ids) the request concerns.' },
  },
} as const;

/** The webhook's body for the OpenAPI document: the envelope, with the erasure request's payload. */
export const robloxNotificationDocument = {
  ...robloxNotification,
  properties: { ...robloxNotification.properties, EventPayload: { ...erasurePayload, description: 'For RightToErasureRequest: the user and the games.' } },
} as const;

export const webhookAnswer = successAnswer({
  type: 'object',
  required: ['notificationId', 'status', 'jobId'],
  additionalProperties: false,
  properties: {
    notificationId: { type: 'string' },
    status: {
      type: 'string',
      enum: ['accepted', 'duplicate', 'ignored'],
      description: 'accepted: an erasure job was recorded; duplicate: the NotificationId was seen before, nothing done; ignored: a SampleNotification or another event type.',
    },
    jobId: { type: ['string', 'null'], description: 'The erasure job made for the notification (the first time, for a duplicate).' },
  },
});
