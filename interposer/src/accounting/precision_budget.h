// The precision budget (precision_budget.cpp applies threshold_policy.h's
// rules): how many bytes the threads may hold back from the published
// figure, all together.
//
// Precision contract. The true live heap is
//     true = published live + the sum of every registered thread's pending delta
// (a thread without a slot publishes every change, so it has nothing
// pending; a thread that exits publishes its delta first). After each call
// a thread's pending delta is within its window: below its threshold t
// (allocated bytes it holds back), and above −w (freed bytes), with its free
// window w = min(t, W) (accounting.h, free_window), W = B over the
// registered threads (threshold_policy.h, free_window_cap). It hides at most
// t − 1 bytes either way, its share; the shares of all registered threads
// are summed in `reserved` (g_published, beside `live`), so at any moment
//     live − w_sum <= true <= live + reserved                              (1)
// with w_sum the sum of the free windows (less one each), at most `reserved`
// and at most B as the thread count was when each was set. `live` and
// `reserved` change together in one step (published.h), and a step that
// raises either is made only if afterwards
//     reserved <= L(live, peak) = B + (peak − live)                         (2)
// (peak: the published peak, at least `live`; B = max(BYTES, peak /
// DIVISOR), which only grows; the headroom term only while shares can be
// revoked, below). Steps that lower either keep (2), as the peak and B only
// grow. Hence, with the exposure E = live + reserved − peak:
//  - E <= B at every moment;
//  - the true heap never passes peak + E, by (1);
//  - a publish that raises the peak takes it to `live`, which by (1) is at
//    most w_sum <= `reserved` = E above the true heap (E with peak = live).
// So the published peak is within max E of the true peak, below or above:
// the largest E of the run is the stated bound (bound_bytes), recorded at
// every step that raises `live` or `reserved` (the only steps that can
// raise E), at most max(BYTES, peak / DIVISOR) whatever the number of
// threads. A step that (2) refuses is made all the same only when the room
// cannot be had (below: no revocation possible): the stated bound then
// says what it cost.
//
// A timeline sample is a value of `live`: by (1) it is never more than
// w_sum (within the budget) above the true heap at its moment, so a drop
// shows at once however far below the peak; it may be below the true heap
// by up to reserved <= B + (peak − live): allocations far below the peak
// are seen when they approach it (and at the publishes of the threads that
// make them). final_bytes is exact (published live plus every pending
// delta), and the peak is raised to it if needed.
//
// Lending the headroom. Far below the peak, allocated bytes held back
// cannot hide a peak, and (2) lets the threads hold more there: up to the
// headroom (threshold_policy.h, target_threshold). But the heap can climb
// back: each publish of allocated bytes takes `live` up and L down, by the
// thread's own pending bytes while the others' shares stay what they were.
// A publish that (2) would refuse therefore first gives up its own share:
// its threshold to 1, then the share released in one step with as many of
// the publish's bytes as it covered (that step cannot raise E), so that a
// publish waiting for room holds none of `reserved`; when the rest does not
// fit, it revokes the others' shares (Revocation below): their pending
// bytes are published for them and their shares released, so that the
// step fits. A share can be revoked from a thread that does not call at
// all, so (2) never waits for one. Where revocation cannot be made (no
// membarrier(2): an old kernel, a seccomp filter; exact mode), L is B alone,
// as before the lending: then no publish can break (2), and none revokes.
//
// Revocation (accounting.h, "Revoked", is the slot's side). One revoker at
// a time (a lock, also taken across a fork), with every signal but SIGBUS blocked in
// its thread while it revokes: it waits for no other thread (its barriers
// are the kernel's), so a thread that needs the lock waits only until the
// holder has run, never on a signal handler of the program's (a
// collector's stop-the-world handler) that interrupted it. It marks each
// slot, subtracts the offset from its headroom (locked), has every thread
// pass a barrier (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)), then for
// each slot:
//  - the offset is there and the owner is not inside a change: the revoker
//    records the pending bytes, at most the share (more is a call in
//    flight: the excess stays pending, for the owner's slow path to publish
//    within the limit), and marks the slot adopted with one
//    compare-and-swap that fails if the owner began a change or took the
//    revocation over since; then publishes them and releases the share in
//    one step of `live` and `reserved` (the adopted bytes move from the
//    slot's pending to `live` while its share, which covered them, is still
//    reserved: (1) holds throughout, and E does not rise);
//  - the owner took it over (it saw the offset first): the owner settles it;
//  - the offset is gone and the slot still marked: an unlocked change of the
//    owner's, which read the headroom before the subtraction, erased it
//    whole; the owner never saw it (it marks the slot taken before it takes
//    the offset out): the revoker subtracts it again, and after the next
//    barrier looks again (after the last round, it unmarks the slot: no
//    offset is left, and the next revocation may mark it again).
// A slot whose owner was inside a change keeps its mark, its offset and its
// share: every later revocation looks at it again (and adopts it once the
// change has ended, whether or not the owner calls again), and the owner's
// next slow path settles it.
//
// Waiting for room. What no revocation can take back is the part of
// `reserved` that no adoptable slot holds: a raise reserved and not yet
// held, a share no longer held and not yet released (a lowered threshold,
// a settled revocation, a refused publish's own share until its step, a
// thread's exit), the share of a slot whose owner is inside a threshold
// change (its threshold and headroom then disagree), and the shares a
// revoker adopted until it publishes them. Each exists only while its
// thread runs a stretch of code with every signal but SIGBUS blocked (OwnBytesWindow;
// the revoker's whole revocation), at most one per thread, which waits for
// no other thread. So a publish that still lacks the room after its
// revocation waits (yielding, later napping a millisecond, and revoking
// again) only for threads that are running or ready to: the scheduler may
// delay it, a signal handler of the program's (a collector's stop-the-world
// handler, which may wait for the very thread that waits for room) cannot.
// It never publishes beyond (2) for want of patience.
// The owner settles at its next slow path (every call takes it while the
// offset is there): offset and adopted bytes out of its pending, threshold
// 1, and its share released unless the revoker released it. A publish of
// the owner reads its pending and takes it out of the headroom before it
// publishes it; if the offset arrived in between, the revoker's record may
// hold those bytes, so the owner puts them back and settles first
// (sampling.cpp), and its signal handlers leave their bytes pending
// meanwhile (Slot::publishing). Between its take and its commit those bytes
// are neither pending nor published, and only the share covers them: the
// owner notes them first (Slot::in_flight), and a revoker that adopts the
// slot meanwhile keeps that much of the share in `reserved` (Slot::kept,
// beside what it adopts and within the share), which the owner releases
// when it settles, after its commit. So (1) holds across a publish too.
//
// Heap and mapped. The report's peak of heap + mapped memory is a figure
// of its own (g_published.total_peak), and held-back allocations below the
// heap's peak can hide a peak of the sum: the heap far below its own peak
// while the program maps. So `peak` in (2) and in E is the lending peak
// (threshold_policy.h, lending_peak): the heap's published peak while
// nothing is mapped, else no higher than the sum's published peak less the
// mapped bytes M, which gives (2) and E for the sum too: live + M + reserved
// never passes the sum's peak + B. M only grows through a mapping call,
// which claims the most it may add before its system call (mapped_memory.h,
// bytes_for_budget) and, with the claim counted in M, makes (2) true as a
// publish beyond the room does (its own share, then the others' revoked:
// keep_room_for_mapping) before it maps; the exposure it leaves is measured
// once the mapping is made, with the mapped bytes alone. A publish that
// read M before such a claim reads it again after its step (each side's
// locked step a full barrier: either the publish sees the claim, or the
// mapping call's check sees the publish) and makes (2) true the same way
// when M grew. Unmapping only lowers M. In a fork child the other threads'
// claims are gone with them: M is what is mapped.
//
// Peaks. g_published.peak is the run's peak (the report's peak_bytes);
// phase_peak is the same figure but reset by heapline_reset_peak(). Both are
// raised to every exact live value anyone computes (the API reads and the
// exit), so a reported peak is never below a value that was seen, even when
// the batched publishing had not yet carried threads' pending bytes.
#pragma once

