// The greedy hill-climbing adversary (adversarial.hpp).
#include "vla/properties/adversarial.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "vla/properties/measures.hpp"
#include "vla/reference/policy.hpp"
#include "rc_source.hpp"
#include "source.hpp"

namespace vla::props {

namespace {

// The double reference itself (its order and its norms), so that the search
// scores exactly what ref::run_model<double> computes.
using P = ref::RefPolicy<double>;
using Vec = std::vector<double>;

struct Choice {
  Vec y, v, u;  // unit key direction, value (||v|| <= V), unit penalty direction (optional)
};

double norm2(const Vec& x) {
  double s = 0;
  for (double e : x) s += e * e;
  return std::sqrt(s);
}

// Unit vector from a raw draw; under elu1 the key must stay in the positive orthant.
Vec to_unit(Vec x, bool positive) {
  if (positive)
    for (auto& e : x) e = std::max(e, 0.0);
  const double n = norm2(x);
  if (!(n > 0)) {
    std::fill(x.begin(), x.end(), 0.0);
    x[0] = 1.0;
    return x;
  }
  for (auto& e : x) e /= n;
  return x;
}

class Searcher {
 public:
  Searcher(const AdversaryBounds& b, const Objective& obj) : b_(b), obj_(obj), src_(b.seed) {
    if (b.T < 1 || b.Dk < 1 || b.Dv < 1 || !(b.V >= 0)) throw std::invalid_argument("adversarial_search: bad bounds");
    positive_ = b.opt.feature_map == FeatureMap::elu1;
    st_.reset(b.Dk, b.Dv, b.opt.lambda0);
    ws_.resize(b.Dk, b.Dv);
    prefix_.dims = Dims{1, 0, 1, b.Dk, b.Dv};
  }

  AdversarialResult run() {
    AdversarialResult res;
    for (int t = 0; t < b_.T; ++t) {
      Choice best = random_choice();
      double best_score = score(t, best);
      for (int i = 1; i < b_.candidates; ++i) consider(t, random_choice(), best, best_score);
      for (int j = 0; j < b_.climb; ++j) consider(t, perturb(best, std::ldexp(1.0, -1 - j % 8)), best, best_score);
      commit(t, best);
      res.objective.push_back(best_score);
    }
    res.adv_case.stream = prefix_;
    res.adv_case.lambda0 = b_.opt.lambda0;
    res.adv_case.feature_map = b_.opt.feature_map;
    res.adv_case.seed = b_.seed;
    return res;
  }

 private:
  Vec gaussian(int n) {
    Vec x(n);
    for (auto& e : x) e = src_.normal();
    return x;
  }

  Choice random_choice() {
    Choice c;
    Vec z = gaussian(b_.Dk);
    if (positive_) {
      // Half of the keys on a face of the orthant (some features ~0): the
      // interesting keys are often there.
      for (auto& e : z) e = std::fabs(e);
      if (src_.coin(0.5))
        for (auto& e : z)
          if (src_.coin(0.5)) e = 0.0;
    }
    c.y = to_unit(z, positive_);
    const double radius = src_.coin(0.25) ? src_.uniform(0.0, 1.0) : 1.0;
    c.v = to_unit(gaussian(b_.Dv), false);
    for (auto& e : c.v) e *= radius * b_.V;
    if (b_.choose_u) c.u = to_unit(gaussian(b_.Dk), false);
    return c;
  }

  Choice perturb(const Choice& c, double sigma) {
    Choice p = c;
    Vec z = gaussian(b_.Dk);
    for (int j = 0; j < b_.Dk; ++j) p.y[j] += sigma * z[j];
    p.y = to_unit(p.y, positive_);
    Vec w = gaussian(b_.Dv);
    for (int i = 0; i < b_.Dv; ++i) p.v[i] += sigma * b_.V * w[i];
    const double nv = norm2(p.v);
    if (nv > b_.V)
      for (auto& e : p.v) e *= b_.V / nv;
    if (b_.choose_u) {
      Vec zu = gaussian(b_.Dk);
      for (int j = 0; j < b_.Dk; ++j) p.u[j] += sigma * zu[j];
      p.u = to_unit(p.u, false);
    }
    return p;
  }

  void append(Stream& s, const Choice& c) const {
    const Vec k = raw_key_for_direction(c.y, b_.opt.feature_map);
    s.dims.T += 1;
    s.q.insert(s.q.end(), k.begin(), k.end());
    s.k.insert(s.k.end(), k.begin(), k.end());
    s.v.insert(s.v.end(), c.v.begin(), c.v.end());
    if (b_.choose_u) s.u.insert(s.u.end(), c.u.begin(), c.u.end());
  }

  void pop(Stream& s) const {
    s.dims.T -= 1;
    s.q.resize(s.q.size() - b_.Dk);
    s.k.resize(s.k.size() - b_.Dk);
    s.v.resize(s.v.size() - b_.Dv);
    if (b_.choose_u) s.u.resize(s.u.size() - b_.Dk);
  }

  // Runs the candidate step on a copy of the state and scores it; with `keep`,
  // the step is kept (state and prefix advance).
  double score(int t, const Choice& c, bool keep = false) {
    append(prefix_, c);
    core::HeadState<double> after = st_;
    const std::size_t o = static_cast<std::size_t>(t) * b_.Dk;
    Vec out(b_.Dv);
    const Stream& pre = prefix_;
    core::vla_step<P>(after, ws_, pre.q.data() + o, pre.k.data() + o, pre.v.data() + static_cast<std::size_t>(t) * b_.Dv,
                      b_.choose_u ? pre.u.data() + o : nullptr, b_.opt, out.data(), info_);
    const StepContext ctx{t, pre, st_, after, ws_, info_, out, b_.opt};
    const double s = obj_.score(ctx);
    if (keep) {
      if (obj_.accept) obj_.accept(ctx);
      st_ = std::move(after);
    } else {
      pop(prefix_);
    }
    return std::isnan(s) ? -INFINITY : s;
  }

