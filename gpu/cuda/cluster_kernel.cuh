// Kernels v5 and v6 (issue 3; reports/gpu/FLOOR.md): the fused VLA forward pass
// with the A side and the S side on different SMs of one thread-block cluster per head.
// Included by fused_kernel.cuh after the pieces it shares with the one-block
// kernel (features, input copies, reductions); layout: FusedTraitsCluster
// (fused_traits.hpp). Same per-element formulas, rounding points and reduction
// order as the one-block kernel, hence the same CPU twin.
//
// Why. In a one-block kernel every step ends at a block-wide meeting of the two
// sides (z), and the SM's instruction stream bounds the step. But A never
// depends on S or v, and where the gate comes from z (core::gate_from_z_exact)
// neither does a_t: the A block runs the A recurrence and the gate ahead, and
// the S blocks consume a_t whenever it is there.
//
// Roles (cluster rank):
//   0       the A block: z = A u (reduce-scatter, z by rows through shared memory,
//           one barrier of its own per step), delta, g, the A update (+ ridge);
//           warp 0 also forms a_t (z / ||z||, z / delta, or from w = A_t k^ where
//           the gate is not exact: ridge steps, floored delta, u given) and its
//           row group 0 pushes a_t into slot t % kRing of every S block's ring.
//           It also sums the row norms of S into ||S_t||_F (TwinPolicy::sum's
//           order) from the rows the S blocks send it.
//   1..NS   S block j: rows (j-1) D / NS .. of S. Per step r = v - S k^ and the
//           readout of step t-1 (S phi(q), row norms: three interleaved
//           reduce-scatters), then waits (acquire) for a_t and updates S: no
//           barrier per step at all. o rows a chunk at a time, as the one-block
//           kernel; the row norms go to the A block as they are made.
// Signalling, all by mbarriers: a_t travels by st.async, whose complete_tx on
// the slot's mbarrier in the S block makes it visible there with the phase (no
// fence on the A block's chain; the S block arms each slot's phase with its
// expected bytes a chunk ahead). Flow control: the A block overwrites a slot
// only after every S block has said (one release arrival per chunk on an
// mbarrier in the A block) that it consumed the chunk two behind, and sent that
// chunk's row norms: A runs up to 2 chunks ahead. Every wait is a bounded spin:
// after kSpinLimitNs without progress the kernel prints which wait and traps (a
// cluster's blocks are co-resident, so this means a bug).
//
// v6 (FusedTraitsCluster's GATE_WARP, FEATURE_WARP, FEATURE_COPIES; the launcher's layout): the
// A block's step was paced by warp 0, which formed a_t on top of its share of
// the A update. In v6 the NT threads holding A run only z, delta, g and the A
// update; a gate warp after them reads z at the same barrier, forms a_t with
// v5's warp 0's trees and pushes it, and waits for the S blocks' consumption; a
// feature warp, outside the per-step barriers, computes the next chunk's k^ and
// u during the current chunk (the inputs are copied a chunk earlier than in v5;
// with FEATURE_COPIES, by the feature warp itself, k and u
// only) and sums ||S_t||_F, so a chunk boundary costs the A warps one barrier.
// The S blocks have the same extra warps, idle. The same values in the same
// order: bits equal v5's (bench_cluster_roles checks this, test_gpu_cuda against
// the twin).
//
// v7 (timing experiments, not shipped; FLOOR.md, "Kernel v7"): S_FEATURES gives the
// S blocks' chunk work to their two extra warps (cluster_s_block_sf), so that their
// boundary is one barrier; SMEM_TREES takes the A block's per-step group sums
// through shared memory instead of shuffle levels. Both bit-identical to v5 and
// passing the CUDA tests (v7 = both, shipped in that call's build), but neither
// makes the A block's step shorter: the A block sets the pace, its step is an
// in-order stream of ~180 dependent instructions per warp (Nsight Compute), and
// the trees through shared memory add instructions. PAPER_LOOP (v8 = v7s + it, the
// shipped layout since 2026-12-03; FLOOR.md, "Kernel v8"): the A warps' and the gate
// warp's loops specialised for the paper preset's options (cluster_a_block), 0.479
// us/step at B=1 H=16 D=64 fp32 against v6c's 0.555, bits equal v5's. FREE_GATES
// (v9a: one gate warp, v9: two; timing experiments, not shipped; FLOOR.md, "Kernel
// v9"): in the paper loops the gate warps leave the A warps' per-step barrier (z by
// an mbarrier per slot of a ring); bits equal v5's, but no faster (0.484 against
// v8's 0.479 in one process) and racecheck reports hazards in it (not resolved).
#pragma once

#include <cooperative_groups.h>

namespace vla::gpu::detail {

namespace cg = cooperative_groups;

// Shared memory of a cluster kernel's block (the same struct in every role; each
// role uses its part).
template <class Tr, class Prec>
struct ClusterSmem {
  FusedSmem<Tr, Prec> f;               // inputs, features, y, z, w, denominators
  alignas(16) float a[kRing][Tr::D];   // S blocks: a_t in slot t % kRing (written by the A block)
  alignas(16) float fr[4][kChunk][Tr::D];  // A block: ||row i of S_t||^2 of chunk t / kChunk mod 4 (written by the S blocks)
  alignas(8) unsigned long long full[kRing];  // S blocks: phase k of slot s completes when a_{k kRing + s} is in
  alignas(8) unsigned long long consumed[2];  // A block: phase k of c completes when every S block is done with chunk 2 k + c
  // A block with SMEM_TREES: per row group, the z partials by row (G lanes each; the
  // groups kTreeStride apart so that a warp's groups write distinct banks), and
  // the dots' partials (the NT threads' u.z by thread, then the gate warp's u.z and z.z).
  // (One float each without SMEM_TREES: the room is the free gates' rings at D = 128.)
  static constexpr bool kST = Tr::SMEM_TREES;
  static constexpr int kTreeStride = (Tr::R * Tr::G + 31) / 32 * 32 + Tr::G;
  alignas(16) float tp[kST ? Tr::NT / Tr::G : 1][kST ? kTreeStride : 1];
  alignas(16) float tq[kST ? Tr::NT + 64 : 1];
  // A block with FREE_GATES (v9): z_t and (where delta <= 0) w_t = A_t k^ by rows in
  // slot t % kChunk, and their mbarriers (phase k of slot s completes when step
  // k kChunk + s's vector is in; one arrival, the A warps' thread 0, every step).
  static constexpr int kGateRing = Tr::FREE_GATES > 0 ? kChunk : 1;
  alignas(16) float zr[kGateRing][Tr::D];
  alignas(16) float wr[kGateRing][Tr::D];
  alignas(8) unsigned long long zfull[kGateRing];
  alignas(8) unsigned long long wfull[kGateRing];
};

// 32-bit shared-window address of a generic pointer to this block's shared memory.
__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
// The same shared-memory offset in block `rank` of the cluster (shared::cluster window).
__device__ __forceinline__ unsigned cluster_addr(unsigned local, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
__device__ __forceinline__ void st_cluster(unsigned addr, float x) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(addr), "f"(x) : "memory");
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// One arrival (release at CTA scope) on an mbarrier of this block.
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared::cta.b64 state, [%0];\n\t}" ::"r"(smem_addr(bar)) : "memory");
}
// One arrival (release at cluster scope) on an mbarrier in another block.
__device__ __forceinline__ void mbar_arrive_remote(unsigned addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(addr) : "memory");
}
// Whether the phase of parity `parity` of this block's mbarrier has completed.
// mbar_try_wait: acquire at CTA scope, enough for data that st.async brought
// (its complete_tx makes it visible with the phase); mbar_try_wait_cluster:
// acquire at cluster scope, for what other blocks wrote before a release
// arrival (in SASS it invalidates the L1: not per step).
__device__ __forceinline__ bool mbar_try_wait(const unsigned long long* bar, unsigned parity) {
  unsigned ok;
  asm volatile("{\n\t.reg .pred P;\n\tmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\n\tselp.b32 %0, 1, 0, P;\n\t}"
               : "=r"(ok)
               : "r"(smem_addr(bar)), "r"(parity)
               : "memory");
  return ok != 0;
}
__device__ __forceinline__ bool mbar_try_wait_cluster(const unsigned long long* bar, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{\n\t.reg .pred P;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P, [%1], %2;\n\tselp.b32 %0, 1, 0, P;\n\t}"
      : "=r"(ok)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}
