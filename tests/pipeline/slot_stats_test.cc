// SlotStats tests: exact counts while values fit, space-saving bounds once they do not,
// distinct estimates, truncation of long values.
#include "pipeline/slot_stats.h"

#include <gtest/gtest.h>

#include <string>

namespace logfold {
namespace {

std::uint64_t H(const std::string& s) { return std::hash<std::string>{}(s)*0x9E3779B97F4A7C15ULL; }

TEST(SlotStatsTest, CountsFewValuesExactly) {
  SlotStats st(3);
  for (int i = 0; i < 80; ++i) st.Add(H("200"), "200");
  for (int i = 0; i < 15; ++i) st.Add(H("500"), "500");
  st.Add(H("404"), "404", 5);
  std::array<SlotStats::Value, SlotStats::kTop> top;
  ASSERT_EQ(st.Sorted(top), 3u);
  EXPECT_EQ(top[0].view(), "200");
  EXPECT_EQ(top[0].count, 80u);
  EXPECT_EQ(top[1].view(), "500");
  EXPECT_EQ(top[1].count, 15u);
  EXPECT_EQ(top[2].count, 5u);
  EXPECT_EQ(st.total(), 100u);
  EXPECT_EQ(st.Distinct(), 3u);
  EXPECT_EQ(st.position(), 3u);
}

TEST(SlotStatsTest, ManyValuesKeepTheFrequentOnesAndEstimateDistinct) {
  SlotStats st;
  for (int i = 0; i < 300; ++i) {
    st.Add(H("hot"), "hot");
    const std::string v = "v" + std::to_string(i);
    st.Add(H(v), v);
  }
  std::array<SlotStats::Value, SlotStats::kTop> top;
  ASSERT_EQ(st.Sorted(top), SlotStats::kTop);
  EXPECT_EQ(top[0].view(), "hot");
  EXPECT_GE(top[0].count, 300u);  // never an underestimate
  EXPECT_EQ(st.total(), 600u);
  EXPECT_NEAR(static_cast<double>(st.Distinct()), 301.0, 301.0 * 0.15);
}

TEST(SlotStatsTest, LongValuesAreTruncated) {
  SlotStats st;
  const std::string v(100, 'x');
  st.Add(H(v), v);
  std::array<SlotStats::Value, SlotStats::kTop> top;
  ASSERT_EQ(st.Sorted(top), 1u);
  EXPECT_EQ(top[0].view(), std::string(SlotStats::kValueBytes, 'x'));
}

}  // namespace
}  // namespace logfold
