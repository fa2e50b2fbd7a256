// How the fused kernel spreads one (batch, head) over a thread block, per head
// dimension D (Dk = Dv = D). Shared by the kernel and its CPU twin: the twin's
// reduction order (twin_policy.hpp) is derived from the same constants, so the
// two cannot drift apart.
//
// Layout: the block's NT threads form NT/G groups of G consecutive lanes (a
// group never straddles a warp). Group gi owns rows gi*R .. gi*R+R-1 of A and
// of S; lane c of a group owns columns c*CW .. c*CW+CW-1 of those rows, and the
// same column segment of every column-indexed vector (k^, u, g, a, n, phi(q)),
// which every group holds redundantly, so vector dots need no block-wide
// communication.
#pragma once

#include <type_traits>

namespace vla::gpu {

template <int D_, int NT_, int G_, bool SPLIT_ = true, int MIN_BLOCKS_ = 1>
struct FusedTraitsBase {
  static constexpr int D = D_;
  static constexpr int NT = NT_;           // threads holding one matrix (A, or S) of a (b, h)
  // Split sides (kernel v4): the block has 2 NT threads, NT holding A and NT
  // holding S; otherwise NT threads hold both (the kernel's concern: the
  // reduction order below does not depend on it).
  static constexpr bool SPLIT = SPLIT_;
  // Blocks per SM the kernel is compiled for (__launch_bounds__): caps the
  // registers per thread at 65536 / (MIN_BLOCKS x threads per block).
  static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int G = G_;             // lanes per row group: a dot's shuffle tree has log2(G) levels
  static constexpr int CW = D / G;         // columns per lane: sequential FMAs per dot segment
  static constexpr int GROUPS = NT / G;    // row groups in the block
  static constexpr int R = D / GROUPS;     // rows per thread
  static constexpr int GPW = 32 / G;       // row groups per warp
  static constexpr int NW = NT / 32;       // warps
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G: a power of two dividing the warp");
  static_assert(NT % 32 == 0 && NT <= 1024, "whole warps");
  static_assert(D % G == 0 && CW % 4 == 0, "column segments of whole 16-byte vectors of floats");
  static_assert(D % GROUPS == 0 && R >= 1, "every thread owns whole rows");
};

template <int D>
struct FusedTraits;
// Chosen by measurement on an H200 (reports/gpu, "Block layouts"): a step's
// time is the issue time of one thread's share, so more threads per head (small
// CW and R) win until the shuffle trees and barriers dominate; registers must
// hold 2 R CW floats of state. Re-measured after the row sums became
// reduce-scatters (reports/gpu/FLOOR.md): D = 128 moved from 512 to 256 threads
// (2.13 against 2.46 us per step at B=1, H=16).
template <>
struct FusedTraits<16> : FusedTraitsBase<16, 32, 4> {};
template <>
struct FusedTraits<32> : FusedTraitsBase<32, 128, 8> {};
template <>
struct FusedTraits<64> : FusedTraitsBase<64, 256, 16> {};
// D = 128 holds both matrices per thread: split over 512 threads, the 64 floats
// of state a thread keeps left too few of the 128 registers and spilled (2.07
// against 1.74 us per step unsplit, kernel v3, on the H200).
template <>
struct FusedTraits<128> : FusedTraitsBase<128, 256, 16, false> {};

// The many-heads layout (issue 3): split, a block holds twice the threads, so
// half as many blocks fit on an SM; once B*H blocks exceed one wave of the
// layout above, the sides run in turn on NT threads instead (the launcher
// chooses per launch, fused_kernel.cuh). Same NT and G, hence the same
// reduction order: the CPU twin (TwinPolicy<FusedTraits<D>>) is the twin of
// both layouts. Measured (FLOOR.md, "Layout sweep"): at B=8, H=128, D=32
// unsplit 3.70 against split 6.45 ms; D=64 unsplit 14.86 against 15.58 ms with
// one block per SM (142 registers), here held to 128 registers for two.
template <int D, int MIN_BLOCKS = 1>
using FusedTraitsUnsplit = FusedTraitsBase<D, FusedTraits<D>::NT, FusedTraits<D>::G, false, MIN_BLOCKS>;
template <int D>
struct FusedTraitsManyHeads : FusedTraitsUnsplit<D> {};
template <>
struct FusedTraitsManyHeads<64> : FusedTraitsUnsplit<64, 2> {};

// The few-heads layout of kernel v5 (issue 3; reports/gpu/FLOOR.md): one
// thread-block cluster of 1 + NS blocks of NT threads per head. Block 0 holds A
// in the layout above (the A recurrence and the gate a_t, pushed into the S
// blocks' shared memory); S block j (1 .. NS) holds rows j D / NS .. of S with
// the same G and CW, SR = R / NS rows per thread, and its readout. Every row's
// dot is the same segments and tree as in FusedTraits<D>, and the row norms are
// summed by the A block in TwinPolicy::sum's order (the twin's NW warps of RPW
// rows): the CPU twin (TwinPolicy<FusedTraits<D>>) is this layout's twin too.
// Kernel v6: extra warps beside the NT threads of every block (idle in the S
// blocks, which wait only at the cluster's last barrier). GATE_WARP: the A
// block's first extra warp forms a_t and pushes it (outside the A update's
// warps: it reads z from the shared memory their barrier publishes, with the
// same trees as v5's warp 0). FEATURE_WARP (with GATE_WARP): a second extra
// warp, outside the per-step barriers, computes the next chunk's features (k^,
// u) during the current chunk and sums ||S_t||_F, so that a chunk boundary costs
// the A block one barrier. FEATURE_COPIES (with FEATURE_WARP): the feature warp also
// copies the A block's inputs (k, and u where given), so that a chunk boundary
// costs the A warps nothing but the barrier. Kernel v7 (timing experiments, FLOOR.md): S_FEATURES (with
// FEATURE_COPIES): the S blocks' two extra warps do their blocks' chunk work (input
// copies, phi(q), k^, the n scan, the ratio denominators, v as floats, the o rows,
// the gate slots' arming and the consumption arrivals), so that an S block's chunk
// boundary costs its NT threads one barrier. SMEM_TREES: the A block's per-step
// group sums (z's rows, u.z, and the gate warp's z.z) through shared memory (each
// lane reads its group's G partials and adds them in the butterfly's pairing,
// pairwise_sum) instead of shuffle levels. PAPER_LOOP (with FEATURE_COPIES; v8, shipped): where the options alone make every step's gate come from z (u =
// k^, normalised gate, no delta floor, no ridge), the A warps and the gate warp run
// loops of their own with the options' per-step tests folded away. FREE_GATES (with
// PAPER_LOOP and S_FEATURES; v9, a timing experiment, not shipped: no faster than v8
// and racecheck reports hazards in it; FLOOR.md "Kernel v9"): in those loops the gate leaves the A warps' per-step
// barrier: FREE_GATES gate warps (1 or 2; a second one adds a warp to every block,
// in the S blocks a third feature warp) take the steps in turn, each waiting for its
// step's z on an mbarrier that the A warps arrive on (z and w in rings of a chunk's
// slots). Same arithmetic in every variant: the same twin.
template <int D, int NS_ = 2, bool GATE_WARP_ = false, bool FEATURE_WARP_ = false, bool FEATURE_COPIES_ = false,
          bool S_FEATURES_ = false, bool SMEM_TREES_ = false, bool PAPER_LOOP_ = false, int FREE_GATES_ = 0, int MIN_BLOCKS_ = 1>
struct FusedTraitsCluster : FusedTraitsBase<D, FusedTraits<D>::NT, FusedTraits<D>::G, false, MIN_BLOCKS_> {
  static constexpr int NS = NS_;               // S blocks
  static constexpr int CLUSTER = 1 + NS;       // blocks per cluster (per head)
  static constexpr int SR = FusedTraitsCluster::R / NS;  // rows per thread of an S block
  static constexpr bool GATE_WARP = GATE_WARP_;
  static constexpr bool FEATURE_WARP = FEATURE_WARP_;
  static constexpr bool FEATURE_COPIES = FEATURE_COPIES_;
  static constexpr bool S_FEATURES = S_FEATURES_;
  static constexpr bool SMEM_TREES = SMEM_TREES_;
  static constexpr bool PAPER_LOOP = PAPER_LOOP_;
  static constexpr int FREE_GATES = FREE_GATES_;
  static constexpr int GATE_WARPS = FREE_GATES > 1 ? FREE_GATES : int(GATE_WARP);  // the A block's warps forming a_t beside its NT threads
  static constexpr int BLOCK = FusedTraitsCluster::NT + 32 * (GATE_WARPS + int(FEATURE_WARP));  // threads per block
  static_assert(GATE_WARP || !FEATURE_WARP, "the feature warp comes with the gate warp");
  static_assert(FEATURE_WARP || !FEATURE_COPIES, "the feature copies come with the feature warp");
  static_assert(FEATURE_COPIES || !S_FEATURES, "the S blocks' feature warps come with the A block's");
  static_assert(FEATURE_COPIES || !PAPER_LOOP, "the paper loops assume the A block's boundary of v6c");
  static_assert(FREE_GATES >= 0 && FREE_GATES <= 2, "one or two free gate warps");
  static_assert(FREE_GATES == 0 || (PAPER_LOOP && S_FEATURES), "free gate warps in the paper loops, with v7s's S blocks");
  static_assert(SR >= 1 && SR * NS == FusedTraitsCluster::R, "the S blocks share the rows evenly");
  static_assert((D / NS) % 4 == 0, "an S block's rows: whole 16-byte pieces of o");
};
// The cluster layout the launcher runs (FusedLayout::cluster): kernel v8 (v6c's
// gate warp, feature warp and copies; the S blocks' feature warps; the A block's
// paper-preset loops; reports/gpu/FLOOR.md, "Kernel v8"): bit-identical to v5 and
// to the twin; H200 2026-12-03, B=1 H=16 T=16384 fp32 D=64 0.479 us/step (v6c 0.555).
template <int D>
using FusedTraitsClusterShipped = FusedTraitsCluster<D, 2, true, true, true, true, false, true>;
// The cluster kernel's build for more heads at once, where the launcher takes it: beyond the
// shipped build's wave and within its own (reports/gpu/FLOOR.md, "The layouts' reach"). D = 32:
// one S block holding all of S (clusters of two) compiled for four blocks per SM (80 registers
// instead of 96, a few bytes spilled in fp32): 264 clusters at once on the H200 instead of 124
// (0.37-0.49 us per step from 125 to 264 heads, fp32, where clusters of three compiled so, the wide
// build before 2026-12-04 night, ran 0.44 up to their 163 and many-heads 0.71 beyond:
// 2026-12-04-h200-ns1-wide.md). D = 64: the same shape (one S block, clusters of two) compiled for
// two blocks per SM: shared memory allows two blocks per SM at D = 64 (105 KB fp32), so clusters of
// two blocks fit 132 heads where clusters of three fit 79; its S block does twice the rows (0.654
// against 0.563 us per step at 16 heads), hence only beyond.
// Same arithmetic as the shipped build (NS splits S's rows, no sum): the same twin.
template <int D>
struct FusedTraitsClusterWideOf {
  using type = void;  // D = 16 (248 heads at once already) and 128 (shared memory: one block per SM)
};
template <>
struct FusedTraitsClusterWideOf<32> {
  using type = FusedTraitsCluster<32, 1, true, true, true, true, false, true, 0, 4>;
};
template <>
struct FusedTraitsClusterWideOf<64> {
  using type = FusedTraitsCluster<64, 1, true, true, true, true, false, true, 0, 2>;
};
template <int D>
using FusedTraitsClusterWide = typename FusedTraitsClusterWideOf<D>::type;
template <int D>
constexpr bool kClusterWide = !std::is_void_v<FusedTraitsClusterWide<D>>;

}  // namespace vla::gpu