// Arms this block's mbarrier for its current phase: the one arrival it counts,
// and `bytes` of st.async data to land before the phase completes.
__device__ __forceinline__ void mbar_arm(unsigned long long* bar, unsigned bytes) {
  asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n\t}" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
// 16 bytes into another block's shared memory, counted (complete_tx) on its mbarrier at `bar`.
__device__ __forceinline__ void st_async(unsigned addr, float x, float y, float z, float w, unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr), "f"(x), "f"(y),
               "f"(z), "f"(w), "r"(bar)
               : "memory");
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A wait that cannot hang: spins until ready() (which acquires), and traps with
// a message after kSpinLimitNs (seconds: far beyond any step, sanitizers included).
constexpr unsigned long long kSpinLimitNs = 20'000'000'000ull;
static __device__ __noinline__ void spin_timeout(const char* what) {
  printf("vla fused cluster kernel: block %d (cluster rank %d) thread %d waited %llu s for %s: trap\n", blockIdx.x,
         static_cast<int>(cg::this_cluster().block_rank()), threadIdx.x, kSpinLimitNs / 1'000'000'000ull, what);
  __trap();
}
template <class Ready>
__device__ __forceinline__ void spin_until(Ready&& ready, const char* what) {
  if (ready()) return;
  const unsigned long long t0 = global_ns();
  while (!ready())
    if (global_ns() - t0 > kSpinLimitNs) spin_timeout(what);
}

// Timing probes (bench/gpu/bench_cluster_roles.cu; FLOOR.md, "Kernel v5: where
// the step goes"): the kernel's third template parameter. The shipped kernel
// uses ClusterNoProbe, whose marks compile to nothing and whose push is the one
// described above; a bench instantiates a probe of its own whose mark(m, t)
// records a clock at mark m of step t (per warp, in its own buffer) and whose
// kPush chooses how a_t travels: kPushAtStep (shipped: as soon as it is
// formed), kPushLate (warp 0 pushes a_{t-1} right after step t's z barrier, so
// that no remote store is outstanding at a barrier for less than a step: same
// values, same slots, same flow control, bits equal) or kPushChunkEnd (timing
// only: a_t is pushed, armed and waited for at the last step of each chunk
// alone, which keeps the flow control both ways; the other steps use stale gates).
enum ClusterPush : int { kPushChunkEnd = 0, kPushAtStep = 1, kPushLate = 2 };
// Marks of a step, in program order. A block: loop top, z's rows reduced (before
// the barrier), after the barrier, a_t formed (before the push), after the push,
// after the chunk boundary's first barrier (boundary steps only), end of step.
// S blocks: loop top, r and the readout reduced (before the wait for a_t), a_t
// in, S updated (issued), -, after the boundary's first barrier, end of step.
enum ClusterMark : int { kMarkTop, kMarkReduced, kMarkSynced, kMarkFormed, kMarkPushed, kMarkBoundary, kMarkEnd, kMarks };
struct ClusterNoProbe {
  static constexpr int kPush = kPushAtStep;
  __device__ static void mark(int, int) {}
  __device__ static void edge(int) {}  // 0: after the cluster's first barrier, 1: a role's loop done
};

// The input copies of chunk ck (into the ring slots of chunk ck - 2), called
// at the start of chunk ck - 1 after a barrier: the S blocks have no barrier per
// step, so a slot is refilled only once the whole block is past its chunk.
template <class Tr, class Prec>
__device__ __forceinline__ void issue_chunk(InputCopies<Tr, Prec>& copy, int ck) {
#pragma unroll 1
  for (int s = 0; s < kChunk; ++s) copy.issue(ck * kChunk + s);
}

// The A block (cluster rank 0).
template <class Tr, class Prec, class Probe>
__device__ __forceinline__ void cluster_a_block(ClusterSmem<Tr, Prec>& cs, const FusedParams& p, InputCopies<Tr, Prec>& copy, int bh) {
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, R = Tr::R, NT = Tr::NT, NS = Tr::NS, NW = Tr::NW;
  constexpr int RPW = 32 * R / G;  // rows per warp of the twin's layout (TwinPolicy::sum)
  constexpr bool GW = Tr::GATE_WARP, FW = Tr::FEATURE_WARP, FC = Tr::FEATURE_COPIES;
  constexpr int NGW = Tr::GATE_WARPS;  // v9 (FREE_GATES 2): two gate warps, the steps in turn
  auto& sm = cs.f;
  const int tid = threadIdx.x, c = tid % G, gi = tid / G, T = p.T;
  float MA[R][CW];
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) MA[rr][jj] = gi * R + rr == c * CW + jj ? p.inv_lambda0 : 0.0f;
  constexpr int SPAN = G / R;
  const int row = gi * R + c / SPAN;
  const bool owner = c % SPAN == 0;
  const bool u_is_kh = p.u == nullptr && !p.u_unit_scaled;  // u = k^: the gate may come from z
  const bool want_zz = u_is_kh && p.normalize_gate;
  // v5: warp 0 forms a_t; v6 (GW): the warp after the NT threads, which holds no
  // rows of A and meets them only at their barriers; its row group 0 pushes a_t
  // (v9: the NGW warps after them, each its row group 0). With FW the next warp
  // (feat_warp) computes features and norms. compute: the threads holding rows of
  // A. wi: this thread's index among the norms' writers (v5: the block's threads,
  // v6: the gate warp's lanes, with FW the feature warp's).
  const bool gate_warp = GW ? tid >= NT && tid < NT + 32 * NGW : tid < 32, pusher = GW ? (tid - NT) % 32 < G : gi == 0;
  const bool feat_warp = FW && tid >= NT + 32 * NGW;
  const bool compute = !GW || tid < NT;
  const int wi = FW ? tid - NT - 32 * NGW : GW ? tid - NT : tid;
  const bool norms_writer = FW ? feat_warp : GW ? gate_warp : true;
  // SMEM_TREES: this row group's slots for the z partials (R rows of G lanes) and
  // for the dots' partials (the gate warp's groups: u.z and z.z, G each).
  constexpr bool ST = Tr::SMEM_TREES;
  static_assert(!ST || GW, "the gate's two trees on a warp of its own");
  float* const tp = ST ? &cs.tp[gi % (NT / G)][0] : nullptr;
  float* const tq = !ST ? nullptr : compute ? &cs.tq[tid - c] : &cs.tq[NT + 2 * ((tid - NT) % 32 - c)];
  unsigned a_at[NS], full_at[NS];                     // slot 0 of this lane's a segment and of the mbarriers, in S block j
#pragma unroll
  for (int j = 0; j < NS; ++j) {
    a_at[j] = cluster_addr(smem_addr(&cs.a[0][c * CW]), 1 + j);
    full_at[j] = cluster_addr(smem_addr(&cs.full[0]), 1 + j);
  }
  // ||S_t||_F of the steps of chunk ck from the row norms the S blocks sent:
  // the twin's warps' trees, added in warp order, by the writers wi = 0 .. ns-1.
  auto write_norms = [&](int ck) {
    const int t0 = ck * kChunk, ns = min(kChunk, T - t0);
    if (norms_writer && wi < ns) {
      float total = 0.0f;
#pragma unroll 1
      for (int w = 0; w < NW; ++w) total = total + warp_rows_sum<Tr>(&cs.fr[ck & 3][wi][w * RPW]);
      p.state_norm[(std::size_t(bh / p.H) * T + t0 + wi) * p.H + bh % p.H] = core::vsqrt(total);
    }
  };

  // With FW the inputs of chunk ck + 2 are copied at the start of chunk ck
  // (into the slots of chunk ck, whose features are done) and the feature warp
  // computes chunk ck + 1's during chunk ck: chunks 0 and 1 landed here.
  if constexpr (FW) __pipeline_wait_prior(0);
  if (compute) feature_vectors<Tr, Prec, NT>(sm, p, 0, min(kChunk, T), gi, c, false);
  __syncthreads();
  if constexpr (FW && !FC) issue_chunk(copy, 2);
  if constexpr (FW) {
    if (feat_warp) {
      const int last = (T - 1) / kChunk;
      // FC: this warp's copies of step t's k (and u) into its ring slot (the
      // block's threads copied chunks 0 and 1), one commit group per step.
      using In = typename Prec::In;
      constexpr int EPV = 16 / static_cast<int>(sizeof(In)), CPV = D / EPV;  // elements per piece, pieces per vector
      const int pieces = (p.u != nullptr ? 2 : 1) * CPV;
      const std::size_t stride = std::size_t(p.H) * D, base = (std::size_t(bh / p.H) * T * p.H + bh % p.H) * D;
      [[maybe_unused]] auto copy_step = [&](int t) {
        if (t < T)
          for (int i = wi; i < pieces; i += 32) {
            const int v = i / CPV, part = i % CPV;
            const In* src = static_cast<const In*>(v == 0 ? p.k : p.u) + base + std::size_t(t) * stride + part * EPV;
            __pipeline_memcpy_async(&sm.ring[t & (kRing - 1)][v == 0 ? 1 : 3][part * EPV], src, 16);
          }
        __pipeline_commit();
      };
      // The feature warp: during chunk ck, the norms of chunk ck - 3 (sent before
      // the S blocks' arrival for chunk ck - 2, which the gate warp waited for
      // before the boundary's barrier) and the features of chunk ck + 1 (its
      // inputs landed before that barrier), then the barrier into chunk ck + 1,
      // the A block's one barrier per chunk that it joins.
#pragma unroll 1
      for (int ck = 0; ck <= last; ++ck) {
        if constexpr (FC)  // chunk ck + 2 into the slots of chunk ck, whose inputs this warp read before the last barrier
#pragma unroll 1
          for (int s = 0; s < kChunk; ++s) copy_step((ck + 2) * kChunk + s);
        if (ck >= 3) write_norms(ck - 3);
        const int t0 = (ck + 1) * kChunk;
        if (t0 < T) {
          if constexpr (FC) {
            if (ck >= 1) __pipeline_wait_prior(kChunk);  // chunk ck + 1 (copied during chunk ck - 1) has landed
            __syncwarp();  // and is visible to every lane
          }
          feature_vectors<Tr, Prec, 32>(sm, p, t0, min(kChunk, T - t0), wi / G, c, false);
          __syncthreads();
        }
      }
      Probe::edge(1);
      cg::this_cluster().sync();  // every S block has sent its last row norms
      for (int ck = last >= 2 ? last - 2 : 0; ck <= last; ++ck) write_norms(ck);
      return;
    }
  }
  // The per-step barriers of the threads holding A and the gate warp: the block's
  // (v5, v6a), or with FW a named barrier that leaves the feature warp out.
  auto a_sync = [] {
    if constexpr (FW) asm volatile("bar.sync 1, %0;" ::"n"(NT + 32) : "memory");
    else __syncthreads();
  };
  const float* const kh_seg = &sm.kh[0][c * CW];
  const float* const u_seg = u_is_kh ? kh_seg : &sm.u[0][c * CW];
  constexpr bool kAhead = CW <= 4;
  float kh[CW], u[CW];
  auto load_step = [&](int t) {
    const int at = (t & (kRing - 1)) * D;
    load_floats<CW>(kh_seg + at, kh);
    load_floats<CW>(u_seg + at, u);
  };
  if constexpr (kAhead) load_step(0);
  // a_t into every S block's slot t % kRing, counted on the slot's mbarrier there.
  auto push = [&](int t, const float (&a)[CW]) {
    const int slot = t & (kRing - 1);
#pragma unroll
    for (int j = 0; j < NS; ++j)
#pragma unroll
      for (int jj = 0; jj < CW; jj += 4)
        st_async(a_at[j] + unsigned(slot * D + jj) * 4u, a[jj], a[jj + 1], a[jj + 2], a[jj + 3], full_at[j] + unsigned(slot) * 8u);
  };
  [[maybe_unused]] float a_late[CW];  // Probe::kPush == kPushLate: a_{t-1}, pushed after step t's barrier

  // v8 (PAPER_LOOP; shipped 2026-12-03, FLOOR.md "Kernel v8"): where the options
  // alone make every step's gate come from z (u = k^, normalised gate, no delta
  // floor, no ridge: core::gate_from_z_exact then reduces to delta > 0, since
  // without a floor delta = 1 + u.z exactly, and NaN fails both), the A warps and
  // the gate warp run loops of their own with the options' and the roles' per-step
  // tests folded away (Nsight Compute, FLOOR.md "Kernel v7": ~60 of the A warps'
  // ~178 instructions per step were control and flag work). The same helpers in
  // the same order: the same bits; w = A_t k^ and its barrier remain, where delta <= 0.
  // v9 (FG, FREE_GATES; a timing experiment, not shipped: FLOOR.md "Kernel v9"): in
  // v8 the gate warp arrived last at the A warps' per-step barrier (its trees,
  // 1 / ||z||, the push). Here the A warps' barrier is their own; their thread 0
  // then arrives on the mbarrier of z_t's slot in a ring of kChunk (and, after w_t
  // where delta <= 0, on w_t's), and the NGW gate warps, steps t = gw, gw + NGW, .. of each chunk, wait
  // there: a gate warp trails the A warps within a chunk and meets them only at the
  // chunk boundary's barrier (which also keeps the A warps from refilling a slot it
  // has not read). The same helpers in the same order: the same bits.
  constexpr bool PL = Tr::PAPER_LOOP && FW && FC && !ST && Probe::kPush == kPushAtStep;
  constexpr bool FG = PL && Tr::FREE_GATES > 0;
  static_assert(!FG || kChunk % (NGW > 0 ? NGW : 1) == 0, "every gate warp has the same steps of every whole chunk");
  [[maybe_unused]] auto a_own_sync = [] { asm volatile("bar.sync 1, %0;" ::"n"(NT) : "memory"); };  // FG: the A warps alone
  // The paper loops' gate (v8's gate warp, v9's) of step t, pushed: a_t = z / ||z||
  // from z's column segment with v5's interleaved trees, or where 1 + u.z <= 0 from
  // w (v8: sm.w after the A warps' barrier; v9: slot t % kChunk once it is in).
  [[maybe_unused]] auto paper_gate = [&](int t, const float (&zc)[CW]) {
    float a[CW], dots[2] = {seg_partial<CW>(u, zc), seg_partial<CW>(zc, zc)};  // step_scalars' interleaved trees
    group_sums<G, 2>(dots);
    const float inv_nz = 1.0f / core::vsqrt(dots[1]);
    if (1.0f + dots[0] > 0.0f) {
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) a[jj] = zc[jj] * inv_nz;
    } else if constexpr (FG) {
      const int s = t & (kChunk - 1);
      spin_until([&] { return mbar_try_wait(&cs.wfull[s], unsigned(t / kChunk) & 1u); }, "w from the A warps");
      gate_from_w<Tr>(&cs.wr[s][c * CW], true, a);
    } else {
      a_sync();  // w visible
      gate_from_w<Tr>(&sm.w[c * CW], true, a);
    }
    Probe::mark(kMarkFormed, t);
    if (pusher) push(t, a);
    Probe::mark(kMarkPushed, t);
  };
  // The gate warps' side of the barrier into chunk ca (paper loops): first every S
  // block must have consumed chunk ca - 2, whose gate slots chunk ca refills.
  [[maybe_unused]] auto gate_boundary = [&](int ca) {
    if (ca >= 2)
      spin_until([&] { return mbar_try_wait_cluster(&cs.consumed[ca & 1], unsigned((ca - 2) >> 1) & 1u); },
                 "the S blocks to consume the gate ring");
    __syncthreads();
  };
  bool paper = false;
  if constexpr (PL) paper = u_is_kh && p.normalize_gate && !(p.delta_floor > 0.0) && !(p.ridge_every > 0);
  if (paper) {
    if constexpr (PL) {
      if (compute) {
#pragma unroll 1
        for (int t = 0; t < T; ++t) {
          const int par = t & 1, s = t & (kChunk - 1);
          float* const z_t = FG ? &cs.zr[s][0] : &sm.z[par][0];
          Probe::mark(kMarkTop, t);
          if constexpr (!kAhead) load_step(t);
          float zrow[R], zc[CW];
          group_rows<G, R>(product_rows<G, R, CW>(MA, u, c, owner, z_t + row), zrow);
          Probe::mark(kMarkReduced, t);
          if constexpr (FG) {
            a_own_sync();                             // z visible to the A warps
            if (tid == 0) mbar_arrive(&cs.zfull[s]);  // and, after their barrier, to the gate warps
          } else {
            a_sync();  // z visible to the block
          }
          Probe::mark(kMarkSynced, t);
          load_floats<CW>(z_t + c * CW, zc);
          const float delta = 1.0f + group_sum<G>(seg_partial<CW>(u, zc));  // core::sm_delta without a floor
          update_a<Prec, R, CW>(MA, zc, zrow, 1.0f / delta, false, 0.0f, gi * R, c * CW);
          if (!(delta > 0.0f)) {  // the gate from w = A_t k^
            product_rows<G, R, CW>(MA, kh, c, owner, FG ? &cs.wr[s][row] : &sm.w[row]);
            if constexpr (FG) a_own_sync();
            else a_sync();
          }
          if constexpr (FG)
            if (tid == 0) mbar_arrive(&cs.wfull[s]);  // every step, so that the slot's phases count steps
          Probe::mark(kMarkFormed, t);
          Probe::mark(kMarkPushed, t);
          if (t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
            __syncthreads();  // the chunk boundary's one barrier (the feature warp's, the gate warp's)
            Probe::mark(kMarkBoundary, t);
          }
          Probe::mark(kMarkEnd, t);
          if constexpr (kAhead)
            if (t + 1 < T) load_step(t + 1);
        }
      } else if constexpr (FG) {  // the free gate warps: steps gw, gw + NGW, .. of each chunk
        const int gw = (tid - NT) / 32, last = (T - 1) / kChunk;
#pragma unroll 1
        for (int ck = 0; ck <= last; ++ck) {
          const int t_end = min(T, (ck + 1) * kChunk);
#pragma unroll 1
          for (int t = ck * kChunk + gw; t < t_end; t += NGW) {
            const int s = t & (kChunk - 1);
            const unsigned phase = unsigned(ck) & 1u;
            Probe::mark(kMarkTop, t);
            load_floats<CW>(u_seg + (t & (kRing - 1)) * D, u);
            Probe::mark(kMarkReduced, t);
            spin_until([&] { return mbar_try_wait(&cs.zfull[s], phase); }, "z from the A warps");
            Probe::mark(kMarkSynced, t);
            float zc[CW];
            load_floats<CW>(&cs.zr[s][c * CW], zc);
            paper_gate(t, zc);
            Probe::mark(kMarkEnd, t);
          }
          if (ck < last) gate_boundary(ck + 1);  // the chunk boundary's one barrier
        }
      } else {  // the gate warp
#pragma unroll 1
        for (int t = 0; t < T; ++t) {
          const int par = t & 1;
          Probe::mark(kMarkTop, t);
          if constexpr (!kAhead) load_step(t);
          Probe::mark(kMarkReduced, t);
          a_sync();
          Probe::mark(kMarkSynced, t);
          float zc[CW];
          load_floats<CW>(&sm.z[par][c * CW], zc);
          paper_gate(t, zc);
          if (t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
            gate_boundary((t + 1) / kChunk);
            Probe::mark(kMarkBoundary, t);
          }
          Probe::mark(kMarkEnd, t);
          if constexpr (kAhead)
            if (t + 1 < T) load_step(t + 1);
        }
      }
    }
  } else if (NGW > 1 && tid >= NT + 32 && tid < NT + 32 * NGW) {  // v9's second gate warp where the general loop runs: idle
#pragma unroll 1
    for (int ca = 1; ca <= (T - 1) / kChunk; ++ca) __syncthreads();  // the boundaries' barriers (below)
  } else  // the general loop (every variant)
