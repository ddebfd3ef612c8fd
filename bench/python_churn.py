"""python_churn: the `python` scenario of heapline's overhead suite.

A fixed, deterministic workload that pushes objects of many sizes through the
interpreter's allocator: small objects (served by pymalloc's arenas), and
buffers over 512 bytes, which pymalloc hands to malloc, the calls heapline
watches. It is designed for stable timing:

- fixed work, no I/O, no clock reads, no randomness from the environment;
- the cyclic garbage collector is disabled and run at fixed points only, so
  collections happen at the same places in every run;
- string hashing does not matter to the work (keys are ints), and the
  catalogue runs it with PYTHONHASHSEED=0 anyway;
- about one second of work, enough to swamp interpreter start-up.

usage: python3 python_churn.py [ROUNDS]   (default 500; exits 0)
"""

import gc
import sys

DEFAULT_ROUNDS = 500
LIVE_SLOTS = 2048


def churn(rounds):
    # A linear congruential generator: the same sequence on every run and
    # every Python version, unlike the random module's seeding rules.
    state = 0x2545F491
    slots = [None] * LIVE_SLOTS
    table = {}
    checksum = 0
    for round_index in range(rounds):
        for i in range(LIVE_SLOTS):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            kind = state & 3
            size = 16 + (state >> 8) % 8192
            if kind == 0:
                # A buffer over 512 bytes most of the time: reaches malloc.
                slots[i] = bytearray(size)
            elif kind == 1:
                slots[i] = bytes(size // 2) + b"x"
            elif kind == 2:
                slots[i] = [i] * (size // 64)
            else:
                table[state & 1023] = (i, round_index, str(state))
            checksum ^= len(slots[i]) if slots[i] is not None else 0
        # Grow and shrink a dict and a list of tuples: realloc traffic.
        squares = [(n, n * n) for n in range(LIVE_SLOTS)]
        checksum ^= sum(pair[1] for pair in squares[::97]) & 0xFFFF
        if round_index % 16 == 15:
            table.clear()
            gc.collect()
    return checksum


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and not argv[1].isdigit()):
        sys.stderr.write("usage: python_churn.py [ROUNDS]\n")
        return 2
    rounds = int(argv[1]) if len(argv) == 2 else DEFAULT_ROUNDS
    if rounds < 1:
        sys.stderr.write("python_churn.py: ROUNDS must be at least 1\n")
        return 2
    gc.disable()
    churn(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
