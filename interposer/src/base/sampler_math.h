// The heap sampler's arithmetic, without libm (the library needs libc
// alone: tests/interposer/needs_only_libc.sh): pure functions, tested
// against libm in tests/interposer/sampler_math_test.cpp, since every weight
// and every distance between samples goes through them.
#pragma once

#include <cstdint>

namespace heapline::sampler {

// ln(x) for x in (0, 1]: x = m 2^e with m in [1, 2), ln m = 2 atanh(t),
// t = (m - 1) / (m + 1) in [0, 1/3): the series to t^15 is within 1e-8.
inline double natural_log(double x) {
  std::uint64_t bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1023} << 52);
  double m;
  __builtin_memcpy(&m, &bits, sizeof m);
  const double t = (m - 1) / (m + 1);
  const double t2 = t * t;
  // Horner's form of 1 + t^2/3 + ... + t^14/15, its constants folded (a
  // draw per fired meter: no loop, one division).
  const double series =
      1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 * (1.0 / 9 + t2 * (1.0 / 11 + t2 * (1.0 / 13 + t2 / 15))))));
  return exponent * 0.6931471805599453 + 2 * t * series;
}

// 1 - exp(-x) for x >= 0: the probability that a block of x means is sampled.
inline double sampled_probability(double x) {
  if (x < 1e-3) return x * (1 - x / 2 * (1 - x / 3 * (1 - x / 4)));
  if (x > 40) return 1;
  // exp(-x) = 2^-k exp(-r), r in [0, ln 2).
  const int k = static_cast<int>(x / 0.6931471805599453);
  const double r = x - k * 0.6931471805599453;
  double term = 1, sum = 1;
  for (int n = 1; n < 20; ++n) {
    term *= -r / n;
    sum += term;
  }
  double scale = 1;
  for (int i = 0; i < k; ++i) scale *= 0.5;
  return 1 - sum * scale;
}

}  // namespace heapline::sampler