#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    const int par = t & 1;
    Probe::mark(kMarkTop, t);
    if constexpr (!kAhead) load_step(t);
    float zrow[R];
    if constexpr (ST) {
      if (compute) {  // this lane's partials of its R rows to the group's slots; its row's G partials back, in lane order
        float part[R], x[G];
        row_partials(MA, u, part);
#pragma unroll
        for (int rr = 0; rr < R; ++rr) tp[rr * G + c] = part[rr];
        __syncwarp();
        load_floats<G>(tp + (c / SPAN) * G, x);
        const float zr = pairwise_sum<G>(x);
        if (owner) sm.z[par][row] = zr;
      }
    } else {
      if (compute) group_rows<G, R>(product_rows<G, R, CW>(MA, u, c, owner, &sm.z[par][row]), zrow);
    }
    Probe::mark(kMarkReduced, t);
    a_sync();  // z visible to the block
    Probe::mark(kMarkSynced, t);
    if constexpr (Probe::kPush == kPushLate)
      if (gate_warp && pusher && t > 0) push(t - 1, a_late);
    float zc[CW];
    load_floats<CW>(&sm.z[par][c * CW], zc);
    if constexpr (ST)
      if (compute)
#pragma unroll
        for (int rr = 0; rr < R; ++rr) zrow[rr] = sm.z[par][gi * R + rr];  // the group's rows (what group_rows gave)
    // delta = 1 + u.z and, in warp 0 where the gate may come from z, 1 / ||z||.
    StepScalars sc;
    if constexpr (ST) sc = step_scalars_smem<G, CW>(p, t, u, zc, gate_warp, want_zz, u_is_kh, tq, c);
    else sc = step_scalars<G, CW>(p, t, u, zc, gate_warp, want_zz, u_is_kh);
    const float delta = sc.delta, inv_nz = sc.inv_nz;
    const bool ridge = sc.ridge, exact = sc.exact;
    // Quotients by one denominator as TwinPolicy::divide_all: one IEEE reciprocal,
    // then products (with ST, not in the gate warp where the gate is normalised:
    // unused there, and the reciprocal's latency was on its path).
    float inv_delta;
    if constexpr (ST) {
      if (gate_warp && p.normalize_gate) inv_delta = 0.0f;
      else inv_delta = 1.0f / delta;
    } else {
      inv_delta = 1.0f / delta;
    }
    if (compute) update_a<Prec, R, CW>(MA, zc, zrow, inv_delta, ridge, p.ridge, gi * R, c * CW);
    float a[CW];
    if (!exact) {  // w = A_t k^ by rows, then its column segments for the gate
      if (compute) product_rows<G, R, CW>(MA, kh, c, owner, &sm.w[row]);
      a_sync();  // w visible to the gate warp (the next write of w is after the next step's barrier)
      if (gate_warp) gate_from_w<Tr>(&sm.w[c * CW], p.normalize_gate, a);
    } else if (gate_warp) {
      const float scale = p.normalize_gate ? inv_nz : inv_delta;
#pragma unroll
      for (int jj = 0; jj < CW; ++jj) a[jj] = zc[jj] * scale;
    }
    Probe::mark(kMarkFormed, t);
    if constexpr (Probe::kPush == kPushAtStep)
      if (gate_warp && pusher) push(t, a);
    if constexpr (Probe::kPush == kPushLate)
      if (gate_warp && pusher)
