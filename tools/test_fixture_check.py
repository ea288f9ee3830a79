"""Tests of tools/fixture_check.py: the fixture --check accepts another CPU's last-bit rounding
and still rejects a fixture that is really stale. Run by `make test-fixtures`."""

import math
import struct
import sys
import unittest

from fixture_check import compare_line, compare_texts, ulp_distance


def next_up(x, n=1, bits=64):
    """x moved n representable floats up in the given width."""
    fmt, ifmt = {32: ("<f", "<i"), 64: ("<d", "<q")}[bits]
    i = struct.unpack(ifmt, struct.pack(fmt, x))[0]
    return struct.unpack(fmt, struct.pack(ifmt, i + n if x >= 0 else i - n))[0]


LINE = "expect float64 0 3 : 10.607406082389263 -0.5 0.0"


class UlpDistance(unittest.TestCase):
    def test_adjacent_and_signed_zero(self):
        self.assertEqual(ulp_distance(1.0, next_up(1.0)), 1)
        self.assertEqual(ulp_distance(-1.0, next_up(-1.0, 3)), 3)
        self.assertEqual(ulp_distance(0.0, -0.0), 0)
        self.assertEqual(ulp_distance(math.nan, math.nan), 0)
        self.assertEqual(ulp_distance(math.inf, 1e308), math.inf)
        self.assertEqual(ulp_distance(math.nan, 1.0), math.inf)

    def test_float32_width(self):
        x = 1.5
        y = next_up(x, 2, bits=32)
        self.assertEqual(ulp_distance(x, y, 32), 2)
        self.assertGreater(ulp_distance(x, y, 64), 1000)


class CompareLine(unittest.TestCase):
    def test_last_bit_rounding_is_accepted(self):
        # the difference seen between an AVX-512 and an AVX2 machine
        other = LINE.replace("10.607406082389263", "10.607406082389264")
        self.assertIsNone(compare_line(LINE, other))
        self.assertIsNone(compare_line(LINE, LINE.replace("0.0", "-0.0")))

    def test_value_off_by_more_than_a_few_ulp_fails(self):
        far = repr(next_up(10.607406082389263, 5))
        self.assertIn("ulp", compare_line(LINE, LINE.replace("10.607406082389263", far)))
        self.assertIsNotNone(compare_line(LINE, LINE.replace("-0.5", "-0.5000001")))
        self.assertIsNotNone(compare_line(LINE, LINE.replace("-0.5", "nan")))

    def test_float32_lines_use_float32_ulps(self):
        line = "expect float32 0 2 : 1.5 2.0"
        near = repr(next_up(1.5, 1, bits=32))
        far = repr(next_up(1.5, 6, bits=32))
        self.assertIsNone(compare_line(line, line.replace("1.5", near)))
        self.assertIsNotNone(compare_line(line, line.replace("1.5", far)))

    def test_structure_must_match(self):
        self.assertIsNotNone(compare_line(LINE, LINE.replace("float64", "float32")))  # dtype
        self.assertIsNotNone(compare_line(LINE, LINE.replace("0 3 :", "0 1 3 :")))  # shape
        self.assertIsNotNone(compare_line("case exp_f64_9 exp", "case exp2_f64_9 exp2"))  # op
        self.assertIsNotNone(compare_line("expect int32 0 2 : 7 8", "expect int32 0 2 : 7 9"))
        self.assertIsNotNone(compare_line(LINE, LINE + " 1.0"))  # one value more


class CompareTexts(unittest.TestCase):
    def test_missing_or_extra_lines_fail(self):
        old = "case a exp\n" + LINE + "\nend\n"
        problems, _ = compare_texts(old, old.replace("end\n", "end\ncase b exp\n"))
        self.assertTrue(problems)
        problems, close = compare_texts(old, old.replace("263", "264"))
        self.assertEqual((problems, close), ([], 1))


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
