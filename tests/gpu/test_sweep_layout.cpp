// The shared-memory layout of scan_seg_inverse's warp sweep (vla/gpu/sweep_layout.hpp, the header the kernel
// includes; docs/CHUNKED.md 8.37), checked on the CPU:
//  * slot_at is a bijection of a 16 x 16 block onto its 256 doubles and keeps the pairs (2 j, 2 j + 1) adjacent
//    and 16-byte aligned (the accumulators' double2 stores);
//  * every DMMA fragment the kernel reads (8 rows x 4 columns or 4 rows x 8, a slot as it stands or transposed)
//    takes two wavefronts and every accumulator store of pairs four: the fewest their bytes need (256 and 512 of
//    them over 32 four-byte banks), in the shared-memory bank model (distinct words in one bank serialise, the
//    same word is broadcast);
//  * the slot map stays a permutation through every sweep step, and each step hands block K's new row and column
//    the buffers' slots and the buffers the old blocks'.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "vla/gpu/sweep_layout.hpp"

namespace {
using namespace vla::gpu::sweep;

struct Access {
  int index;  // in doubles from the slot's start
  int bytes;  // 8 or 16
};

// Wavefronts of one warp's request in the bank model: a lane's access covers the 4-byte words 2 index ..; the words
// of one bank that differ serialise.
int wavefronts(const std::vector<Access>& lanes) {
  std::map<int, std::set<int>> words_of_bank;
  for (const Access& a : lanes)
    for (int w = 0; w < a.bytes / 4; ++w) words_of_bank[(2 * a.index + w) % 32].insert(2 * a.index + w);
  std::size_t most = 0;
  for (const auto& [bank, words] : words_of_bank) most = std::max(most, words.size());
  return static_cast<int>(most);
}

template <class F>
std::vector<Access> warp(F index, int bytes) {
  std::vector<Access> v;
  for (int lane = 0; lane < 32; ++lane) v.push_back({index(lane / 4, lane % 4), bytes});
  return v;
}

TEST(SweepLayout, SlotAtIsABijectionKeepingPairs) {
  std::vector<int> seen(kBlock * kBlock, 0);
  for (int r = 0; r < kBlock; ++r)
    for (int c = 0; c < kBlock; ++c) {
      const int i = slot_at(r, c);
      ASSERT_GE(i, 0);
      ASSERT_LT(i, kBlock * kBlock);
      ++seen[i];
      if (c % 2 == 0) {
        EXPECT_EQ(i % 2, 0) << r << ", " << c;
        EXPECT_EQ(slot_at(r, c + 1), i + 1) << r << ", " << c;
      }
    }
  for (int i = 0; i < kBlock * kBlock; ++i) EXPECT_EQ(seen[i], 1) << "double " << i;
}

TEST(SweepLayout, FragmentsTakeTheFewestWavefronts) {
  for (int t = 0; t < 2; ++t) {
    for (int s = 0; s < kBlock / 4; ++s) {
      // (row 8 t + g, column 4 s + q): an A fragment as it stands, a B fragment transposed.
      EXPECT_EQ(wavefronts(warp([&](int g, int q) { return slot_at(8 * t + g, 4 * s + q); }, 8)), 2) << t << ", " << s;
      // (row 4 s + q, column 8 t + g): a B fragment as it stands, an A fragment transposed.
      EXPECT_EQ(wavefronts(warp([&](int g, int q) { return slot_at(4 * s + q, 8 * t + g); }, 8)), 2) << t << ", " << s;
    }
    for (int u = 0; u < 2; ++u)  // the accumulators' pairs (row 8 t + g, columns 8 u + 2 q, + 1)
      EXPECT_EQ(wavefronts(warp([&](int g, int q) { return slot_at(8 * t + g, 8 * u + 2 * q); }, 16)), 4) << t << ", " << u;
  }
  // The model itself: an unswizzled 16-double row stride puts a fragment's eight rows in the same banks.
  EXPECT_EQ(wavefronts(warp([](int g, int q) { return 16 * g + q; }, 8)), 8);
}

TEST(SweepLayout, TheSlotMapHandsBlockKTheBuffers) {
  for (int NB = 1; NB <= 4; ++NB) {
    const int L = vla::gpu::packed_size(NB), slots = L + NB - 1;
    SlotMap map = SlotMap::identity(slots);
    for (int kb = 0; kb < NB; ++kb) {
      const SlotMap before = map;
      end_sweep_step(map, NB, kb);
      std::vector<int> seen(slots, 0);
      for (int e = 0; e < slots; ++e) ++seen[map.get(e)];
      for (int e = 0; e < slots; ++e) ASSERT_EQ(seen[e], 1) << "NB " << NB << " step " << kb << " slot " << e;
      for (int ob = 0; ob < NB - 1; ++ob) {
        const int o = ob + (ob >= kb ? 1 : 0), blk = o < kb ? lower_block(kb, o) : lower_block(o, kb);
        EXPECT_EQ(map.get(blk), before.get(L + ob)) << "NB " << NB << " step " << kb << " block " << o;
        EXPECT_EQ(map.get(L + ob), before.get(blk)) << "NB " << NB << " step " << kb << " buffer " << ob;
      }
      for (int i = 0; i < NB; ++i)  // the other lower blocks keep their slots
        for (int j = 0; j <= i; ++j)
          if (i != kb && j != kb) EXPECT_EQ(map.get(lower_block(i, j)), before.get(lower_block(i, j)));
    }
  }
}

}  // namespace