#pragma unroll
        for (int jj = 0; jj < CW; ++jj) a_late[jj] = a[jj];
    if constexpr (Probe::kPush == kPushChunkEnd)
      if (gate_warp && pusher && (t & (kChunk - 1)) == kChunk - 1) push(t, a);
    Probe::mark(kMarkPushed, t);
    if (FW && t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
      // One barrier, with the feature warp: chunk ca's features visible, chunk ca +
      // 1's inputs visible to it, and the S blocks' consumption of chunk ca - 2
      // (the gate warp waits for it before it refills those gate slots) ordered
      // before its norm sums.
      const int ca = (t + 1) / kChunk;
      if (compute && !FC) __pipeline_wait_prior(0);  // chunk ca + 1's inputs (this thread's copies) have landed
      if (gate_warp && ca >= 2)
        spin_until([&] { return mbar_try_wait_cluster(&cs.consumed[ca & 1], unsigned((ca - 2) >> 1) & 1u); },
                   "the S blocks to consume the gate ring");
      __syncthreads();
      Probe::mark(kMarkBoundary, t);
      if (compute && !FC) issue_chunk(copy, ca + 2);  // into the slots of chunk ca, whose inputs the feature warp has read
    } else if (t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
      const int ca = (t + 1) / kChunk;
      __pipeline_wait_prior(0);  // chunk ca's inputs (this thread's copies) have landed
      // The gate slots of chunk ca are those of chunk ca - 2: every S block must
      // have consumed it (and has then sent the row norms of chunks <= ca - 3).
      if (tid == (GW ? NT : 0) && ca >= 2)
        spin_until([&] { return mbar_try_wait_cluster(&cs.consumed[ca & 1], unsigned((ca - 2) >> 1) & 1u); },
                   "the S blocks to consume the gate ring");
      __syncthreads();
      Probe::mark(kMarkBoundary, t);
      issue_chunk(copy, ca + 1);
      if (ca >= 3) write_norms(ca - 3);
      if (compute) feature_vectors<Tr, Prec, NT>(sm, p, t + 1, min(kChunk, T - t - 1), gi, c, false);
      __syncthreads();
    }
    Probe::mark(kMarkEnd, t);
    if constexpr (kAhead)
      if (t + 1 < T) load_step(t + 1);
  }
  if constexpr (Probe::kPush == kPushLate)
    if (gate_warp && pusher) push(T - 1, a_late);
  Probe::edge(1);
  cg::this_cluster().sync();  // every S block has sent its last row norms
  const int last = (T - 1) / kChunk;
  for (int ck = last >= 2 ? last - 2 : 0; ck <= last; ++ck) write_norms(ck);
  if (compute) write_rows<D, R, CW>(MA, p.A + std::size_t(bh) * D * D + std::size_t(gi * R) * D + c * CW);
}

