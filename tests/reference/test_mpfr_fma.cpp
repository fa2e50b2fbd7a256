// fma_rndn (reference/include/vla/reference/mpfr_fma.hpp) against mpfr_fma: the
// same number, bit for bit and sign of zero included, on random and
// adversarial operands at every precision the certifier uses and around them.
// A mismatch prints the operands in hexadecimal, enough to replay it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "vla/reference/models.hpp"
#include "vla/reference/mpfr_fma.hpp"

namespace {

using vla::ref::fma_rndn;

// An mpfr_t of a given precision, freed on scope exit.
struct Num {
  mpfr_t v;
  explicit Num(mpfr_prec_t p) { mpfr_init2(v, p); }
  ~Num() { mpfr_clear(v); }
  Num(const Num&) = delete;
  Num& operator=(const Num&) = delete;
};

std::string hex(mpfr_srcptr x) {
  char* s = nullptr;
  mpfr_asprintf(&s, "%Ra", x);
  std::string out(s);
  mpfr_free_str(s);
  return out;
}

bool same(mpfr_srcptr x, mpfr_srcptr y) {
  if (mpfr_nan_p(x) || mpfr_nan_p(y)) return mpfr_nan_p(x) && mpfr_nan_p(y);
  return mpfr_equal_p(x, y) && mpfr_signbit(x) == mpfr_signbit(y);
}

// c - a b as the formula has it: fma(-a, b, c), with -a negated exactly.
void expected(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c, bool negate_product) {
  Num na(mpfr_get_prec(a));
  mpfr_set(na.v, a, MPFR_RNDN);
  if (negate_product) mpfr_neg(na.v, na.v, MPFR_RNDN);
  mpfr_fma(r, na.v, b, c, MPFR_RNDN);
}

class Operands {
 public:
  explicit Operands(std::uint64_t seed) : gen_(seed) {}
  std::uint64_t next() { return gen_(); }
  // Dense: every significand bit random; sparse: a small integer plus maybe a
  // far-away bit (products and sums then hit exact midpoints, i.e. ties).
  void number(mpfr_ptr x) {
    const mpfr_prec_t p = mpfr_get_prec(x);
    if (next() % 2 == 0) {
      mpfr_set_ui(x, 1 + next() % 64, MPFR_RNDN);
      if (next() % 2 == 0) {
        Num t(p);
        mpfr_set_ui_2exp(t.v, 1, -long(next() % (2 * p + 10)), MPFR_RNDN);
        mpfr_add(x, x, t.v, MPFR_RNDN);
      }
    } else {
      const int n = int((p + 63) / 64);
      mpfr_set_ui(x, 1, MPFR_RNDN);  // regular, so the significand is ours to fill
      auto* limbs = static_cast<mp_limb_t*>(mpfr_custom_get_significand(x));
      for (int i = 0; i < n; ++i) limbs[i] = mp_limb_t(next());
      limbs[n - 1] |= mp_limb_t(1) << 63;
      const unsigned unused = unsigned(64L * n - p);
      if (unused != 0) limbs[0] &= ~((mp_limb_t(1) << unused) - 1);
    }
    mpfr_mul_2si(x, x, long(next() % 41) - 20, MPFR_RNDN);
    if (next() % 2 == 0) mpfr_neg(x, x, MPFR_RNDN);
  }

