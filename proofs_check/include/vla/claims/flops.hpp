// Operation counts of one step, taken from the spec's own code: the generic
// step (core/recurrence.hpp) runs on a scalar that counts every arithmetic
// operation it performs, so nothing here restates the recurrence.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vla/core/spec.hpp"

namespace vla::claims {

struct OpCount {
  long add = 0, mul = 0, div = 0, sqrt = 0, exp = 0, fma = 0;
  // Floating-point operations: a fused multiply-add is two (a multiply and an
  // add), every other operation one. Comparisons (max, the branch of elu1) are
  // not arithmetic and are not counted.
  long flops() const { return add + mul + div + sqrt + exp + 2 * fma; }
  OpCount operator-(const OpCount& o) const {
    return {add - o.add, mul - o.mul, div - o.div, sqrt - o.sqrt, exp - o.exp, fma - o.fma};
  }
};

// One step of opt.model (VLA, linear, DeltaNet) at Dk = dk, Dv = dv, from a
// generic state (one step already taken), including the readout.
OpCount count_step(const Options& opt, int dk, int dv);
// The readout alone (o_t and the state-norm diagnostic) at the same sizes.
OpCount count_readout(const Options& opt, int dk, int dv);

// An operation count as an exact polynomial in the dimension D: the count is
// sampled at D = 1..9 and its forward differences give the Newton form, exact
// in integer arithmetic. `verified` says the differences of order 5 to 8
// vanish, i.e. the count is a polynomial of degree <= 4 on every sample.
struct CostPolynomial {
  int degree = -1;
  std::vector<double> coeff;  // coeff[k] multiplies D^k (multiples of 1/24)
  bool verified = false;
  double leading() const { return degree >= 0 ? coeff[std::size_t(degree)] : 0.0; }
  double operator()(double D) const;
  std::string str() const;    // e.g. "10 D^2 + 12 D + 3"
};
CostPolynomial cost_polynomial(const std::function<long(int)>& count);

}  // namespace vla::claims
