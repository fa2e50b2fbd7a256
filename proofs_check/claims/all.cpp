// The ledger's claims, in the order of the paper (ids are fixed: tools and
// reports refer to them). Each check lives in its own file in this folder.
#include "vla/claims/claim.hpp"

namespace vla::claims {

ClaimDef claim_la_norm_growth();
ClaimDef claim_sherman_morrison_exact();
ClaimDef claim_penalty_contracts_written();
ClaimDef claim_recursion_is_argmin();
ClaimDef claim_overhead_5x();
ClaimDef claim_prop1_bounded_state();
ClaimDef claim_prop2_unit_jacobian();
ClaimDef claim_gradient_flow_stable();
ClaimDef claim_unnormalized_growth();
ClaimDef claim_capacity_exact_recall();
ClaimDef claim_state_norm_ratio();
ClaimDef claim_recall_n24_d32();
ClaimDef claim_long_context_retention();
ClaimDef claim_overload_graceful();
ClaimDef claim_constant_memory();
ClaimDef claim_fused_kernel_14x();
ClaimDef claim_softmax_crossover_43k();

const std::vector<ClaimDef>& all_claims() {
  static const std::vector<ClaimDef> all = {
      claim_la_norm_growth(),        claim_sherman_morrison_exact(), claim_penalty_contracts_written(),
      claim_recursion_is_argmin(),   claim_overhead_5x(),            claim_prop1_bounded_state(),
      claim_prop2_unit_jacobian(),   claim_gradient_flow_stable(),   claim_unnormalized_growth(),
      claim_capacity_exact_recall(),
      claim_state_norm_ratio(),      claim_recall_n24_d32(),         claim_long_context_retention(),
      claim_overload_graceful(),     claim_constant_memory(),        claim_fused_kernel_14x(),
      claim_softmax_crossover_43k(),
  };
  return all;
}

}  // namespace vla::claims