 private:
  std::mt19937_64 gen_;
};

// c chosen against a and b: random, zero, at an exponent gap around the fast
// path's thresholds (64 bits, 64 (N + 1) bits), or near -a b (cancellation).
void pick_c(Operands& g, mpfr_ptr c, mpfr_srcptr a, mpfr_srcptr b) {
  const mpfr_prec_t p = mpfr_get_prec(c);
  const long n = (p + 63) / 64;
  const long ep = mpfr_get_exp(a) + mpfr_get_exp(b);
  switch (g.next() % 5) {
    case 0:
      mpfr_set_zero(c, g.next() % 2 == 0 ? 1 : -1);
      return;
    case 1:
      g.number(c);
      mpfr_mul_2si(c, c, long(g.next() % (6 * p + 40)) - (3 * p + 20), MPFR_RNDN);
      return;
    case 2: {
      g.number(c);
      const long gaps[] = {0, 1, 2, 63, 64, 65, 66, 64 * (n + 1) - 1, 64 * (n + 1), 64 * (n + 1) + 1, 128 * n + 3};
      const long gap = gaps[g.next() % (sizeof gaps / sizeof gaps[0])];
      mpfr_set_exp(c, g.next() % 2 == 0 ? ep + gap : ep - gap);
      return;
    }
    default: {  // c = -(a b) rounded any way, nudged by a few ulps or a far bit
      mpfr_mul(c, a, b, mpfr_rnd_t(g.next() % 4));
      mpfr_neg(c, c, MPFR_RNDN);
      for (int k = int(g.next() % 4); k > 0; --k) {
        if (g.next() % 2 == 0) {
          mpfr_nextabove(c);
        } else {
          mpfr_nextbelow(c);
        }
      }
      if (g.next() % 3 == 0) {
        Num t(p);
        g.number(t.v);
        mpfr_mul_2si(t.v, t.v, -long(g.next() % (2 * p)), MPFR_RNDN);
        mpfr_add(c, c, t.v, MPFR_RNDN);
      }
      return;
    }
  }
}

// a b exactly halfway between two p-bit numbers ((1 + 2^(1-p)) 1.5 = 1.5 +
// 2^(1-p) + 2^-p) and c far below it, either sign: only c's sign decides the
// rounding, so a lost sticky bit shows.
void midpoint_plus_tiny(Operands& g, mpfr_ptr a, mpfr_ptr b, mpfr_ptr c) {
  const mpfr_prec_t p = mpfr_get_prec(a);
  const long n = (p + 63) / 64;
  mpfr_set_ui_2exp(a, 1, 1 - p, MPFR_RNDN);
  mpfr_add_ui(a, a, 1, MPFR_RNDN);
  mpfr_set_d(b, g.next() % 2 == 0 ? 1.5 : -1.5, MPFR_RNDN);
  const long gaps[] = {p + 2, 65, 66, 64 * (n + 1), 64 * (n + 1) + 1, 64 * (n + 1) + 70, 128 * n + 3, 5000};
  g.number(c);
  mpfr_set_exp(c, mpfr_get_exp(a) + mpfr_get_exp(b) - gaps[g.next() % (sizeof gaps / sizeof gaps[0])]);
}

// Runs `cases` random operations at precision p; returns the number of mismatches.
int mismatches_at(mpfr_prec_t p, int cases, std::uint64_t seed) {
  Operands g(seed);
  Num a(p), b(p), c(p), got(p), want(p);
  int bad = 0;
  for (int i = 0; i < cases; ++i) {
    g.number(a.v);
    if (g.next() % 8 == 0) {
      mpfr_set(b.v, a.v, MPFR_RNDN);  // a squared: the mpn_sqr branch
    } else {
      g.number(b.v);
    }
    pick_c(g, c.v, a.v, b.v);
    if (g.next() % 8 == 0) midpoint_plus_tiny(g, a.v, b.v, c.v);
    const bool neg = g.next() % 2 == 0;
    expected(want.v, a.v, b.v, c.v, neg);
    // Output separate, or the accumulator itself (the in-place forms).
    if (g.next() % 2 == 0) {
      fma_rndn(got.v, a.v, b.v, c.v, neg);
    } else {
      mpfr_set(got.v, c.v, MPFR_RNDN);
      fma_rndn(got.v, a.v, b.v, got.v, neg);
    }
    if (!same(got.v, want.v)) {
      if (++bad <= 3) {
        ADD_FAILURE() << "p=" << p << " a=" << hex(a.v) << " b=" << hex(b.v) << " c=" << hex(c.v)
                      << " negate_product=" << neg << ": got " << hex(got.v) << ", mpfr_fma " << hex(want.v);
      }
    }
  }
  return bad;
}

TEST(MpfrFma, MatchesMpfrFmaBitForBit) {
  // The certifier's ladder at --bits 256 (256, 384, 576), the benchmark's 128
  // and 512, widths that are not whole limbs, one limb, the 1024-bit limit and
  // just past it (MPFR's own path).
  const mpfr_prec_t precisions[] = {17, 53, 64, 100, 128, 200, 255, 256, 257, 384, 511, 512, 576, 1000, 1024, 1100};
  std::uint64_t seed = 1;
  for (const mpfr_prec_t p : precisions) EXPECT_EQ(mismatches_at(p, 12000, seed++), 0) << "precision " << p;
}

TEST(MpfrFma, SpecialOperandsAndMixedPrecisionsFollowMpfr) {
  const mpfr_prec_t p = 256;
  Num zero(p), nzero(p), one(p), inf(p), nan(p), x(p), narrow(100), got(p), want(p);
  mpfr_set_zero(zero.v, 1);
  mpfr_set_zero(nzero.v, -1);
  mpfr_set_ui(one.v, 1, MPFR_RNDN);
  mpfr_set_inf(inf.v, 1);
  mpfr_set_nan(nan.v);
  mpfr_set_d(x.v, -0.375, MPFR_RNDN);
  mpfr_set_d(narrow.v, 1.0 / 3.0, MPFR_RNDN);
  const std::vector<mpfr_srcptr> values = {zero.v, nzero.v, one.v, inf.v, nan.v, x.v, narrow.v};
  for (mpfr_srcptr a : values) {
    for (mpfr_srcptr b : values) {
      for (mpfr_srcptr c : values) {
        for (const bool neg : {false, true}) {
          expected(want.v, a, b, c, neg);
          fma_rndn(got.v, a, b, c, neg);
          EXPECT_TRUE(same(got.v, want.v)) << hex(a) << " " << hex(b) << " " << hex(c) << " neg=" << neg << ": got "
                                           << hex(got.v) << ", mpfr_fma " << hex(want.v);
        }
      }
    }
  }
}

// Results outside a narrowed exponent range overflow or underflow as MPFR says.
TEST(MpfrFma, ExponentRangeIsMpfrs) {
  const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
  mpfr_set_emin(-100);
  mpfr_set_emax(100);
  const mpfr_prec_t p = 256;
  Num a(p), b(p), c(p), got(p), want(p);
  // {exponent of a and b, exponent of c or 0 for c = 0}: overflow, inside,
  // underflow, inside.
  const long cases[][2] = {{60, 1}, {40, 1}, {-50, 0}, {-40, -100}};
  for (const auto& k : cases) {
    mpfr_set_d(a.v, 0.75, MPFR_RNDN);
    mpfr_set_exp(a.v, k[0]);
    mpfr_set_d(b.v, -0.625, MPFR_RNDN);
    mpfr_set_exp(b.v, k[0]);
    if (k[1] == 0) {
      mpfr_set_zero(c.v, 1);
    } else {
      mpfr_set_d(c.v, 0.5, MPFR_RNDN);
      mpfr_set_exp(c.v, k[1]);
    }
    expected(want.v, a.v, b.v, c.v, false);
    fma_rndn(got.v, a.v, b.v, c.v);
    EXPECT_TRUE(same(got.v, want.v)) << "exponent " << k[0] << ": got " << hex(got.v) << ", mpfr_fma " << hex(want.v);
  }
  mpfr_set_emin(emin);
  mpfr_set_emax(emax);
}

// The reference's A update is fma(-z_i, g_j, A_ij): where it cancels exactly
// (one-hot keys leave zeros off the diagonal) the zero is +0, as at double.
TEST(MpfrFma, ReferenceZerosCarryTheFormulasSign) {
  vla::Stream s;
  s.dims = {1, 6, 1, 6, 6};
  s.q.assign(36, 0.5);
  s.k.assign(36, 0.0);
  s.v.assign(36, 1.0);
  for (int t = 0; t < 6; ++t) s.k[std::size_t(t) * 6 + t] = 2.0;
  vla::Options opt;
  opt.feature_map = vla::FeatureMap::identity;
  const auto m = vla::ref::run_mpfr(s, opt, 256);
  const auto d = vla::ref::run_model<double>(s, opt);
  int zeros = 0;
  for (std::size_t e = 0; e < d.A.size(); ++e) {
    if (d.A[e] != 0.0) continue;
    ++zeros;
    EXPECT_TRUE(mpfr_zero_p(m.A[e].get())) << "A[" << e << "]";
    EXPECT_EQ(mpfr_signbit(m.A[e].get()) != 0, std::signbit(d.A[e])) << "A[" << e << "]";
  }
  EXPECT_GT(zeros, 0);  // the stream does produce exact zeros
}

}  // namespace
