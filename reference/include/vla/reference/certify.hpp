// The self-certifying reference: runs the recurrence at a working precision and
// vouches for a number of correct significant bits of every output element.
//
// Method (Herbie's ground truth, by raising the precision): besides the working
// run at p bits, the same stream runs with MPFR at q1 = p + max(64, p/2) and
// q2 = q1 + max(64, q1/2) bits. For every output element x the error bound is
//   err = |x_p - x_q1| + |x_q1 - x_q2|,
// i.e. the working result's distance to q1 plus q1's own distance to the better
// run q2; while the second term costs more than a bit of the answer, q1 and q2
// are raised again (at most 3 times). The assumption, as in Herbie, is that the
// q2 run is much closer to the exact value than q1 is: a heuristic, not a proof.
//
// Scale (how exact zeros and tiny elements are treated): the error of an element
// is measured relative to the largest |x_q2| of its group, which is the (b,t,h)
// row of o, the (b,h) matrix of S and of A, and the element itself for
// state_norm. So an element that cancels to (nearly) zero is judged on the scale
// of its neighbours, not on its own (which would make certification impossible
// wherever the exact value is 0, e.g. off-diagonal entries of A for orthogonal
// keys). A group that is exactly zero at q2 counts as exact when the working run
// is exactly zero too. bits = min(p, -log2(err / scale)); certified_bits is the
// minimum over all elements of o, S, A and state_norm. The purely elementwise
// measure (scale = |x_q2| itself) is reported beside it for information.
#pragma once

#include <string>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::ref {

enum class ScalarKind { f64, f128, mpfr };

// Accepted range of the MPFR working precision, in bits.
inline constexpr int kMinBits = 16;
inline constexpr int kMaxBits = 1 << 16;

struct CertifyRequest {
  ScalarKind scalar = ScalarKind::mpfr;
  int bits = 256;               // working precision for mpfr (ignored for f64/f128)
  double required_bits = 0.0;   // fail (meets_requirement = false) below this; 0 = no requirement
};

struct Certified {
  Outputs out;                  // the working-precision results, rounded to double
  int working_bits = 0;         // significand bits of the run that produced `out`
  double certified_bits = 0.0;  // min over every output element (o, S, A, state_norm)
  std::string method;           // how the bits were established, for the output metadata
  bool meets_requirement = true;
  // Added detail.
  double certified_bits_elementwise = 0.0;  // same minimum, each element relative to itself
  std::string worst;                        // the element that set certified_bits, e.g. "o[b=0,t=3,h=1,i=2]"
  std::vector<int> check_bits;              // precisions of the checking runs (q1, q2 after any raise)
};

// Validates the stream and options (std::invalid_argument naming the problem).
Certified run_certified(const Stream& s, const Options& opt, const CertifyRequest& req);

std::string to_string(ScalarKind);
ScalarKind parse_scalar(std::string_view);  // "double", "float128", "mpfr"

}  // namespace vla::ref
