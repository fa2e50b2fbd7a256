// The launchers' input contract (vla/gpu/fused.hpp): q, k, v, u 16-byte aligned,
// a misaligned one refused by name before anything runs. Host-only, so CI checks it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "vla/gpu/fused.hpp"

namespace {

using vla::gpu::FusedParams;
using vla::gpu::require_aligned_inputs;

alignas(16) unsigned char buffer[256];

FusedParams aligned_params() {
  FusedParams p;
  p.q = buffer, p.k = buffer + 16, p.v = buffer + 32, p.u = buffer + 48;
  return p;
}

std::string refusal(const FusedParams& p) {
  try {
    require_aligned_inputs(p, "scan form");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FusedParams, AlignedInputsAccepted) {
  EXPECT_EQ(refusal(aligned_params()), "");
  FusedParams p = aligned_params();
  p.u = nullptr;  // u absent (u_t = k^_t)
  EXPECT_EQ(refusal(p), "");
}

TEST(FusedParams, EachMisalignedInputRefusedByName) {
  for (const char* name : {"q", "k", "v", "u"})
    for (int offset : {1, 2, 4, 8, 12}) {
      FusedParams p = aligned_params();
      const void* bad = buffer + 64 + offset;
      if (*name == 'q') p.q = bad;
      if (*name == 'k') p.k = bad;
      if (*name == 'v') p.v = bad;
      if (*name == 'u') p.u = bad;
      const std::string what = refusal(p);
      EXPECT_EQ(what, std::string("scan form: ") + name + " must be 16-byte aligned (cudaMalloc's pointers are)")
          << "input " << name << " offset " << offset;
    }
}

}  // namespace