// A barrier of an S block's NT threads: the block's where it has no gate warp
// (v5), else a named barrier of those threads (the S blocks' extra warp of v6
// idles: it waits at the cluster's last barrier only).
template <class Tr>
__device__ __forceinline__ void s_block_sync() {
  if constexpr (Tr::GATE_WARP) asm volatile("bar.sync 1, %0;" ::"n"(Tr::NT) : "memory");
  else __syncthreads();
}

// An S block's step t up to its wait for a_t: r = v - S_{t-1} k^ (this thread's
// rows: rrow) and the readout of step t-1 (S phi(q) and the row norms: three
// interleaved reduce-scatters), y to shared memory and the row's norm to the A block.
template <class Tr>
__device__ __forceinline__ void s_residual(const float (&MS)[Tr::SR][Tr::CW], const float (&kh)[Tr::CW], const float (&phiq_prev)[Tr::CW],
                                           float v_row, int t, int c, bool owner, float* y_at, unsigned fr_at, float (&rrow)[Tr::SR]) {
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, SR = Tr::SR;
  float red[3];
  {
    float part[3][SR];
    row_partials(MS, kh, part[0]);
    row_partials(MS, phiq_prev, part[1]);
#pragma unroll
    for (int rr = 0; rr < SR; ++rr) part[2][rr] = seg_partial<CW>(MS[rr], MS[rr]);
    group_reduce_scatter<G, SR, 3>(part, c, red);
  }
  group_rows<G, SR>(v_row - red[0], rrow);
  if (t > 0 && owner) {
    y_at[((t - 1) & (kRing - 1)) * D] = red[1];
    st_cluster(fr_at + unsigned(((t - 1) & (4 * kChunk - 1)) * D) * 4u, red[2]);
  }
}

// a_t from the A block (slot t % kRing, once its mbarrier's phase completes), then S_t = S_{t-1} + r a^T.
template <class Tr, class Prec, class Probe>
__device__ __forceinline__ void s_gate_update(ClusterSmem<Tr, Prec>& cs, float (&MS)[Tr::SR][Tr::CW], const float (&rrow)[Tr::SR], int t, int c) {
  constexpr int CW = Tr::CW, SR = Tr::SR;
  const int slot = t & (kRing - 1);
  float a[CW];
  Probe::mark(kMarkReduced, t);
  if (Probe::kPush != kPushChunkEnd || (t & (kChunk - 1)) == kChunk - 1)
    spin_until([&] { return mbar_try_wait(&cs.full[slot], unsigned(t / kRing) & 1u); }, "the gate a_t from the A block");
  Probe::mark(kMarkSynced, t);
  load_floats<CW>(&cs.a[slot][c * CW], a);
  update_s<Prec, SR, CW>(MS, rrow, a);
  Probe::mark(kMarkFormed, t);
}

