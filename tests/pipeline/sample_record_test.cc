// SampleRecord and GroupTokens tests: the compact group storage gives back exactly what was
// put in (every field, empty and long ones, reuse of a block for a shorter or longer line).
#include "pipeline/sample_record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/group_tokens.h"
#include "pipeline/log_record.h"
#include "pipeline/tokenizer.h"

namespace logfold {
namespace {

LogRecord FullRecord(std::string message) {
  LogRecord r;
  r.raw = "<38>1 2024-03-01T00:00:00Z web01 sshd 123 ID7 [a b=\"c\"] " + message;
  r.flavor = SyslogFlavor::kRfc5424;
  r.outcome = ParseOutcome::kBadStructuredData;
  r.facility = 4;
  r.severity = 6;
  r.has_timestamp = true;
  r.timestamp_us = 1'709'251'200'000'000;
  r.arrival_us = 1'709'251'200'250'000;
  r.hostname = "web01";
  r.app_name = "sshd";
  r.tag = "sshd/auth";
  r.procid = "123";
  r.msgid = "ID7";
  r.structured_data = "[a b=\"c\"]";
  r.message = std::move(message);
  r.json_fields = "{\"k\":1}";
  return r;
}

void ExpectSameButRaw(const LogRecord& a, const LogRecord& b) {
  EXPECT_EQ(b.raw, "");
  EXPECT_EQ(a.flavor, b.flavor);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.facility, b.facility);
  EXPECT_EQ(a.severity, b.severity);
  EXPECT_EQ(a.has_timestamp, b.has_timestamp);
  EXPECT_EQ(a.timestamp_us, b.timestamp_us);
  EXPECT_EQ(a.arrival_us, b.arrival_us);
  EXPECT_EQ(a.hostname, b.hostname);
  EXPECT_EQ(a.app_name, b.app_name);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.procid, b.procid);
  EXPECT_EQ(a.msgid, b.msgid);
  EXPECT_EQ(a.structured_data, b.structured_data);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.json_fields, b.json_fields);
}

TEST(SampleRecordTest, EmptyUntilAssigned) {
  SampleRecord s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.MemoryUsage(), 0u);
  LogRecord out = FullRecord("x");
  s.CopyTo(out);
  ExpectSameButRaw(LogRecord{}, out);
}

TEST(SampleRecordTest, RoundTripsEveryFieldButRaw) {
  const LogRecord r = FullRecord("Failed password for root from 10.0.0.1 port 22");
  SampleRecord s;
  s.Assign(r);
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(s.message(), r.message);
  EXPECT_EQ(s.hostname(), "web01");
  EXPECT_EQ(s.EventTime(), r.timestamp_us);
  EXPECT_EQ(s.TextBytes(), 5u + 4 + 9 + 3 + 3 + 9 + r.message.size() + 7);
  LogRecord out;
  s.CopyTo(out);
  ExpectSameButRaw(r, out);
}

TEST(SampleRecordTest, ReusesItsBlockAndGrowsWhenNeeded) {
  SampleRecord s;
  s.Assign(FullRecord(std::string(1000, 'a')));
  const std::size_t big = s.MemoryUsage();
  LogRecord shorter = FullRecord("short");
  shorter.has_timestamp = false;
  shorter.hostname.clear();  // empty fields between others
  shorter.json_fields.clear();
  s.Assign(shorter);
  EXPECT_EQ(s.MemoryUsage(), big);  // kept: the next latest line may be long again
  EXPECT_EQ(s.EventTime(), shorter.arrival_us);
  LogRecord out;
  s.CopyTo(out);
  ExpectSameButRaw(shorter, out);
  const LogRecord longer = FullRecord(std::string(5000, 'b'));
  s.Assign(longer);
  EXPECT_GT(s.MemoryUsage(), big);
  s.CopyTo(out);
  ExpectSameButRaw(longer, out);
  s.Reset();
  EXPECT_TRUE(s.empty());
}

TEST(SampleRecordTest, TightAssignDropsABlockFarLargerThanTheText) {
  SampleRecord s;
  s.Assign(FullRecord(std::string(2000, 'a')));
  const std::size_t big = s.MemoryUsage();
  s.Assign(FullRecord(std::string(1900, 'b')), /*tight=*/true);
  EXPECT_EQ(s.MemoryUsage(), big);  // near the block's size: kept
  const LogRecord shorter = FullRecord("short");
  s.Assign(shorter, /*tight=*/true);
  EXPECT_LT(s.MemoryUsage(), big / 4);
  LogRecord out;
  s.CopyTo(out);
  ExpectSameButRaw(shorter, out);
}

TEST(GroupTokensTest, KeepsTokensHashesAndFlagsPerPosition) {
  const std::vector<Token> tokens = {{0, 6, TokenClass::kWord},
                                     {7, 33'554'431, TokenClass::kDigitWord},  // 2^25 - 1
                                     {4'000'000'000u, 1, TokenClass::kIPv6}};
  const std::vector<std::uint64_t> hashes = {1, ~std::uint64_t{0}, 0x0123456789abcdefULL};
  GroupTokens g;
  EXPECT_EQ(g.size(), 0u);
  g.Assign(tokens, hashes);
  ASSERT_EQ(g.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(g.token(i).offset, tokens[i].offset);
    EXPECT_EQ(g.token(i).length, tokens[i].length);
    EXPECT_EQ(g.token(i).cls, tokens[i].cls);
    EXPECT_EQ(g.cls(i), tokens[i].cls);
    EXPECT_EQ(g.hash(i), hashes[i]);
    EXPECT_EQ(g.flags(i), 0);
  }
  g.AddFlags(1, 1);
  g.AddFlags(1, 4);
  g.AddFlags(2, 2);
  EXPECT_EQ(g.flags(0), 0);
  EXPECT_EQ(g.flags(1), 5);
  EXPECT_EQ(g.flags(2), 2);
  EXPECT_EQ(g.token(1).length, tokens[1].length);  // flags leave length and class alone
  EXPECT_EQ(g.cls(1), TokenClass::kDigitWord);
  // Reassigned with fewer tokens: flags start clear again.
  g.Assign(std::vector<Token>{{0, 3, TokenClass::kInteger}}, std::vector<std::uint64_t>{9});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g.flags(0), 0);
  EXPECT_EQ(g.hash(0), 9u);
  EXPECT_EQ(g.hashes().size(), 1u);
}

}  // namespace
}  // namespace logfold
