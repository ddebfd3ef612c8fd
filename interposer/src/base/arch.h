// What the library does differently on each processor, behind one
// interface: one header per architecture (arch/x86_64.h, arch/aarch64.h),
// each defining all of it, and a build for any other one fails here rather
// than counting bytes in a way a signal handler could break.
//
// In-place counters (heapline::arch::in_place). The hot path's counters
// belong to one thread; a signal handler that allocates runs the same hot
// path on them in the middle of its owner's, and other threads only read
// them (or compare-and-swap a neighbouring word). Each operation below is
// therefore:
//   - indivisible for a signal handler of the same thread: a handler runs
//     before or after it, never between its load and its store, so that
//     neither's change is lost;
//   - single-copy atomic for another thread's reader (never torn);
//   - as cheap as the architecture allows for that: no full barrier, no
//     lock where one instruction will do.
// They take 8-byte words: std::int64_t, std::uint64_t, or the atomic of
// one (whose value is its only member).
//
//   add(word, value)                     word += value
//   subtract(word, value)                word -= value
//   increment(word), decrement(word)     word += 1, word -= 1
//   subtract_turns_negative(word, value) word -= value; whether the result
//                                        is below zero, read from that one
//                                        change (a handler's in between
//                                        cannot mislead it)
//   increment_ordered(word)              word += 1, ordered for another
//                                        thread's reader after every
//                                        earlier store and before every
//                                        later one (a sequence count)
//
// A pair of shared words (not in place: any thread changes them):
//   compare_exchange_pair(pair, e0, e1, d0, d1)
//                                        pair[0], pair[1] become d0, d1 if
//                                        they hold e0, e1, in one atomic
//                                        step, sequentially consistent;
//                                        else e0, e1 get what they hold
//                                        (read in one atomic step too).
//                                        Whether it swapped. `pair` is
//                                        16-byte aligned; the single-word
//                                        locked changes of either word
//                                        are seen as changes.
//
// And the rest of what differs:
//   clock_gettime_by_system_call(clock, now)  the system call itself, no
//                                        vDSO (0 or -1, errno untouched)
//   square_root(x)                       no libm in the library
//   code_address(return_address)         an unwound return address as a
//                                        code address (pointer
//                                        authentication bits cleared)
//   kVdsoClockGettime                    the vDSO's name for clock_gettime
//   kUnwinderSetCachingPolicy,           libunwind's names for its local
//   kUnwinderLocalAddressSpace           unwinder (_ULx86_64_..., _ULaarch64_...)
//   kSampleStackBytes                    the stack a heap sample needs
//   kThreadSlotAlignment                 the alignment of a thread's slot,
//                                        which is thread-local storage: a
//                                        cache line where the loader allows
//                                        it to a library loaded by dlopen
#pragma once

#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#else
#error "heapline: no signal-safe in-place counters for this processor (interposer/src/base/arch.h)"
#endif
