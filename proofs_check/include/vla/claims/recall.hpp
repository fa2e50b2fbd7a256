// The memory-level recall task (NOT the paper's trained MQAR experiment):
// write n key/value pairs into a model's memory, optionally followed by filler
// tokens up to length T, then read the memory back with each key and decode by
// the nearest stored value (largest cosine, so the positive ratio denominator
// of the readout does not matter). Exact-match accuracy is the fraction of keys
// whose own value is decoded.
//
// Recurrent models (VLA, DeltaNet, linear) are read from their final state with
// the spec's readout y = S phi(q), q = the key; softmax attention is read as its
// output at the last position with q_T = the key (it attends to every token).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"

namespace vla::claims {

enum class KeyDist {
  gaussian_elu1,      // raw keys N(0, 1) through the paper's feature map elu1 (all-positive features)
  gaussian_identity,  // raw keys N(0, 1), identity feature map (zero-mean features)
};
enum class Filler {
  pad,         // one fixed key, value 0, repeated (a padding token)
  random_key,  // a fresh random key each step, value 0 (distractors that write nothing new)
};
std::string to_string(KeyDist);
std::string to_string(Filler);

struct RecallTask {
  int d = 32;   // head dimension d_h (Dk = Dv = d)
  int n = 24;   // pairs written
  int T = 24;   // total length: the pairs first, then T - n filler tokens
  KeyDist keys = KeyDist::gaussian_elu1;
  Filler filler = Filler::pad;
  int reps = 10;            // independent draws averaged
  std::uint64_t seed = 1;   // draw r uses seed + r
};

struct RecallScore {
  double accuracy = 0;
  long correct = 0, total = 0;
};

// `model` is the model's options (feature map is overwritten from task.keys).
RecallScore recall_accuracy(const RecallTask& task, const Options& model);

// The stream of draw r (pairs then fillers; q_t = k_t), exposed for tests.
Stream recall_stream(const RecallTask& task, int r);

// The models compared by the memory-level claims, with the parameters the paper
// leaves out swept: VLA's lambda0, DeltaNet's beta and decay.
struct ModelSetting {
  std::string model;  // "VLA", "DeltaNet", "linear", "softmax"
  std::string label;  // model and parameters
  Options opt;
};
std::vector<ModelSetting> recall_models(const std::vector<double>& vla_lambda0s, const std::vector<double>& deltanet_betas,
                                        const std::vector<double>& deltanet_decays);

}  // namespace vla::claims
