// JSON Schemas of the admin API's request bodies.
export const createWorkspaceBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100, description: 'Workspace name.' },
    plan: { type: 'string', enum: ['free', 'pro'], description: 'Plan; default free.' },
  },
} as const;
