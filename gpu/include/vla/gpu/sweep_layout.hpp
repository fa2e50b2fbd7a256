// The shared-memory layout of scan_seg_inverse's warp sweep (gpu/cuda/scan_sweep_inverse.cuh; docs/CHUNKED.md
// 8.37), host and device alike, so that the CPU tests check the layout the kernel uses
// (tests/gpu/test_sweep_layout.cpp): a bijection, the pairs it keeps, and the wavefronts its DMMA fragments take.
//
// A slot is a 16 x 16 block of doubles; entry (r, c) lies at 16 r + (c ^ swz(r)). The swizzle puts rows r = 0..3
// (mod 4) in four different quarters of the row, so that a DMMA fragment of 8 rows x 4 columns, or 4 rows x 8
// columns, read either way round (a block or its transpose), and an accumulator's 8 x 8 stored as pairs, take the
// fewest wavefronts their bytes need (2, 2 and 4). XOR with a multiple of 4 keeps the pairs (2 j, 2 j + 1)
// adjacent and 16-byte aligned.
#pragma once

#include <cstdint>

#include "vla/core/hd.hpp"
#include "vla/gpu/packed_lower.hpp"

namespace vla::gpu::sweep {

constexpr int kBlock = 16;  // the sweep's block width

VLA_HD int swz(int r) { return ((r & 1) << 3) | ((r & 2) << 1); }
VLA_HD int slot_at(int r, int c) { return r * kBlock + (c ^ swz(r)); }
// The lower block (i, j), j <= i, in row order (the blocks' packed lower triangle): the first slots of a warp.
VLA_HD int lower_block(int i, int j) { return packed_index(i, j); }

// Which slot holds what, 4 bits an entry (entries: the lower blocks, then the buffers of block K's new row and
// column). Block K's new row and column take the buffers' slots, whose old slots become the buffers.
struct SlotMap {
  std::uint64_t m = 0;
  VLA_HD static SlotMap identity(int slots) {
    SlotMap s;
    for (int e = 0; e < slots; ++e) s.m |= static_cast<std::uint64_t>(e) << (4 * e);
    return s;
  }
  VLA_HD int get(int e) const { return static_cast<int>((m >> (4 * e)) & 15u); }
  VLA_HD void swap(int e, int f) {
    const std::uint64_t a = static_cast<std::uint64_t>(get(e)), b = static_cast<std::uint64_t>(get(f));
    m = (m & ~((std::uint64_t(15) << (4 * e)) | (std::uint64_t(15) << (4 * f)))) | (b << (4 * e)) | (a << (4 * f));
  }
};

// The swaps that end sweep step kb of NB blocks: buffer ob (entry LOWER + ob) holds N_o for o = ob + (ob >= kb),
// block K's row (o < kb, lower block (kb, o)) or column (o > kb, lower block (o, kb)).
VLA_HD void end_sweep_step(SlotMap& map, int NB, int kb) {
  const int L = packed_size(NB);
  for (int ob = 0; ob < NB - 1; ++ob) {
    const int o = ob + (ob >= kb ? 1 : 0);
    map.swap(L + ob, o < kb ? lower_block(kb, o) : lower_block(o, kb));
  }
}

}  // namespace vla::gpu::sweep
