// Types for cluster-key-slot (ioredis's own slot function, which ships none).
declare module 'cluster-key-slot' {
  /** The hash slot (0-16383) of a key, its `{tag}` honoured. */
  function calculateSlot(key: string | Buffer): number;
  export = calculateSlot;
}