#include <atomic>
#include <cstdint>

#include "threshold_policy.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// Written when a thread registers, exits or changes its threshold, never on
// the hot path nor by a publish that keeps its threshold. (`reserved` is
// g_published's, beside `live`.)
struct alignas(128) Budget {
  // The stated bound: the largest exposure live + reserved − peak of the
  // run. Only grows.
  std::atomic<std::int64_t> bound{0};
  // B in force: max(BYTES, peak / DIVISOR) as of the latest policy change
  // (behind the peak in between, never ahead of it). Only grows.
  std::atomic<std::int64_t> bytes{0};
  // C: the registered threads, rounded up on the grid, with hysteresis.
  std::atomic<std::uint64_t> divider{kMinDivider};
  // Requests to step down (precision_budget.cpp): when the next pass over
  // the registry may come (CLOCK_MONOTONIC_COARSE).
  std::atomic<std::uint64_t> next_room_request_ns{0};
  // The largest threshold a thread held (the report's max_threshold_bytes):
  // only grows.
  std::atomic<std::int64_t> max_threshold{1};
  // Whether shares can be revoked, so that the threads may hold back part
  // of the headroom below the peak (above): membarrier registered, not exact.
  std::atomic<bool> lends_headroom{false};
  // One revoker at a time, and none across a fork.
  std::atomic<bool> revoking{false};
  // Revocations made, and the slots they adopted (for the tests).
  std::atomic<std::uint64_t> revocations{0};
  std::atomic<std::uint64_t> adoptions{0};
};
extern Budget g_budget;

}  // namespace heapline::accounting
#pragma GCC visibility pop
