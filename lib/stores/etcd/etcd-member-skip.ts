import { isRecoverableError } from 'etcd3';

/**
 * With several members, how long calls skip a member after a connection-level failure on it (and
 * another member serves them). etcd3 picks a member at random per call and per watch redial: with a
 * member dead or frozen, a third of the calls failed and a redialled watch stream could land on the
 * frozen member again and stay blind for another keep-alive (seen: 2 of 6 runs of the
 * frozen-member chaos scenario). Short, because when every member is skipped (a lost quorum) calls
 * fail at once until the first skip ends: it adds at most this to the recovery after the quorum is back.
 */
export const MEMBER_SKIP_MS = 2_000;

/** Why a call went to no member: each of them failed within the last {@link MEMBER_SKIP_MS}. */
export class EtcdMemberSkippedError extends Error {
  constructor() {
    super(`every etcd member failed within the last ${MEMBER_SKIP_MS} ms`);
    this.name = 'EtcdMemberSkippedError';
  }
}

type Work<T> = (context: { signal: AbortSignal }) => PromiseLike<T> | T;

/**
 * A per-member policy in the shape etcd3 calls (cockatiel's `execute`): etcd3 moves on to the next
 * member when a policy refuses without calling through, and reports a broken stream's failure
 * through the same `execute` (markFailed), so a watch stream's death skips its member too.
 */
export function memberSkipPolicy(): { execute<T>(work: Work<T>, signal?: AbortSignal): Promise<T> } {
  let skipUntil = Number.NEGATIVE_INFINITY;
  return {
    execute<T>(work: Work<T>, signal?: AbortSignal): Promise<T> {
      if (performance.now() < skipUntil) return Promise.reject(new EtcdMemberSkippedError());
      return Promise.resolve()
        .then(() => work({ signal: signal ?? new AbortController().signal }))
        .then(
          (value) => {
            skipUntil = Number.NEGATIVE_INFINITY;
            return value;
          },
          (error: unknown) => {
            if (error instanceof Error && isRecoverableError(error)) skipUntil = performance.now() + MEMBER_SKIP_MS;
            throw error;
          },
        );
    },
  };
}
