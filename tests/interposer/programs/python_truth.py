"""A Python program of known size, and the truth about it.

    python3 python_truth.py TUPLES BUFFERS_MIB MODE

builds TUPLES two-int tuples (small objects: pymalloc serves them from its
arenas, which it maps itself with mmap) and BUFFERS_MIB one-MiB bytearrays
(large blocks: malloc, and glibc maps each one), then lets go of everything.
The peak is the moment both are held.

MODE run: nothing else (the run heapline watches).
MODE truth: at the peak, prints what the interpreter itself says it holds,
    measured without heapline: pymalloc's arenas from
    sys._debugmallocstats() (whole 1 MiB arenas, exactly what was mapped),
    glibc's in-use bytes from mallinfo2() (its chunk sizes, and the mapped
    size of its large blocks: heapline's size basis), and the RSS.
MODE tracemalloc: the peak of the bytes Python's allocators handed out, as
    tracemalloc counts them (requested sizes: a lower bound).

Both the run and the truth import the same modules first, so that the
interpreter's own start-up holds the same memory in each.
"""
import ctypes
import os
import re
import sys
import tempfile


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def pymalloc_arena_bytes():
    # _debugmallocstats writes to the C stderr: send it through a file.
    with tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        text = captured.read().decode()
    match = re.search(r"^(\d+) arenas \* (\d+) bytes/arena", text, re.MULTILINE)
    return int(match.group(1)) * int(match.group(2))


def malloc_in_use():
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


def rss_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main():
    tuples, buffers_mib, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    if mode == "tracemalloc":
        import tracemalloc
        tracemalloc.start()
    malloc_in_use()  # ctypes' own set-up, before the peak in every mode
    xs = [(i, i + 1) for i in range(tuples)]
    buffers = [bytearray(1 << 20) for _ in range(buffers_mib)]
    if mode == "truth":
        arenas = pymalloc_arena_bytes()
        heap = malloc_in_use()
        print(f"arenas={arenas} malloc={heap} total={arenas + heap} rss={rss_bytes()}")
    elif mode == "tracemalloc":
        print(f"tracemalloc_peak={tracemalloc.get_traced_memory()[1]}")
    del xs, buffers
    print(f"tuples={tuples} buffers_mib={buffers_mib}")


main()
