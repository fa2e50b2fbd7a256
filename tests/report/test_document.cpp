// The document model: one number formatter, no number outside a Num.
#include <gtest/gtest.h>

#include "vla/report/document.hpp"

using namespace vla::report;

TEST(Show, FormatsIntegersFixedAndScientific) {
  EXPECT_EQ(show({65536}), "65536");
  EXPECT_EQ(show({0.012345, 3}), "0.0123");
  EXPECT_EQ(show({12.0049, 3}), "12");
  EXPECT_EQ(show({1.5e-7, 3}), "1.5e-07");
  EXPECT_EQ(show({3.2e32, 2}), "3.2e+32");
  EXPECT_EQ(show({2.5, 3, "s"}), "2.5 s");
  EXPECT_EQ(show({std::nan(""), 3}), "NaN");
}

TEST(NoFreeNumber, AllowsIdentifiersRejectsLiterals) {
  EXPECT_NO_THROW(require_no_free_number("fp32 and bf16 at d_h, S_t, J_1, lambda0", "t"));
  EXPECT_THROW(require_no_free_number("T = 1000", "t"), std::logic_error);
  EXPECT_THROW(require_no_free_number("about 1e32", "t"), std::logic_error);
  EXPECT_THROW(require_no_free_number("(3)", "t"), std::logic_error);
  EXPECT_THROW(para("after 25 steps"), std::logic_error);
  EXPECT_THROW(para("value {x}"), std::logic_error);  // unresolved placeholder
  EXPECT_EQ(fill(para("after {n} steps", {{"n", Num{25}}})), "after 25 steps");
}
