// The self-certifying reference: runs the recurrence at a working precision and
// vouches for a number of correct significant bits of every output element.
#pragma once

#include <string>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::ref {

enum class ScalarKind { f64, f128, mpfr };

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
};

// Validates the stream and options (std::invalid_argument naming the problem).
Certified run_certified(const Stream& s, const Options& opt, const CertifyRequest& req);

std::string to_string(ScalarKind);
ScalarKind parse_scalar(std::string_view);  // "double", "float128", "mpfr"

}  // namespace vla::ref