  void consider(int t, const Choice& c, Choice& best, double& best_score) {
    const double s = score(t, c);
    if (s > best_score) {
      best = c;
      best_score = s;
    }
  }

  void commit(int t, const Choice& c) { score(t, c, true); }

  AdversaryBounds b_;
  Objective obj_;
  detail::SeededSource src_;
  bool positive_ = true;
  core::HeadState<double> st_;
  core::Workspace<double> ws_;
  core::StepInfo<double> info_;
  Stream prefix_;
};

Eigen::MatrixXd step_matrix(const core::Workspace<double>& ws, int dk) {
  // X -> X P with P = I - k^ a^T: on R^{Dv x Dk} with the Frobenius norm the
  // operator is I_Dv (x) P^T, whose singular values are P's (each Dv times).
  return step_map<double>(Eigen::Map<const Eigen::VectorXd>(ws.kh.data(), dk), Eigen::Map<const Eigen::VectorXd>(ws.a.data(), dk));
}

double spectral_norm(const Eigen::MatrixXd& M) { return Eigen::JacobiSVD<Eigen::MatrixXd>(M).singularValues()(0); }

}  // namespace

Objective objective_state_norm() {
  return {"state_norm", [](const StepContext& c) { return c.info.state_norm; }, nullptr};
}

Objective objective_jacobian_norm() {
  return {"jacobian_norm", [](const StepContext& c) { return spectral_norm(step_matrix(c.ws, c.after.dk)); }, nullptr};
}

Objective objective_jacobian_product_norm() {
  auto prod = std::make_shared<Eigen::MatrixXd>();
  auto current = [prod](const StepContext& c) {
    const Eigen::MatrixXd P = step_matrix(c.ws, c.after.dk);
    return prod->size() == 0 ? P : Eigen::MatrixXd(*prod * P);
  };
  return {"jacobian_product_norm", [current](const StepContext& c) { return spectral_norm(current(c)); },
          [prod, current](const StepContext& c) { *prod = current(c); }};
}

Objective objective_jacobian_window_norm() {
  // The products P_s ... P_{t-1} of every window ending at the previous step (a
  // search's first step starts afresh, so one objective may serve several searches).
  auto wins = std::make_shared<std::vector<Eigen::MatrixXd>>();
  auto score = [wins](const StepContext& c) {
    const Eigen::MatrixXd P = step_matrix(c.ws, c.after.dk);
    double best = spectral_norm(P);
    if (c.t > 0)
      for (const auto& q : *wins) best = std::max(best, spectral_norm(q * P));
    return best;
  };
  return {"jacobian_window_norm", score, [wins](const StepContext& c) {
            if (c.t == 0) wins->clear();
            const Eigen::MatrixXd P = step_matrix(c.ws, c.after.dk);
            for (auto& q : *wins) q = q * P;
            wins->push_back(P);
          }};
}

Objective objective_reference_bits_lost(bool state_only, long bits) {
  // The exact head of the current search (made at its first step, so that one
  // objective may serve several searches), advanced by accept().
  auto head = std::make_shared<std::unique_ptr<ExactHead>>();
  auto measure = [head, state_only, bits](const StepContext& c) {
    if (c.t == 0) *head = std::make_unique<ExactHead>(c.after.dk, c.after.dv, c.opt, bits);
    const std::size_t ok = static_cast<std::size_t>(c.t) * c.after.dk;
    const Stream& s = c.prefix;
    const BitsLost b = (*head)->compare(s.q.data() + ok, s.k.data() + ok, s.v.data() + static_cast<std::size_t>(c.t) * c.after.dv,
                                        s.has_u() ? s.u.data() + ok : nullptr, c.after, c.o.data(), c.info.state_norm);
    return state_only ? b.state() : b.max();
  };
  return {state_only ? "reference_state_bits_lost" : "reference_bits_lost", measure,
          [head, measure](const StepContext& c) {
            measure(c);  // the kept candidate, measured again: keep() keeps the last one compared
            (*head)->keep();
          }};
}

AdversarialResult adversarial_search(const AdversaryBounds& bounds, const Objective& objective) {
  return Searcher(bounds, objective).run();
}

rc::Gen<Case> gen_adversarial(std::function<Objective()> make_objective, const GenLimits& lim, double V) {
  return rc::gen::exec([make_objective, lim, V] {
    AdversaryBounds b;
    b.T = *rc::gen::inRange(lim.min_T, lim.max_T + 1);
    b.Dk = *rc::gen::inRange(lim.min_Dk, lim.max_Dk + 1);
    b.Dv = *rc::gen::inRange(lim.min_Dv, lim.max_Dv + 1);
    b.V = V;
    b.opt.feature_map = lim.draw_feature_map ? *rc::gen::element(FeatureMap::elu1, FeatureMap::identity) : FeatureMap::elu1;
    detail::RcSource src;
    b.opt.lambda0 = lim.draw_lambda0 ? std::pow(10.0, src.uniform(-2.0, 2.0)) : 1.0;
    b.seed = *rc::gen::inRange<std::uint64_t>(1, 1u << 30);
    return adversarial_search(b, make_objective()).adv_case;
  });
}

}  // namespace vla::props