// The readout of the last step T-1 (S phi(q) and the row norms), y to shared memory and the row's norm to the A block.
template <class Tr>
__device__ __forceinline__ void s_last_readout(const float (&MS)[Tr::SR][Tr::CW], const float* phiq_seg, int T, int c, bool owner, float* y_at,
                                               unsigned fr_at) {
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, SR = Tr::SR;
  const int at = ((T - 1) & (kRing - 1)) * D;
  float phiq[CW], part[2][SR], red[2];
  load_floats<CW>(phiq_seg + at, phiq);
  row_partials(MS, phiq, part[0]);
#pragma unroll
  for (int rr = 0; rr < SR; ++rr) part[1][rr] = seg_partial<CW>(MS[rr], MS[rr]);
  group_reduce_scatter<G, SR, 2>(part, c, red);
  if (owner) {
    y_at[at] = red[0];
    st_cluster(fr_at + unsigned(((T - 1) & (4 * kChunk - 1)) * D) * 4u, red[1]);
  }
}

// S block j (cluster rank 1 + j): rows j D / NS .. (j + 1) D / NS - 1 of S.
template <class Tr, class Prec, class Probe>
__device__ __forceinline__ void cluster_s_block(ClusterSmem<Tr, Prec>& cs, const FusedParams& p, InputCopies<Tr, Prec>& copy, int bh, int j,
                                                std::size_t base, std::size_t stride) {
  using In = typename Prec::In;
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, NT = Tr::NT, SR = Tr::SR, ROWS = D / Tr::NS;
  auto& sm = cs.f;
  const int tid = threadIdx.x, c = tid % G, gi = tid / G, T = p.T, r0 = j * ROWS;
  float MS[SR][CW], n[CW];
#pragma unroll
  for (int rr = 0; rr < SR; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) MS[rr][jj] = 0.0f;
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) n[jj] = 0.0f;
  constexpr int SPAN = G / SR;
  const int row = r0 + gi * SR + c / SPAN;
  const bool owner = c % SPAN == 0;
  // This row's norm of step t goes to the A block's cs.fr[t / kChunk % 4][t % kChunk][row].
  const unsigned fr_at = cluster_addr(smem_addr(&cs.fr[0][0][row]), 0);
  const unsigned consumed_at = cluster_addr(smem_addr(&cs.consumed[0]), 0);

  // Features of the chunk from t0 (all of them: this block reads out), after the
  // o rows of the chunk two behind (the buffers this chunk's readouts will fill).
  auto features = [&](int t0) {
    const int ns = min(kChunk, T - t0);
    if (t0 >= 2 * kChunk) write_o<Tr, Prec, NT>(sm, p, t0 / kChunk - 2, base, stride, r0, ROWS, tid);
    feature_vectors<Tr, Prec, NT>(sm, p, t0, ns, gi, c, true);
    s_block_sync<Tr>();
    if (gi == 0) scan_n<Tr, Prec>(sm, ns, c, n);
    s_block_sync<Tr>();
    if (p.ratio) ratio_dens<Tr, Prec, NT>(sm, p, t0, ns, gi, c);
  };
  features(0);

  const float* const kh_seg = &sm.kh[0][c * CW];
  const float* const phiq_seg = &sm.phiq[0][c * CW];
  const In* const v_at = &sm.ring[0][2][row];
  float* const y_at = &sm.y[0][row];
  constexpr bool kAhead = CW <= 4;
  float kh[CW], phiq_prev[CW], v_row = 0.0f;
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) phiq_prev[jj] = 0.0f;
  auto load_step = [&](int t) {
    const int at = (t & (kRing - 1)) * D;
    load_floats<CW>(kh_seg + at, kh);
    v_row = Prec::load(v_at[4 * at]);
    if (t > 0) load_floats<CW>(phiq_seg + ((t - 1) & (kRing - 1)) * D, phiq_prev);
  };
  if constexpr (kAhead) load_step(0);

#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    Probe::mark(kMarkTop, t);
    if constexpr (!kAhead) load_step(t);
    float rrow[SR];
    s_residual<Tr>(MS, kh, phiq_prev, v_row, t, c, owner, y_at, fr_at, rrow);
    // a_t from the A block.
    const int slot = t & (kRing - 1);
    float a[CW];
    Probe::mark(kMarkReduced, t);
    if (Probe::kPush != kPushChunkEnd || (t & (kChunk - 1)) == kChunk - 1)
      spin_until([&] { return mbar_try_wait(&cs.full[slot], unsigned(t / kRing) & 1u); }, "the gate a_t from the A block");
    Probe::mark(kMarkSynced, t);
    load_floats<CW>(&cs.a[slot][c * CW], a);
    update_s<Prec, SR, CW>(MS, rrow, a);
    Probe::mark(kMarkFormed, t);
    if (t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
      const int ck = (t + 1) / kChunk;
      __pipeline_wait_prior(0);  // chunk ck's inputs (this thread's copies) have landed
      s_block_sync<Tr>();  // every thread of the block is done with the gates and the inputs of chunks < ck
      Probe::mark(kMarkBoundary, t);
      if (tid < kChunk && (Probe::kPush != kPushChunkEnd || tid == kChunk - 1)) mbar_arm(&cs.full[((ck + 1) * kChunk + tid) & (kRing - 1)], D * 4);  // the slots of chunk ck + 1 (those of chunk ck - 1)
      issue_chunk(copy, ck + 1);
      features(t + 1);
      // Chunk ck - 1 consumed and its rows' norms (all but its last step's) sent:
      // one release arrival on the A block's mbarrier of its parity (after the
      // features, so that the fence it takes is off the block's barriers).
      if (tid == 0) mbar_arrive_remote(consumed_at + unsigned((ck - 1) & 1) * 8u);
    }
    Probe::mark(kMarkEnd, t);
    if constexpr (kAhead)
      if (t + 1 < T) load_step(t + 1);
  }
  Probe::edge(1);

  // The readout of step T-1, then the o rows of the chunks not yet written.
  {
    const int at = ((T - 1) & (kRing - 1)) * D;
    float phiq[CW], part[2][SR], red[2];
    load_floats<CW>(phiq_seg + at, phiq);
    row_partials(MS, phiq, part[0]);
#pragma unroll
    for (int rr = 0; rr < SR; ++rr) part[1][rr] = seg_partial<CW>(MS[rr], MS[rr]);
    group_reduce_scatter<G, SR, 2>(part, c, red);
    if (owner) {
      y_at[at] = red[0];
      st_cluster(fr_at + unsigned(((T - 1) & (4 * kChunk - 1)) * D) * 4u, red[1]);
    }
  }
  s_block_sync<Tr>();
  const int last = (T - 1) / kChunk;
  if (last >= 1) write_o<Tr, Prec, NT>(sm, p, last - 1, base, stride, r0, ROWS, tid);
  write_o<Tr, Prec, NT>(sm, p, last, base, stride, r0, ROWS, tid);
  cg::this_cluster().sync();  // the row norms are in the A block
  write_rows<D, SR, CW>(MS, p.S + std::size_t(bh) * D * D + std::size_t(r0 + gi * SR) * D + c * CW);
}

