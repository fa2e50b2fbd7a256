// Input generators for the property tests, the fuzzer, the claims ledger and the
// reports: one named family per kind of stream (docs: properties/README.md).
//
// Every family is a transform of a stream of uniform quantiles p in (0, 1): the
// seeded API (make_case / make_stream) feeds it from a std::mt19937_64, the
// RapidCheck API (gen_case / gen_stream) from RapidCheck picks that shrink
// towards p = 1/2. So the two APIs draw from the same distributions, and a
// shrunk RapidCheck case has small T, small D and "simple" values (the median
// of the family: 0 for the symmetric ones, the canonical axes for structured keys).
//
// Structured keys are structured in feature space, i.e. in k^ = phi(k)/||phi(k)||,
// which is what the recurrence sees; the raw k is obtained through phi^{-1}. With
// the elu1 feature map phi(k) > 0, so the structures are built in the positive
// orthant (an entry meant to be 0 becomes phi^{-1}(kTinyFeature), see below).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <rapidcheck.h>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::props {

enum class Family {
  gaussian,         // i.i.d. N(0, 1) entries
  uniform,          // i.i.d. U(-1, 1)
  student_t,        // i.i.d. Student-t, nu in [1.5, 4] (param nu): heavy tails
  cauchy,           // i.i.d. standard Cauchy (Student-t with nu = 1)
  sparse,           // each entry N(0, 1) with probability rho in [0.05, 0.5] (param rho), else 0
  positive,         // i.i.d. Exp(1) > 0 (all of q, k, v, u)
  repeated,         // keys drawn from a pool of m in [1, 3] directions (param m)
  orthogonal,       // keys cycle through one orthonormal set of min(T, Dk) directions
  near_collinear,   // every k^_t at angle exactly theta in [1e-6, 1e-2] from one base direction (param theta)
  rank_deficient,   // keys span a subspace of dimension r < Dk (param r; r = 1 when Dk = 1)
  rotating,         // k^_t turns by omega in [1e-4, 1e-1] per step in one plane (param omega)
  scale_extremes,   // every vector scaled by 10^e, e uniform in [-30, 30]
  subnormal,        // vectors (q, v, u) or entries (k) subnormal, signed zeros; in half the cases
                    // (drawn once per case) 1/4 of the keys have ||phi(k)|| ~ 2^-520 (squares
                    // subnormal) and u vectors may be wholly subnormal: the refused streams
  lambda_extremes,  // gaussian entries, lambda0 = 10^e with e uniform in [-8, 8]
  anisotropic,      // the gradient-window construction (docs/FINDINGS.md, "Gradient flow through
                    // many steps"): the first W = share T keys on one direction e (param warmup),
                    // every later key on one direction f at angle theta from e with
                    // tan(theta) = sqrt(lambda0 / (lambda0 + W)) (param theta): with u = k^ every
                    // later gate is the same, Kantorovich's most oblique, and errors and gradients
                    // are amplified by up to ~sqrt(1 + W / lambda0) / 2 through the later steps
                    // (the angle is the extreme one for unit u = k^, e.g. the paper preset; with
                    // vla-v3's scaled u the effective lambda0 is larger and the angle less extreme)
};

const std::vector<Family>& all_families();
std::string to_string(Family);
Family parse_family(std::string_view);  // throws std::invalid_argument naming the value

// The parameters a family drew (0 where not applicable), kept for measuring and reporting.
struct FamilyParams {
  double nu = 0;     // student_t degrees of freedom
  double rho = 0;    // sparse: probability of a non-zero entry
  int pool = 0;      // repeated: number of distinct key directions
  double theta = 0;  // near_collinear: angle of every key to the base direction; anisotropic: of f to e (radians)
  int rank = 0;      // rank_deficient: dimension of the key subspace
  double omega = 0;  // rotating: angle per step (radians)
  double share = 0;  // anisotropic: share of the steps on the first direction, in [0.5, 0.95]
  int warmup = 0;    // anisotropic: steps on the first direction (share T, at least 1 and at most T - 1 when T >= 2)
};

// A generated input: the stream and what goes with it.
struct Case {
  Family family = Family::gaussian;
  FamilyParams params;
  Stream stream;
  double lambda0 = 1.0;
  FeatureMap feature_map = FeatureMap::elu1;
  std::uint64_t seed = 0;  // make_case's seed (0 for RapidCheck cases)
  // Structured-key families: the unit feature-space vectors the keys were built
  // from, per (b, h) (index b * H + h), concatenated (each Dk long): the base
  // direction (near_collinear), the orthonormal set (orthogonal), the subspace
  // basis (rank_deficient), the orthonormal plane (rotating), the pool (repeated,
  // raw keys), the two directions e, f (anisotropic). Empty for the other families.
  std::vector<std::vector<double>> basis;

