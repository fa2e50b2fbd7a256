// r = a * b + c rounded once to nearest (ties to even): the same number as
// mpfr_fma(r, a, b, c, MPFR_RNDN), bit for bit, at 55 to 75% of its cost up to
// 256 bits; with negate_product, r = c - a * b = fma(-a, b, c).
//
// Why by hand: the reference spends nearly all of its time in this operation
// (7 D^2 per step). mpfr_fma forms the exact product with the general mpfr_mul
// and then calls the general mpfr_add on operands of two precisions, paying
// MPFR's generic bookkeeping twice: 58 ns at 256 bits, where GMP's 4-limb
// product alone takes 11 ns. A correctly rounded result is unique, so any
// correct method gives MPFR's bits. This one works on GMP's naturals (mpn):
//
//  1. P = A B exactly (2n limbs for n-limb significands).
//  2. P and C go into one fixed-point frame of 2n + 2 limbs aligned on the
//     larger exponent E (top limb for the carry). The smaller term is placed
//     exactly when it fits (P when at most 64 bits below E, C when at most
//     64 (n + 1) bits below); beyond that its bits below frame bit 1 are
//     dropped and bit 0 records whether any was set (sticky). That is exact
//     for the rounding: the result is then above 2^(E - 3), so the rounding
//     point and every p-bit number and midpoint near the result lie on
//     multiples of 4 frame units, the kept sum is a multiple of 2, and the
//     dropped part (in [0, 2)) and its stand-in (1 when nonzero) put the
//     result strictly inside the same interval between two of them.
//  3. The exact sum or difference is rounded to p bits, ties to even.
//
// Only the common case is handled: all four numbers of one precision p <= 256
// bits (kMaxLimbs), a and b regular, c regular or zero, and a result inside the
// exponent range; anything else (zeros, infinities, NaN, mixed precisions,
// overflow, underflow) goes to mpfr_fma. No ternary value and no MPFR flag
// (nothing here reads them). tests/reference/test_mpfr_fma.cpp compares it with
// mpfr_fma on random and adversarial operands (cancellation, ties, exponent
// gaps at the thresholds, precisions on both sides of the limit).
#pragma once

#include <gmp.h>
#include <mpfr.h>

#include <utility>