// Kernel v7 (S_FEATURES): S block j with its two extra warps as feature warps. In
// v6c an S block's NT threads still did their chunk's work at its boundary (16 copy
// commits, the o rows of the chunk two behind, the features of the next chunk,
// the n scan and the ratio denominators between two barriers of their own), about
// 6,000 probed cycles per 16 steps, and after it the block reached its wait for
// a_t late: its boundaries shared the pace. Here the feature warps, during chunk
// ck, copy chunk ck + 2's q, k, v (into the raw slots of chunk ck, whose features
// they made during chunk ck - 1), make chunk ck + 1's features (k^, phi(q), phi(k)
// and the n scan, v_t as floats in sm.u, which an S block does not otherwise use,
// the denominators) and write chunk ck - 1's o rows (once the NT threads, at chunk
// ck's first step, have stored y of its last step and arrived at a named barrier
// that the feature warps wait on); after the boundary's one barrier they arm the
// gate slots of chunk ck + 2 and arrive on the A block's `consumed` for chunk ck.
// The NT threads' boundary is that barrier, with phi(q_t) of the chunk's last step
// loaded before it (its slot is refilled after it). Same values, same order: bits
// equal v5's.
template <class Tr, class Prec, class Probe>
__device__ __forceinline__ void cluster_s_block_sf(ClusterSmem<Tr, Prec>& cs, const FusedParams& p, int bh, int j, std::size_t base,
                                                   std::size_t stride) {
  using In = typename Prec::In;
  constexpr int D = Tr::D, G = Tr::G, CW = Tr::CW, NT = Tr::NT, SR = Tr::SR, ROWS = D / Tr::NS, NF = Tr::BLOCK - NT;
  static_assert(NF >= 64 && NF % 32 == 0, "two feature warps (v9 with two gate warps: three)");
  auto& sm = cs.f;
  const int tid = threadIdx.x, T = p.T, r0 = j * ROWS, last = (T - 1) / kChunk;
  // Named barriers (the A block's are its own): 2, the feature warps; 3, y of a
  // chunk's last step stored (the NT threads arrive, the feature warps wait).
  auto f_sync = [] { asm volatile("bar.sync 2, %0;" ::"n"(NF) : "memory"); };
  __pipeline_wait_prior(0);  // chunks 0 and 1 (this thread's copies) have landed
  __syncthreads();

  if (tid >= NT) {  // the feature warps
    const int fi = tid - NT, fgi = fi / G, c = fi % G;
    const unsigned consumed_at = cluster_addr(smem_addr(&cs.consumed[0]), 0);
    float n[CW];
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) n[jj] = 0.0f;
    auto vectors = [&](int t0) {
      const int ns = min(kChunk, T - t0);
      feature_vectors<Tr, Prec, NF, true>(sm, p, t0, ns, fgi, c, true);
      f_sync();
      if (fgi == 0) scan_n<Tr, Prec>(sm, ns, c, n);
      f_sync();
    };
    auto dens = [&](int t0) {
      if (p.ratio) ratio_dens<Tr, Prec, NF>(sm, p, t0, min(kChunk, T - t0), fgi, c);
    };
    // Step t's q, k, v into its ring slot, one commit group per step.
    constexpr int EPV = 16 / static_cast<int>(sizeof(In)), CPV = D / EPV;  // elements per piece, pieces per vector
    auto copy_step = [&](int t) {
      if (t < T)
        for (int i = fi; i < 3 * CPV; i += NF) {
          const int v = i / CPV, part = i % CPV;
          const In* src = static_cast<const In*>(v == 0 ? p.q : v == 1 ? p.k : p.v) + base + std::size_t(t) * stride + part * EPV;
          __pipeline_memcpy_async(&sm.ring[t & (kRing - 1)][v][part * EPV], src, 16);
        }
      __pipeline_commit();
    };
    vectors(0);
    dens(0);
    __syncthreads();  // chunk 0's features visible
#pragma unroll 1
    for (int ck = 0; ck <= last; ++ck) {
#pragma unroll 1
      for (int s = 0; s < kChunk; ++s) copy_step((ck + 2) * kChunk + s);
      const int t0 = (ck + 1) * kChunk;
      if (t0 < T) {
        if (ck >= 1) __pipeline_wait_prior(kChunk);  // chunk ck + 1 (copied during chunk ck - 1) has landed
        f_sync();                                     // and is visible to both warps
        vectors(t0);
      }
      if (ck >= 1) {
        asm volatile("bar.sync 3, %0;" ::"n"(NT + NF) : "memory");  // y of chunk ck - 1's last step stored
        write_o<Tr, Prec, NF>(sm, p, ck - 1, base, stride, r0, ROWS, fi);
        f_sync();  // its denominators read before chunk ck + 1's overwrite them
      }
      if (t0 < T) {
        dens(t0);
        __syncthreads();  // into chunk ck + 1: its features visible, the NT threads done with chunk ck's gates
        if (fi < kChunk && (Probe::kPush != kPushChunkEnd || fi == kChunk - 1))
          mbar_arm(&cs.full[((ck + 2) * kChunk + fi) & (kRing - 1)], D * 4);  // the slots of chunk ck + 2 (those of chunk ck)
        __syncwarp();
        // Chunk ck consumed and its rows' norms (all but its last step's) sent: one
        // release arrival (the barrier orders the NT threads' remote stores before it).
        if (fi == 0) mbar_arrive_remote(consumed_at + unsigned(ck & 1) * 8u);
      }
    }
    __syncthreads();  // the NT threads' readout of step T-1 stored
    write_o<Tr, Prec, Tr::BLOCK>(sm, p, last, base, stride, r0, ROWS, tid);
    cg::this_cluster().sync();
    return;
  }

  const int c = tid % G, gi = tid / G;
  float MS[SR][CW];
#pragma unroll
  for (int rr = 0; rr < SR; ++rr)
#pragma unroll
    for (int jj = 0; jj < CW; ++jj) MS[rr][jj] = 0.0f;
  constexpr int SPAN = G / SR;
  const int row = r0 + gi * SR + c / SPAN;
  const bool owner = c % SPAN == 0;
  const unsigned fr_at = cluster_addr(smem_addr(&cs.fr[0][0][row]), 0);
  __syncthreads();  // chunk 0's features visible

  const float* const kh_seg = &sm.kh[0][c * CW];
  const float* const phiq_seg = &sm.phiq[0][c * CW];
  const float* const v_at = &sm.u[0][row];  // v_t as float (the feature warps')
  float* const y_at = &sm.y[0][row];
  constexpr bool kAhead = CW <= 4;
  float kh[CW], phiq_prev[CW], v_row = 0.0f;
#pragma unroll
  for (int jj = 0; jj < CW; ++jj) phiq_prev[jj] = 0.0f;
  // phi(q_{t-1}) of a chunk's first step was loaded before the boundary's barrier.
  auto load_step = [&](int t) {
    const int at = (t & (kRing - 1)) * D;
    load_floats<CW>(kh_seg + at, kh);
    v_row = v_at[at];
    if (t > 0 && (t & (kChunk - 1)) != 0) load_floats<CW>(phiq_seg + ((t - 1) & (kRing - 1)) * D, phiq_prev);
  };
  if constexpr (kAhead) load_step(0);

