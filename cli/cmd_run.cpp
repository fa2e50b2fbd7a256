// vla run: one implementation on one input stream, written to a safetensors file
// whose metadata records everything needed to reproduce and trust it.
//
// Order of work: options, then the output path (so a refused overwrite costs
// nothing), then the input file and its values, then the run, then one atomic
// write. Any error before the write leaves no file behind; a reference result
// short of --require-bits is reported and not written (exit 1).
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "output_path.hpp"
#include "registry.hpp"
#include "vla/core/spec.hpp"
#include "vla/core/stream.hpp"
#include "vla/gate/spec_args.hpp"
#include "vla/gpu/chunked.hpp"
#include "vla/gpu/impl.hpp"
#include "vla/io/stream_io.hpp"
#include "vla/io/version.hpp"
#include "vla/reference/certify.hpp"

namespace vla::cli {
namespace {

struct RunArgs {
  std::string input, output;
  std::string impl = "reference", device, scalar = "mpfr";
  int bits = 256;
  int chunk = 64;  // the chunked kinds' chunk size (the gate's production one)
  double require_bits = 0;
  gate::SpecArgs spec;  // the spec's options, shared with vla check / gate / fuzz
  std::string baseline;
  double beta = 1, decay = 1;
  bool force = false;
  // Set by CLI11; an option counts as given when its count() > 0.
  CLI::Option *o_device, *o_scalar, *o_bits, *o_require, *o_baseline, *o_beta, *o_decay, *o_chunk;
};

bool given(const CLI::Option* o) { return o->count() > 0; }

// An option the chosen model never reads is refused, as --ridge alone is, rather
// than recorded in the output's metadata as if it acted (docs/SPEC.md, the
// baselines): linear attention reads phi and the readout, DeltaNet those and the
// key part of --normalize (core::deltanet_step reads normalize_key() only: it has
// no gate a^, so a value that also normalises the gate, gate or both, is refused
// too), softmax attention none of them; A and its stabilisers are VLA's alone, and
// so is the vla-v3 preset, which sets only those.
void refuse_unread_options(const RunArgs& a, const Options& o) {
  const Model m = o.model;
  if (m == Model::vla) return;
  const std::string by = "--baseline " + to_string(m);
  auto refuse = [&](const CLI::Option* o, const std::string& name, const std::string& why) {
    if (given(o)) throw InputError(name + " has no effect with " + by + ": " + why);
  };
  const std::string vla_only = "it sets VLA's penalty matrix A and its stabilisers, which " + by + " does not have";
  if (a.spec.preset != "paper") throw InputError("--preset " + a.spec.preset + " has no effect with " + by + ": " + vla_only);
  refuse(a.spec.o_lambda0, "--lambda0", vla_only);
  refuse(a.spec.o_uus, "--u-unit-scaled", vla_only);
  refuse(a.spec.o_dfloor, "--delta-floor", vla_only);
  refuse(a.spec.o_rev, "--ridge-every", vla_only);
  refuse(a.spec.o_ridge, "--ridge", vla_only);
  if (m == Model::linear) refuse(a.spec.o_norm, "--normalize", "linear attention adds v phi(k)^T with phi(k) unnormalised");
  if (m == Model::deltanet && given(a.spec.o_norm) && o.normalize_gate()) {
    const std::string same = o.normalize_key() ? "key" : "none";
    throw InputError("--normalize " + a.spec.normalize + ": its gate part has no effect with " + by +
                     ", which has no gate a^ and reads only the key part of --normalize (--normalize " + same +
                     " runs the same recurrence)");
  }
  if (m == Model::softmax) {
    const std::string why = "softmax attention has no feature map, normaliser or ratio readout";
    refuse(a.spec.o_fm, "--feature-map", why);
    refuse(a.spec.o_readout, "--readout", why);
    refuse(a.spec.o_norm, "--normalize", why);
    refuse(a.spec.o_den, "--den-floor", why);
  }
}

// The preset, then every explicitly given option on top of it.
Options build_options(const RunArgs& a) {
  Options o = gate::build_options(a.spec);
  if (given(a.o_baseline)) o.model = parse_model(a.baseline);
  if (o.model != Model::deltanet && (given(a.o_beta) || given(a.o_decay))) {
    throw InputError("--deltanet-beta and --deltanet-decay apply to --baseline deltanet only");
  }
  refuse_unread_options(a, o);
  if (given(a.o_beta)) o.deltanet_beta = a.beta;
  if (given(a.o_decay)) o.deltanet_decay = a.decay;
  validate(o);
  return o;
}

std::string dtypes_string(const io::StreamFile& f) {
  std::string s;
  for (const char* n : {"q", "k", "v", "u"})
    if (f.dtypes.count(n)) s += (s.empty() ? "" : " ") + std::string(n) + "=" + io::to_string(f.dtypes.at(n));
  return s;
}

// Every option of the spec, both as one line and as one key each.
void add_spec(io::Metadata& m, const Options& opt, const std::string& preset) {
  m["preset"] = preset;
  m["spec"] = describe(opt);
  std::istringstream words(m["spec"]);
  for (std::string w; words >> w;) {
    const auto eq = w.find('=');
    if (eq != std::string::npos) m["spec." + w.substr(0, eq)] = w.substr(eq + 1);
  }
}

// Rounded down, so that the file never claims more than was certified.
std::string bits_string(double b) { return std::isfinite(b) ? fmt::format("{:.2f}", std::floor(b * 100) / 100) : fmt::format("{}", b); }

bool is_chunked(const std::string& impl) { return impl.rfind("chunked-", 0) == 0; }

int run(const RunArgs& a) {
  const bool reference = a.impl == "reference";
  if (given(a.o_chunk) && !is_chunked(a.impl)) throw InputError("--chunk applies to the chunked implementations only");
  if (!reference) {
    for (const CLI::Option* o : {a.o_scalar, a.o_bits, a.o_require})
      if (given(o)) throw InputError(o->get_name() + " applies to --impl reference only");
  } else {
    if (given(a.o_device) && a.device != "cpu") throw InputError("--device " + a.device + ": the reference runs on the CPU only");
    if (given(a.o_bits) && a.scalar != "mpfr") throw InputError("--bits applies to --scalar mpfr only");
    if (a.bits < ref::kMinBits || a.bits > ref::kMaxBits) {
      throw InputError("--bits must be between " + std::to_string(ref::kMinBits) + " and " + std::to_string(ref::kMaxBits) + " (got " +
                       std::to_string(a.bits) + ")");
    }
    if (!(a.require_bits >= 0) || !std::isfinite(a.require_bits)) throw InputError("--require-bits must be finite and >= 0");
  }
  const Options opt = build_options(a);
  OutputFiles files(a.force);
  files.input("--input", a.input);
  files.output("--output", a.output);
  files.check();  // the safetensors writer below writes the one file all or none

  const io::StreamFile in = io::load_stream(a.input);
  validate_stream(in.stream, opt);
  check_ratio_readout_defined(in.stream, opt);
  const Dims& d = in.stream.dims;

  io::Metadata meta;
  meta["tool"] = io::tool_version();
  meta["command"] = "run";
  meta["input"] = a.input;
  meta["input_dtypes"] = dtypes_string(in);
  meta["dims"] = fmt::format("B={} T={} H={} Dk={} Dv={}", d.B, d.T, d.H, d.Dk, d.Dv);
  meta["impl"] = a.impl;
  add_spec(meta, opt, a.spec.preset);
  std::cout << "vla run: input " << a.input << ": " << meta["dims"] << " (" << meta["input_dtypes"] << ")\n"
            << "  spec: preset=" << a.spec.preset << " " << meta["spec"] << "\n";

  Outputs out;
  if (reference) {
    ref::CertifyRequest req;
    req.scalar = ref::parse_scalar(a.scalar);
    req.bits = a.bits;
    req.required_bits = a.require_bits;
    meta["device"] = "cpu";
    std::cout << "  impl: reference, scalar " << a.scalar << (a.scalar == "mpfr" ? fmt::format(" at {} bits", a.bits) : "")
              << ", device cpu\n" << std::flush;
    ref::Certified c = ref::run_certified(in.stream, opt, req);
    meta["scalar"] = ref::to_string(req.scalar);
    meta["bits"] = std::to_string(a.bits);
    meta["working_bits"] = std::to_string(c.working_bits);
    meta["certified_bits"] = bits_string(c.certified_bits);
    meta["certification"] = c.method;
    meta["certified_bits_elementwise"] = bits_string(c.certified_bits_elementwise);
    meta["worst_element"] = c.worst;
    if (a.require_bits > 0) meta["required_bits"] = bits_string(a.require_bits);
    std::cout << "  working precision " << c.working_bits << " bits; certified " << meta["certified_bits"] << " correct bits ("
              << c.method << ")\n  worst element: " << c.worst << "\n";
    if (!c.meets_requirement || c.certified_bits < a.require_bits) {
      std::cerr << "vla: error: certified only " << meta["certified_bits"] << " bits, fewer than --require-bits "
                << bits_string(a.require_bits) << "; raise --bits. No output written.\n";
      return kExitFail;
    }
    out = std::move(c.out);
  } else {
    const impl::Device dev = given(a.o_device) ? impl::parse_device(a.device)
                             : impl::cuda_available() ? impl::Device::cuda
                                                      : impl::Device::cpu;
    if (dev == impl::Device::cuda && !impl::cuda_available()) throw InputError("--device cuda: no CUDA device is available in this build");
    meta["device"] = impl::to_string(dev);
    std::cout << "  impl: " << a.impl << ", device " << meta["device"] << (dev == impl::Device::cpu ? " (CPU twin)" : "") << "\n";
    const bool bf16_in = is_chunked(a.impl) ? impl::input_kind(impl::parse_chunked_kind(a.impl)) != impl::Kind::fp32 : a.impl != "fp32";
    if (bf16_in && in.min_significand_bits() > io::significand_bits(io::DType::BF16)) {
      std::cout << "  note: the input holds values wider than bf16; " << a.impl << " rounds them to bf16 once on input\n";
    }
    if (is_chunked(a.impl)) {
      const impl::ChunkedKind ck = impl::parse_chunked_kind(a.impl);
      if (const std::string why = impl::chunked_unsupported(d, opt, ck, a.chunk); !why.empty())
        throw InputError("--impl " + a.impl + " --chunk " + std::to_string(a.chunk) + " does not run this input: " + why);
      meta["chunk"] = std::to_string(a.chunk);
      out = impl::run_chunked(in.stream, opt, ck, dev, a.chunk);
    } else {
      out = impl::run(in.stream, opt, impl::parse_kind(a.impl), dev);
    }
  }

  // Inputs are finite (validate_stream), so a non-finite output is the implementation's or the
  // recurrence's own overflow: said on stderr and in the file's metadata, never left to be found later.
  // The file is still written (exit 0): it is what the implementation computed, and the place to look.
  if (const NonFiniteOutputs nf = find_non_finite(out); nf.count > 0) {
    meta["non_finite_outputs"] = std::to_string(nf.count);
    meta["first_non_finite"] = nf.first;
    std::cerr << "vla run: warning: " << a.impl << " wrote " << nf.count << " non-finite output value(s) from finite inputs; the first is "
              << nf.first << "\n";
  }
  io::save_outputs(a.output, out, meta, io::DType::F64, a.force);
  std::cout << "  wrote " << a.output << "\n";
  return kExitOk;
}

Register reg{Command{
    "run", "Run an implementation (default: the certified reference) on a stream and write its outputs",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<RunArgs>();
      sub.add_option("--input", a->input, "Input safetensors file with q, k, v [B,T,H,D] and optional u")->required();
      sub.add_option("--output", a->output, "Output safetensors file (o, S, A, state_norm + metadata)")->check(a_path())->required();
      sub.add_option("--impl", a->impl, "Implementation")->capture_default_str()->check(CLI::IsMember({"reference", "fp32", "bf16", "bf16-state", "chunked-fp32", "chunked-bf16",
                                                                                 "chunked-tf32", "chunked-scan-fp32", "chunked-scan-bf16"}));
      a->o_chunk = sub.add_option("--chunk", a->chunk, "Chunk size C of the chunked implementations (32 or 64)")->capture_default_str();
      a->o_device = sub.add_option("--device", a->device, "cpu or cuda (default: cuda when available)")->check(CLI::IsMember({"cpu", "cuda"}));
      a->o_scalar = sub.add_option("--scalar", a->scalar, "Reference scalar")->capture_default_str()->check(CLI::IsMember({"mpfr", "float128", "double"}));
      a->o_bits = sub.add_option("--bits", a->bits, "Reference working precision (mpfr)")->capture_default_str();
      a->o_require = sub.add_option("--require-bits", a->require_bits,
                                    "Exit 1 without writing when fewer bits are certified");
      gate::add_spec_options(sub, a->spec);
      a->o_baseline = sub.add_option("--baseline", a->baseline, "Run a baseline instead of VLA")
                          ->check(CLI::IsMember({"vla", "linear", "deltanet", "softmax"}));
      a->o_beta = sub.add_option("--deltanet-beta", a->beta, "DeltaNet write strength (default 1)");
      a->o_decay = sub.add_option("--deltanet-decay", a->decay, "DeltaNet state decay (default 1)");
      sub.add_flag("--force", a->force, "Replace an existing output file");
      return [a] { return run(*a); };
    }}};

}  // namespace
}  // namespace vla::cli