namespace vla::ref {

namespace fma_detail {

// p <= 256 bits. Measured per call (random operands, one core): 31 / 43 ns at
// 128 / 256 bits against mpfr_fma's 55 / 58; from 320 bits on this code is the
// slower one (72 against 64 ns; 111 against 90 at 512), so MPFR keeps those.
inline constexpr int kMaxLimbs = 4;
inline constexpr int kBits = GMP_NUMB_BITS;
static_assert(kBits == 64, "fma_rndn assumes 64-bit limbs without nails");

// The fallback: MPFR itself. c - a b is fma(-a, b, c), with -a a view of a's
// significand under the opposite sign (no copy, no allocation), so that even
// the sign of a zero result is the formula's.
inline void fma_mpfr(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c, bool negate_product) {
  if (!negate_product) {
    mpfr_fma(r, a, b, c, MPFR_RNDN);
    return;
  }
  if (r == a) {  // r would overwrite the significand a view of a reads
    mpfr_t copy;
    mpfr_init2(copy, mpfr_get_prec(a));
    mpfr_neg(copy, a, MPFR_RNDN);
    mpfr_fma(r, copy, b, c, MPFR_RNDN);
    mpfr_clear(copy);
    return;
  }
  mpfr_t neg_a;
  mpfr_custom_init_set(neg_a, -mpfr_custom_get_kind(a), mpfr_custom_get_exp(a), mpfr_get_prec(a),
                       mpfr_custom_get_significand(a));
  mpfr_fma(r, neg_a, b, c, MPFR_RNDN);
}

// X[0, K) = x (M limbs) shifted left by sh bits, zero elsewhere; the caller
// guarantees that it fits. For sh < 0 the bits that would land below bit 1
// are dropped and bit 0 says whether any was nonzero (the sticky stand-in).
template <int K, int M>
inline void place(mp_limb_t* X, const mp_limb_t* x, long sh) {
  __builtin_memset(X, 0, sizeof(mp_limb_t) * K);
  if (sh < 0) {
    const long drop = 1 - sh;  // x >> drop goes to bit 1
    const long q = drop / kBits;
    if (q >= M) {
      X[0] = 1;  // x is nonzero
      return;
    }
    mp_limb_t y[M];
    mp_limb_t lost = 0;
    for (long i = 0; i < q; ++i) lost |= x[i];
    const unsigned bit = unsigned(drop % kBits);
    if (bit == 0) {
      __builtin_memcpy(y, x + q, sizeof(mp_limb_t) * (M - q));
    } else {
      lost |= mpn_rshift(y, x + q, M - q, bit);
    }
    X[M - q] = mpn_lshift(X, y, M - q, 1);
    X[0] |= mp_limb_t(lost != 0);
    return;
  }
  const long off = sh / kBits;
  const unsigned bit = unsigned(sh % kBits);
  if (bit == 0) {
    __builtin_memcpy(X + off, x, sizeof(mp_limb_t) * M);
  } else {
    X[off + M] = mpn_lshift(X + off, x, M, bit);
  }
}

// Bits [pos, pos + 64) of X[0, K] (X[K] = 0; zero outside; pos may be negative).
template <int K>
inline mp_limb_t bits64(const mp_limb_t* X, long pos) {
  if (pos <= -kBits) return 0;
  if (pos < 0) return X[0] << unsigned(-pos);
  const long q = pos / kBits;
  const unsigned s = unsigned(pos % kBits);
  return (X[q] >> s) | ((X[q + 1] << 1) << (kBits - 1 - s));
}

// Is any of the bits [0, pos) of X[0, K) set? (0 <= pos < 64 K.)
template <int K>
inline bool any_below(const mp_limb_t* X, long pos) {
  const long q = pos / kBits;
  mp_limb_t acc = X[q] & ((mp_limb_t(1) << unsigned(pos % kBits)) - 1);
  for (int i = 0; i < K; ++i) acc |= X[i] & (mp_limb_t(0) - mp_limb_t(i < q));
  return acc != 0;
}

// The fast path for significands of N limbs (see the file comment). Returns
// false, having written nothing, when the result leaves the exponent range.
template <int N>
inline bool fma_limbs(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c, bool c_zero, bool negate_product) {
  using Wide = unsigned __int128;
  constexpr int K = 2 * N + 2;
  constexpr long kTop = long(K - 1) * kBits;
  const mpfr_prec_t p = mpfr_get_prec(r);
  const auto* A = static_cast<const mp_limb_t*>(mpfr_custom_get_significand(a));
  const auto* B = static_cast<const mp_limb_t*>(mpfr_custom_get_significand(b));

  // A significand X of m limbs with exponent e is worth X 2^(e - 64 m).
  mp_limb_t P[2 * N];
  if (A == B) {
    mpn_sqr(P, A, N);
  } else {
    mpn_mul_n(P, A, B, N);
  }
  const bool neg_p = (mpfr_signbit(a) != mpfr_signbit(b)) != negate_product;
  const long ep = long(mpfr_get_exp(a)) + long(mpfr_get_exp(b));  // |a b| < 2^ep

  // Frame X (2 N + 2 limbs) is worth X 2^(E - kTop), E the larger exponent:
  // the larger term's top bit lands in limb K - 2, the top limb takes the
  // carry. The smaller term is exact when it fits, P when it lies at most 64
  // bits lower (dp <= 64), C when at most 64 (N + 1) bits lower; beyond that
  // it is truncated to a sticky bit 0, which is exact for the rounding: the
  // result then exceeds 2^(E - 3), so its rounding point lies above bit 2.
  mp_limb_t X[K + 1];
  X[K] = 0;
  bool neg = neg_p;
  long E = ep;
  if (c_zero) {
    place<K, 2 * N>(X, P, kTop - 128L * N);
  } else {
    const auto* C = static_cast<const mp_limb_t*>(mpfr_custom_get_significand(c));
    const long ec = mpfr_get_exp(c);
    E = ep > ec ? ep : ec;
    mp_limb_t Y[K];
    place<K, 2 * N>(X, P, kTop - 128L * N - (E - ep));
    place<K, N>(Y, C, kTop - 64L * N - (E - ec));
    if (mpfr_signbit(c) == neg_p) {
      mpn_add_n(X, X, Y, K);  // no carry out: both terms lie below the top limb
    } else if (mpn_sub_n(X, X, Y, K) != 0) {
      mpn_neg(X, X, K);
      neg = !neg_p;
    }
  }

  // The exact result's top bit h.
  int t = K - 1;
  while (t >= 0 && X[t] == 0) --t;
  if (t < 0) {  // exact cancellation: +0 when rounding to nearest
    mpfr_set_zero(r, +1);
    return true;
  }
  const long h = long(t) * kBits + (kBits - 1 - __builtin_clzll(X[t]));
  long er = E - kTop + h + 1;

  // T = the N + 1 limbs of bits (h - 64 (N + 1), h]: the top bit of T[N] set;
  // keep p bits, the last at bit s of T[1] (s = 64 N - p); round at bit s - 1
  // (of T[1], or bit 63 of T[0] when s = 0), sticky = anything below it.
  const long lo = h + 1 - long(N + 1) * kBits;
  mp_limb_t T[N + 1];
  for (int i = 0; i <= N; ++i) T[i] = bits64<K>(X, lo + long(i) * kBits);
  const unsigned s = unsigned(long(N) * kBits - p);
  bool sticky = lo > 0 && any_below<K>(X, lo);
  bool round_bit;
  if (s == 0) {
    round_bit = (T[0] >> (kBits - 1)) != 0;
    sticky = sticky || (T[0] << 1) != 0;
  } else {
    round_bit = ((T[1] >> (s - 1)) & 1) != 0;
    sticky = sticky || T[0] != 0 || (T[1] & ((mp_limb_t(1) << (s - 1)) - 1)) != 0;
    T[1] &= ~((mp_limb_t(1) << s) - 1);
  }
  const mp_limb_t* M = T + 1;
  const mp_limb_t odd = (M[0] >> s) & 1;
  const mp_limb_t up = mp_limb_t(round_bit) & (mp_limb_t(sticky) | odd);
  // Rounding up may carry to the next power of two (exponent er + 1): both must
  // be in range before r, which may be the operand c, is written.
  if (er < mpfr_get_emin() || er + 1 > mpfr_get_emax()) return false;
  // The rounded significand goes straight into r, limb by limb (a copy through
  // a local array was vectorised into wide loads of narrow stores: a
  // store-forwarding stall that cost 8% of the call).
  auto* R = static_cast<mp_limb_t*>(mpfr_custom_get_significand(r));
  Wide acc = Wide(up) << s;
  for (int i = 0; i < N; ++i) {
    acc += M[i];
    R[i] = mp_limb_t(acc);
    acc >>= kBits;
  }
  if (acc != 0) {  // rounded up to a power of two
    R[N - 1] = mp_limb_t(1) << (kBits - 1);
    er += 1;
  }
  mpfr_custom_init_set(r, neg ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, er, p, R);
  return true;
}

template <int... I>
inline bool fma_dispatch(int n, mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c, bool c_zero, bool negate_product,
                         std::integer_sequence<int, I...>) {
  bool done = false;
  ((n == I + 1 ? (done = fma_limbs<I + 1>(r, a, b, c, c_zero, negate_product), true) : false) || ...);
  return done;
}

}  // namespace fma_detail

inline void fma_rndn(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr c, bool negate_product = false) {
  using namespace fma_detail;
  const mpfr_prec_t p = mpfr_get_prec(r);
  const int n = int((p + kBits - 1) / kBits);
  const bool c_zero = mpfr_zero_p(c);
  if (n <= kMaxLimbs && mpfr_get_prec(a) == p && mpfr_get_prec(b) == p && mpfr_get_prec(c) == p &&
      mpfr_regular_p(a) && mpfr_regular_p(b) && (c_zero || mpfr_regular_p(c)) &&
      fma_dispatch(n, r, a, b, c, c_zero, negate_product, std::make_integer_sequence<int, kMaxLimbs>{})) {
    return;
  }
  fma_mpfr(r, a, b, c, negate_product);
}

}  // namespace vla::ref