#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    Probe::mark(kMarkTop, t);
    if constexpr (!kAhead) load_step(t);
    float rrow[SR];
    s_residual<Tr>(MS, kh, phiq_prev, v_row, t, c, owner, y_at, fr_at, rrow);
    if (t > 0 && (t & (kChunk - 1)) == 0) asm volatile("bar.arrive 3, %0;" ::"n"(NT + NF) : "memory");  // y of chunk t / kChunk - 1 stored
    s_gate_update<Tr, Prec, Probe>(cs, MS, rrow, t, c);
    if (t + 1 < T && ((t + 1) & (kChunk - 1)) == 0) {
      load_floats<CW>(phiq_seg + (t & (kRing - 1)) * D, phiq_prev);  // before the feature warps refill its slot
      __syncthreads();  // chunk (t + 1) / kChunk's features visible; this block done with the gates of the chunk ending
      Probe::mark(kMarkBoundary, t);
    }
    Probe::mark(kMarkEnd, t);
    if constexpr (kAhead)
      if (t + 1 < T) load_step(t + 1);
  }
  Probe::edge(1);

  // The readout of step T-1 (its o rows: with the feature warps, after the barrier).
  s_last_readout<Tr>(MS, phiq_seg, T, c, owner, y_at, fr_at);
  __syncthreads();  // y of step T-1 visible; the feature warps done with chunk last - 1's o rows
  write_o<Tr, Prec, Tr::BLOCK>(sm, p, last, base, stride, r0, ROWS, tid);
  cg::this_cluster().sync();  // the row norms are in the A block
  write_rows<D, SR, CW>(MS, p.S + std::size_t(bh) * D * D + std::size_t(r0 + gi * SR) * D + c * CW);
}

template <class Tr, class Prec, class Probe = ClusterNoProbe>
__global__ void __launch_bounds__(Tr::BLOCK, Tr::MIN_BLOCKS) vla_fused_cluster_kernel(const __grid_constant__ FusedParams p) {
  static_assert(Tr::NT >= 4 * InputCopies<Tr, Prec>::kChunksPerVec, "one 16-byte copy per thread and step at most");
  static_assert(kRing <= Tr::NT, "one thread per ring slot initialises its mbarrier");
  extern __shared__ __align__(16) unsigned char vla_smem[];
  auto& cs = *reinterpret_cast<ClusterSmem<Tr, Prec>*>(vla_smem);
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = threadIdx.x;
  const int bh = blockIdx.x / Tr::CLUSTER, b = bh / p.H, h = bh % p.H;
  const std::size_t stride = std::size_t(p.H) * Tr::D;                   // elements between steps
  const std::size_t base = (std::size_t(b) * p.T * p.H + h) * Tr::D;     // element (b, 0, h, 0)
  InputCopies<Tr, Prec> copy(cs.f, p, tid, base, stride);

  if (rank == 0) {
    if (tid < 2) mbar_init(&cs.consumed[tid], Tr::NS);  // one arrival per S block and chunk
    if constexpr (Tr::FREE_GATES > 0)
      if (tid < kChunk) {  // one arrival (the A warps' thread 0) per step of the slot
        mbar_init(&cs.zfull[tid], 1);
        mbar_init(&cs.wfull[tid], 1);
      }
  } else if (tid < kRing) {
    mbar_init(&cs.full[tid], 1);  // one arrival (mbar_arm) and D floats of st.async per phase
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  cluster.sync();  // every block started, its mbarriers initialised
  Probe::edge(0);
  if (rank != 0 && tid < kRing && (Probe::kPush != kPushChunkEnd || (tid & (kChunk - 1)) == kChunk - 1)) mbar_arm(&cs.full[tid], Tr::D * 4);  // phase 0 of every slot: chunks 0 and 1

  issue_chunk(copy, 0);
  issue_chunk(copy, 1);
  __pipeline_wait_prior(kChunk);  // steps 0 .. kChunk-1 (this thread's copies) have landed
  __syncthreads();
  if (rank == 0) cluster_a_block<Tr, Prec, Probe>(cs, p, copy, bh);
  else if constexpr (Tr::S_FEATURES) cluster_s_block_sf<Tr, Prec, Probe>(cs, p, bh, rank - 1, base, stride);
  else if (!Tr::GATE_WARP || tid < Tr::NT) cluster_s_block<Tr, Prec, Probe>(cs, p, copy, bh, rank - 1, base, stride);
  else cluster.sync();  // v6: the S blocks' extra warp (the S block's own last barrier)
  __pipeline_wait_prior(0);  // no copy may outlive the block
}

template <class Tr, class Prec>
constexpr int cluster_smem_bytes() {
  return static_cast<int>(sizeof(ClusterSmem<Tr, Prec>));
}

template <class Tr, class Prec>
void ensure_cluster_smem_limit() {
  static const cudaError_t e = cudaFuncSetAttribute(vla_fused_cluster_kernel<Tr, Prec>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    cluster_smem_bytes<Tr, Prec>());
  VLA_CUDA_CHECK(e);
}

// The launch configuration of `heads` clusters (attr: its one attribute, the cluster dimension).
template <class Tr, class Prec>
cudaLaunchConfig_t cluster_config(long long heads, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(heads * Tr::CLUSTER), 1, 1);
  cfg.blockDim = dim3(Tr::BLOCK, 1, 1);
  cfg.dynamicSmemBytes = cluster_smem_bytes<Tr, Prec>();
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = Tr::CLUSTER;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

// Launches the cluster kernel (checked).
template <class Tr, class Prec>
void launch_cluster(const FusedParams& p, cudaStream_t stream) {
  ensure_cluster_smem_limit<Tr, Prec>();
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config<Tr, Prec>(static_cast<long long>(p.B) * p.H, stream, attr);
  VLA_CUDA_CHECK(cudaLaunchKernelEx(&cfg, vla_fused_cluster_kernel<Tr, Prec>, p));
}

// Clusters of the kernel that run at once on the current device (the
// occupancy calculator's active clusters: blocks of different heads share an
// SM where registers and shared memory allow). The automatic choice gives the
// cluster layout every launch of at most this many heads: measured on the H200
// (reports/gpu/FLOOR.md, "The layouts' reach"), sharing SMs costs a head little
// (D = 64: 0.48 us per step alone, 0.56 at 64 heads, co-resident up to 79),
// while one head more than fits runs a second wave (D = 64, 88 heads: 1.02).
template <class Tr, class Prec>
int cluster_wave() {
  static const int n = [] {
    ensure_cluster_smem_limit<Tr, Prec>();
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = cluster_config<Tr, Prec>(1, nullptr, attr);
    int clusters = 0;
    VLA_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, vla_fused_cluster_kernel<Tr, Prec>, &cfg));
    return clusters;
  }();
  return n;
}

template <class Tr, class Prec>
KernelInfo cluster_kernel_info() {
  cudaFuncAttributes attr{};
  VLA_CUDA_CHECK(cudaFuncGetAttributes(&attr, vla_fused_cluster_kernel<Tr, Prec>));
  ensure_cluster_smem_limit<Tr, Prec>();
  KernelInfo k;
  k.threads = Tr::BLOCK;
  k.registers = attr.numRegs;
  k.shared_bytes = cluster_smem_bytes<Tr, Prec>();
  k.local_bytes = static_cast<int>(attr.localSizeBytes);
  // Blocks per SM as the occupancy calculator counts them for this block size (clusters also need
  // their blocks on one GPC: wave_clusters is what runs at once).
  VLA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, vla_fused_cluster_kernel<Tr, Prec>, Tr::BLOCK,
                                                               cluster_smem_bytes<Tr, Prec>()));
  k.cluster_blocks = Tr::CLUSTER;
  k.wave_clusters = cluster_wave<Tr, Prec>();
  k.layout = FusedLayout::cluster;
  return k;
}

}  // namespace vla::gpu::detail
