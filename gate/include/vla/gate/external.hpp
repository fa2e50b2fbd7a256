// The gate for a kernel that lives outside this repository (a Triton kernel, a
// PyTorch module, another CUDA code base): the battery exported as input files
// that any harness can run, and that harness's output files judged case by case
// by the same error model, with the same reports as `vla gate`.
//
//   1. export_battery: every battery case of a mode, its inputs already rounded
//      to the candidate's input type (so no harness converts, and the reference
//      is fed exactly what the kernel consumed), its options in the metadata,
//      and manifest.json listing the cases (file, id, dims, the options as
//      `vla run` arguments, a content hash).
//   2. The harness writes, for each case file, an output file of the same name
//      (o, and S, A, state_norm when it has them: gate/candidate_file.hpp).
//   3. external_candidate: a Candidate whose run() returns the harness's outputs
//      for the stream it is given (found by the content hash), so run_gate
//      judges it like any kernel; no fuzz budget (it cannot run new streams).
#pragma once

#include <filesystem>
#include <functional>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "vla/gate/candidate.hpp"
#include "vla/gate/policy.hpp"
#include "vla/io/safetensors.hpp"

namespace vla::gate {

// The name every external kernel goes by: its candidate's name, and the key of
// the content hashes that find its cases.
inline constexpr const char* kExternalName = "external";

// A stream as an external kernel reads it (export_battery's case files and the
// command's and server's {input}): the inputs already rounded to the policy's
// input type (F32, or BF16), the options in the metadata (spec.*, and
// spec.arguments as `vla run` arguments), plus `extra` keys.
void write_case_stream(const std::filesystem::path& file, const Stream& rounded, const Options& opt, const Policy& policy,
                       io::Metadata extra = {});

// "fp32", "bf16", "bf16-state", or "tf32" (float in and out, products on tf32
// tensor cores: the chunked-tf32 policy). std::invalid_argument otherwise.
Policy parse_policy(std::string_view dtype);
// The name parse_policy reads back.
std::string dtype_name(const Policy& p);

struct ExportedCases {
  std::filesystem::path dir;
  bool quick = false;
  int fuzz_cases = 0;            // the gate's fuzz cases exported too (run_gate's, from fuzz_seed, default limits)
  std::uint64_t fuzz_seed = 1;
  std::string dtype;                                  // as parse_policy reads it
  std::map<std::string, std::string> file_by_hash;    // content hash of (rounded stream, options) -> case file name
  std::map<std::string, std::string> id_by_file;      // case file name -> battery id
  std::map<std::string, std::string> args_by_file;    // case file name -> its options as `vla run` / `vla check` arguments
};

// Writes the battery of the mode into `dir` (created; it must not exist, or be
// an empty folder: nothing is overwritten). `progress(i, n)` after each case.
// With fuzz_cases > 0 the gate's fuzz budget is exported too (the streams run_gate
// draws from fuzz_seed for this policy), so that --external judges them as well.
ExportedCases export_battery(const std::filesystem::path& dir, bool quick, const Policy& policy,
                             const std::function<void(int, int)>& progress = {}, int fuzz_cases = 0, std::uint64_t fuzz_seed = 1);
// Reads an exported folder's manifest (std::invalid_argument naming what is wrong).
ExportedCases read_exported(const std::filesystem::path& dir);

// The harness's outputs in `outputs` as a candidate named "external" with policy
// `policy` (its input type must be the export's). A case without an output file
// fails ("no output file"), or with skip_missing lies outside its domain.
Candidate external_candidate(const ExportedCases& cases, const std::filesystem::path& outputs, const Policy& policy, bool skip_missing);

// A kernel run through a shell command, once per stream, so that the battery, the
// fuzz budget, `vla fuzz` and its shrinking all reach it: in `cmd`, {input} becomes
// a safetensors stream (inputs in the policy's input type, the options in its
// metadata as export_battery writes them), {output} the file the command writes
// (o, and S, A, state_norm when it has them), {options} the options as `vla run`
// arguments. Exit 0: outputs written. Exit 77 (the "skipped" of automake's test
// drivers): the stream lies outside the kernel's domain. Anything else fails the
// case, with the command's exit status and the end of its standard error.
// limit_s > 0: a stream whose command runs longer fails, the command's process
// group killed (--external-timeout).
inline constexpr int kCommandSkip = 77;
Candidate command_candidate(const std::string& cmd, const Policy& policy, double limit_s = 0);

// The same kernel as one long-lived process (for a harness whose start-up costs
// seconds): `cmd` is started once through /bin/sh and reads one request line per
// stream on its standard input,
//     INPUT<TAB>OUTPUT<TAB>OPTIONS<LF>
// (the two file paths and the options as `vla run` arguments), and answers each on
// its standard output with one line: "ok" (OUTPUT written), "skip REASON" (outside
// its domain) or "error MESSAGE". Its standard error is vla's. A server that exits
// or answers anything else fails the stream (and every later one, if it is gone).
// limit_s > 0: a server that does not answer a stream within it is stopped (its
// process group killed) and that stream and every later one fail.
Candidate server_candidate(const std::string& cmd, const Policy& policy, double limit_s = 0);

// `s` as one word of /bin/sh: in single quotes, each ' written '\''.
std::string shell_quoted(const std::string& s);

// `replay` (a gate or fuzz replay naming "--impl external") with the kernel's own
// flag instead: "FLAG 'CMD' --dtype D" (FLAG --external-cmd or --external-serve).
std::string command_replay(const std::string& replay, const std::string& flag, const std::string& cmd, const std::string& dtype);

// The command that judges one exported case alone.
std::string external_replay(const ExportedCases& cases, const std::filesystem::path& outputs, const std::string& case_id);

}  // namespace vla::gate
