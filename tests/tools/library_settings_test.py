#!/usr/bin/env python3
"""The library's settings as programs know them (interposer/include/heapline/
library_settings.h) are exactly the variables the library reads (the names
of interposer/src/base/config.cpp's table): a setting added to the library
and not to the list would pass from a caller's environment into a
heapline-bench measurement unseen."""
import os
import re
import sys
import unittest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def names(path, pattern):
    with open(os.path.join(SOURCE_DIR, path), encoding="utf-8") as source:
        return set(re.findall(pattern, source.read()))


class LibrarySettings(unittest.TestCase):
    def test_the_list_is_the_librarys_table(self):
        read = names("interposer/src/base/config.cpp", r'\{"(HEAPLINE_[A-Z_]+)",')
        listed = names("interposer/include/heapline/library_settings.h", r'"(HEAPLINE_[A-Z_]+)"')
        self.assertGreaterEqual(len(read), 9, read)
        self.assertEqual(read, listed)


if __name__ == "__main__":
    unittest.main()