  // The paper preset (or `base`) with this case's lambda0 and feature map.
  Options options(Options base = Options{}) const;
};

// Options of the seeded API.
struct MakeOptions {
  FeatureMap feature_map = FeatureMap::elu1;
  bool with_u = false;  // also draw explicit penalty directions u (same family as q)
  // lambda0 for families that do not draw it (only lambda_extremes draws it).
  double lambda0 = 1.0;
};

// Deterministic draw: the same (family, dims, seed, options) gives the same case on
// every platform (mt19937_64 and Boost.Math quantiles only).
Case make_case(Family f, const Dims& dims, std::uint64_t seed, const MakeOptions& mo = {});
Stream make_stream(Family f, const Dims& dims, std::uint64_t seed, const MakeOptions& mo = {});

// Limits of the RapidCheck generators. Dimensions grow with RapidCheck's size and
// shrink towards the minimum.
struct GenLimits {
  int max_B = 1, max_H = 1;
  int min_T = 1, max_T = 24;
  int min_Dk = 1, max_Dk = 6;
  int min_Dv = 1, max_Dv = 3;
  bool draw_feature_map = true;  // else always elu1 (shrinks to elu1 anyway)
  bool draw_u = true;            // sometimes draw explicit u (shrinks to none)
  bool force_u = false;          // always draw explicit u
  bool draw_lambda0 = true;      // lambda0 = 10^e, e in [-2, 2], shrinking to 1; else 1
};

rc::Gen<Case> gen_case(Family f, const GenLimits& lim = {});
// Any family (shrinks towards gaussian, the first one).
rc::Gen<Case> gen_any_case(const GenLimits& lim = {});
rc::Gen<Stream> gen_stream(Family f, const GenLimits& lim = {});

// One named generator per family (the same as gen_case(Family::x, lim)).
#define VLA_PROPS_NAMED_GEN(x) \
  inline rc::Gen<Case> gen_##x(const GenLimits& lim = {}) { return gen_case(Family::x, lim); }
VLA_PROPS_NAMED_GEN(gaussian)
VLA_PROPS_NAMED_GEN(uniform)
VLA_PROPS_NAMED_GEN(student_t)
VLA_PROPS_NAMED_GEN(cauchy)
VLA_PROPS_NAMED_GEN(sparse)
VLA_PROPS_NAMED_GEN(positive)
VLA_PROPS_NAMED_GEN(repeated)
VLA_PROPS_NAMED_GEN(orthogonal)
VLA_PROPS_NAMED_GEN(near_collinear)
VLA_PROPS_NAMED_GEN(rank_deficient)
VLA_PROPS_NAMED_GEN(rotating)
VLA_PROPS_NAMED_GEN(scale_extremes)
VLA_PROPS_NAMED_GEN(subnormal)
VLA_PROPS_NAMED_GEN(lambda_extremes)
#undef VLA_PROPS_NAMED_GEN

// Bad input for the error-path properties. RapidCheck's arbitrary<double> never
// yields NaN, Inf or -0; these do.
enum class Poison { nan, pos_inf, neg_inf, neg_zero };
std::string to_string(Poison);
struct PoisonedCase {
  Case clean;
  Stream poisoned;
  const char* tensor = "k";  // "q", "k", "v" or "u"
  std::size_t index = 0;     // flat index into that tensor
  Poison kind = Poison::nan;
};
// Replaces one entry of one tensor (of a clean case of any family) by the poison.
rc::Gen<PoisonedCase> gen_poisoned(const GenLimits& lim = {});
void poison(Stream& s, const char* tensor, std::size_t index, Poison kind);

// The feature map's inverse on (0, inf) for elu1, identity otherwise: the raw key
// whose feature vector is y (used to build structured keys in feature space).
double phi_inverse(double y, FeatureMap fm);
// What a structured key's "zero" feature entry becomes under elu1: phi(log(kTinyFeature)).
inline constexpr double kTinyFeature = 1e-300;

// The unit feature direction k^ of a raw key, computed in long double (for
// measuring generators; the recurrence computes its own).
std::vector<double> key_direction(const double* k, int dk, FeatureMap fm);

}  // namespace vla::props

// RapidCheck prints counterexamples with these (full precision, replayable).
namespace vla::props {
void showValue(const Case& c, std::ostream& os);
void showValue(const PoisonedCase& pc, std::ostream& os);
}  // namespace vla::props
namespace vla {
void showValue(const Stream& s, std::ostream& os);
}
