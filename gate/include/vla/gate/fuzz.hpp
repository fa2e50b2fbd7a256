// Fuzzing the implementations against the reference: random streams from every
// generator family (and the adversarial search that maximises a kernel's
// error), each judged by the error model; failures shrunk and kept as files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gate/candidate.hpp"
#include "vla/gate/judge.hpp"

namespace vla::gate {

struct FuzzLimits {
  int max_T = 64, max_B = 2, max_H = 3;
  std::vector<int> dims = {16};   // head dimensions drawn from (the kernels': 16, 32, 64, 128)
  double adversarial = 0.0625;    // fraction of cases from the adversarial search
};

struct FuzzCase {
  std::uint64_t seed = 0;  // the case's own seed: it alone reproduces the case
  std::string origin;      // "random:<family>" or "adversarial:<kind>"
  std::string preset;      // the preset the options started from
  Stream stream;
  Options opt;
};

// Deterministic: the same seed and limits give the same case. `kind` is the
// precision policy whose twin the adversarial search attacks.
FuzzCase make_fuzz_case(std::uint64_t seed, impl::Kind kind, const FuzzLimits& lim);

// The seed of case j of shard `shard` of `shards` in the campaign seeded by
// `base`: shard I takes the indices I, I + N, I + 2N, ... of one sequence, so the
// shards' seed sets are disjoint and together are the unsharded campaign's.
std::uint64_t case_seed(std::uint64_t base, std::uint64_t index);
std::uint64_t shard_index(int shard, int shards, std::uint64_t j);

// Smallest failing stream found from a failing one: fewer steps, one head,
// a smaller head dimension, magnitudes near 1 and short significands, each step
// kept only while the candidate still fails. At most `budget` judgements.
struct Shrunk {
  Stream stream;
  Judgement judgement;
  int judgements = 0;
};
Shrunk shrink(const Candidate& c, const Stream& failing, const Options& opt, int budget = 200);

// A failure kept as a safetensors case (inputs in F64, with the options, the
// implementation, the verdict and the replay command in its metadata) plus a
// `.cmd` file holding the command. Named by a hash of its content, so a case
// found twice is stored once. Returns the case file's path. `replay_options` are
// appended to the replay command (" --device cpu", or an external kernel's
// options) and kept in the metadata, so that --merge carries them. A file at the
// case's name that does not hold this case, or a lone `.cmd`, is refused.
struct SavedCase {
  std::filesystem::path file;
  std::string replay;
  bool existed = false;
};
SavedCase save_case(const std::filesystem::path& dir, const Candidate& c, const Stream& s, const Options& opt,
                    const std::string& origin, std::uint64_t seed, const std::string& verdict,
                    const std::string& replay_options = "");

// A stored case, read back.
struct StoredCase {
  std::filesystem::path file;
  std::string impl;
  Stream stream;
  Options opt;
  std::string origin;
  std::map<std::string, std::string> metadata;  // everything the file holds
};
StoredCase load_case(const std::filesystem::path& file);
// Writes a stored case into `dir` under its content hash (the replay command
// updated to the new path); existed = true when an identical case is there.
SavedCase copy_case(const std::filesystem::path& dir, const StoredCase& c);
// The .safetensors cases of a folder (or the file itself), in name order.
std::vector<std::filesystem::path> case_files(const std::filesystem::path& file_or_dir);

// The content hash that names a case (inputs, options, implementation).
std::string case_hash(const std::string& impl, const Stream& s, const Options& opt);

}  // namespace vla::gate
