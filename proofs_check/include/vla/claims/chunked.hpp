// Checks of the chunked forms' derivations (docs/CHUNKED.md), in the ledger's
// form (a ClaimDef with a verdict, evidence at 128 and 256 bits), kept apart from
// the paper's claims (all_claims(): the 17 claims of the paper, in its order).
#pragma once

#include "vla/claims/claim.hpp"

namespace vla::claims {

// chunked-scan-derivation (docs/CHUNKED.md, section 8): "A_t depends on the
// carried A_c only through M_c = lambda0 I + sum_{s<c} u_s u_s^T; the
// chunk-parallel gate equals the recurrence's", checked at 128 and 256 bits.
ClaimDef claim_chunked_scan_derivation();

// chunk-affine-scan (docs/CHUNKED.md, section 2): "a chunk is the affine map
// S -> S P + Q; the maps compose associatively, so the chunks' states can come
// from a parallel (Blelloch) scan", checked at 128 and 256 bits.
ClaimDef claim_chunk_affine_scan();

}  // namespace vla::claims
