// What a request's writes pay to its workspace's byte budget (http/byte-budget.ts), as the one
// thing the request hands down with its writes (WriteOrigin.bytes): the bytes a script read or
// copied inside Redis, the bytes its reply hands over for the answer, and the check, at each
// write's turn, that the workspace does not owe the budget (saves/player-turns.ts).

/** A request's account with its workspace's byte budget. */
export interface WorkspaceBytes {
  /** Pays for the bytes a write's script read or copied inside Redis, after the fact: never refused, may leave a debt. */
  chargeWork(bytes: number): void;
  /** Pays for what a write's reply hands over for the answer (the messages delivered to its session), as each comes. */
  chargeAnswer(bytes: number): void;
  /** Throws (429) while the workspace owes the budget (a write before may have copied much inside Redis). */
  refuseInDebt(): void;
}
