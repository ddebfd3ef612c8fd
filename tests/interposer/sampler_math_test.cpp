// The heap sampler's arithmetic (sampler_math.h) against libm: the distance
// between samples is -ln(u) means, and a sampled block of x means stands
// for 1 / (1 - exp(-x)) blocks. An error here is an error in every profile
// estimate, so both are held to what their comments state over their whole
// domain, the branches' edges included.
#include "sampler_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace heapline::sampler {
namespace {

TEST(SamplerMath, NaturalLogIsWithinItsStatedErrorOverTheDrawsDomain) {
  // u as draw_distance makes it: (k + 1) / 2^53, k a 53-bit integer.
  std::mt19937_64 random(7);
  double worst = 0;
  auto check = [&](double u) {
    const double error = std::fabs(natural_log(u) - std::log(u));
    worst = std::fmax(worst, error);
    ASSERT_LE(error, 1e-8) << "u = " << u;
  };
  for (int i = 0; i < 200000; ++i) check(static_cast<double>((random() >> 11) + 1) * 0x1p-53);
  // Every binade's ends: m = 1 (t = 0) and m just under 2 (t near 1/3).
  for (int e = 0; e <= 53; ++e) {
    check(std::ldexp(1.0, -e));
    check(std::nextafter(std::ldexp(1.0, -e), 0.0));
  }
  check(0x1p-53);
  check(1.0);
  EXPECT_EQ(natural_log(1.0), 0.0);
  EXPECT_GT(worst, 0.0);
}

TEST(SamplerMath, SampledProbabilityIsOneMinusExpOfMinusXEverywhere) {
  auto check = [](double x) {
    const double exact = -std::expm1(-x);
    ASSERT_NEAR(sampled_probability(x), exact, 1e-14) << "x = " << x;
    ASSERT_LE(sampled_probability(x), 1.0) << "x = " << x;
    ASSERT_GE(sampled_probability(x), 0.0) << "x = " << x;
  };
  // Blocks of a 1e-6 mean to 60 means, on a grid finer than ln 2 (the range
  // reduction's step) and at each branch's edge.
  for (double x = 0; x <= 60; x += 0.0137) check(x);
  for (double x = 1e-9; x < 1; x *= 1.7) check(x);
  for (double edge : {1e-3, 40.0}) {
    check(std::nextafter(edge, 0.0));
    check(edge);
    check(std::nextafter(edge, 100.0));
  }
  for (int k = 1; k < 58; ++k) {
    check(k * 0.6931471805599453);
    check(std::nextafter(k * 0.6931471805599453, 0.0));
  }
  // Relative accuracy where the probability is small (the weight 1/p of a
  // small block is what a profile multiplies by).
  for (double x = 1e-9; x < 0.1; x *= 1.3)
    EXPECT_NEAR(sampled_probability(x) / -std::expm1(-x), 1.0, 1e-12) << "x = " << x;
  EXPECT_EQ(sampled_probability(0), 0.0);
  EXPECT_EQ(sampled_probability(std::numeric_limits<double>::max()), 1.0);
}

}  // namespace
}  // namespace heapline::sampler
