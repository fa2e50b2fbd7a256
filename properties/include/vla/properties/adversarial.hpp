// Adversarial streams: a greedy hill-climbing search (in the spirit of
// Hypothesis's `target`) that picks each next key, value and (optionally)
// penalty direction, within stated bounds, to maximise a chosen objective.
//
// Bounds: keys are unit feature directions k^_t (in the positive orthant under
// elu1, where phi > 0), realised as raw keys through phi^{-1}; ||v_t||_2 <= V;
// u_t, when chosen, is a unit vector. q_t is irrelevant to the state and is set
// to the key. One (b, h) head: B = H = 1.
//
// The search runs the double reference (core::vla_step with the reference's
// policy, ref::RefPolicy<double>: the values of ref::run_model<double>) step by step:
// at step t it scores `candidates` random choices plus `climb` perturbations of
// the best one, keeps the best, and moves on. Objectives see the state before
// and after the candidate step and the whole prefix, so a caller can score
// anything (e.g. a kernel's error against the reference on the prefix).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vla/core/recurrence.hpp"
#include "vla/properties/generators.hpp"

namespace vla::props {

struct AdversaryBounds {
  int T = 64, Dk = 4, Dv = 1;
  double V = 1.0;            // ||v_t||_2 <= V
  bool choose_u = false;     // also choose a unit penalty direction u_t (else u_t = k^_t)
  Options opt;               // feature map, lambda0, normalisation, stabilisers
  int candidates = 24;       // random candidates per step
  int climb = 24;            // hill-climbing perturbations of the best one per step
  std::uint64_t seed = 1;
};

struct StepContext {
  int t = 0;                 // 0-based step of the candidate
  const Stream& prefix;      // steps 0..t, the candidate last
  const core::HeadState<double>& before;
  const core::HeadState<double>& after;
  const core::Workspace<double>& ws;  // k^ (kh), u, a^ (a) of the candidate step
  const core::StepInfo<double>& info;
  const std::vector<double>& o;  // the candidate step's output row (Dv)
  const Options& opt;            // the bounds' options
};

struct Objective {
  std::string name;
  std::function<double(const StepContext&)> score;
  // Optional: told which candidate was kept (for objectives with a running state).
  std::function<void(const StepContext&)> accept;
};

// ||S_t||_F after the step.
Objective objective_state_norm();
// ||J_t||_2 of the step's Jacobian X -> X (I - k^ a^T) (largest singular value, double SVD).
Objective objective_jacobian_norm();
// ||J_t J_{t-1} ... J_1||_2, the gradient's amplification through all steps so far.
Objective objective_jacobian_product_norm();
// max over s <= t of ||J_t ... J_s||_2: the largest amplification through any window
// ending at the candidate step (properties/gradient_flow.hpp). O(t) products per candidate.
Objective objective_jacobian_window_norm();
// Loss of accuracy of the reference: the bits of double's 53 that the double
// reference loses at the candidate step against the same recurrence at `bits`
// (MPFR, fed the same double inputs and carried along the kept prefix), as
// measures.hpp's BitsLost counts them (certify.hpp's measure): max() over the
// o row, S_t, A_t and ||S_t||_F, or with state_only, state() (S_t, A_t, ||S_t||_F:
// what the recurrence carries forward; an o row can lose every bit to
// cancellation in S_t phi(q_t) or n_t . phi(q_t) alone). The search's double run
// is the double reference, so this scores the reference itself.
Objective objective_reference_bits_lost(bool state_only = false, long bits = 256);

struct AdversarialResult {
  Case adv_case;                  // family gaussian by convention; params unused
  std::vector<double> objective;  // the kept score after every step
};

AdversarialResult adversarial_search(const AdversaryBounds& bounds, const Objective& objective);

// RapidCheck: draws T, Dk, Dv (shrinking towards small), lambda0, the feature map
// and the seed, then runs the search with `objective` (made fresh per case by
// `make_objective`, since objectives may keep state).
rc::Gen<Case> gen_adversarial(std::function<Objective()> make_objective, const GenLimits& lim = {}, double V = 1.0);

// The raw key whose unit feature direction is y (y >= 0 under elu1; zero entries
// become phi^{-1}(kTinyFeature)). k^ does not depend on the scale chosen.
std::vector<double> raw_key_for_direction(const std::vector<double>& y, FeatureMap fm);

}  // namespace vla::props
