// The success envelope every public and admin answer shares: `{"success": true, "data": ...}`
// and nothing else. (Errors have theirs: errorEnvelope in responses.ts.)

/** The schema of `{"success": true, "data": <data>}`, closed to other fields. */
export function successAnswer<const D extends object>(data: D) {
  return {
    type: 'object',
    required: ['success', 'data'],
    additionalProperties: false,
    properties: { success: { const: true }, data },
  } as const;
}
