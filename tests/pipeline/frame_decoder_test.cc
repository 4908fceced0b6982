// Tests for FrameDecoder: RFC 6587 framings, detection, chunking invariance, limits, recovery.
#include "pipeline/frame_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {
namespace {

using Opts = FrameDecoder::Options;

struct Decoded {
  std::vector<std::string> messages;
  FrameDecoder::Counters counters;
  std::size_t max_buffered = 0;
};

bool operator==(const FrameDecoder::Counters& a, const FrameDecoder::Counters& b) {
  return a.messages == b.messages && a.truncated == b.truncated &&
         a.framing_errors == b.framing_errors && a.partial_at_close == b.partial_at_close;
}

// Feeds `stream` cut at `cuts` (sorted offsets), then Finish(). Each chunk is copied into its
// own buffer which is overwritten right after Feed returns, so any view that wrongly outlives
// its chunk shows up as corrupted messages.
Decoded DecodeChunks(const Opts& opts, std::string_view stream, const std::vector<size_t>& cuts,
                     bool finish = true) {
  FrameDecoder dec(opts);
  Decoded out;
  std::string chunk;
  size_t prev = 0;
  auto feed = [&](size_t end) {
    chunk.assign(stream.substr(prev, end - prev));
    for (std::string_view m : dec.Feed(chunk)) out.messages.emplace_back(m);
    std::fill(chunk.begin(), chunk.end(), '#');
    out.max_buffered = std::max(out.max_buffered, dec.buffered_bytes());
    prev = end;
  };
  for (size_t c : cuts) feed(c);
  feed(stream.size());
  if (finish) {
    for (std::string_view m : dec.Finish()) out.messages.emplace_back(m);
  }
  out.counters = dec.counters();
  return out;
}

Decoded Decode(const Opts& opts, std::string_view stream) { return DecodeChunks(opts, stream, {}); }

std::vector<std::string> V(std::initializer_list<const char*> items) {
  return std::vector<std::string>(items.begin(), items.end());
}

// Asserts that every way of cutting `stream` we try yields the same result as one chunk.
void ExpectChunkingInvariant(const Opts& opts, std::string_view stream) {
  const Decoded whole = Decode(opts, stream);
  {
    std::vector<size_t> every;
    for (size_t i = 1; i < stream.size(); ++i) every.push_back(i);
    const Decoded bytewise = DecodeChunks(opts, stream, every);
    EXPECT_EQ(bytewise.messages, whole.messages) << "byte by byte";
    EXPECT_TRUE(bytewise.counters == whole.counters) << "byte by byte";
  }
  for (size_t i = 1; i < stream.size(); ++i) {
    const Decoded split = DecodeChunks(opts, stream, {i});
    ASSERT_EQ(split.messages, whole.messages) << "split at " << i;
    ASSERT_TRUE(split.counters == whole.counters) << "split at " << i;
  }
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::vector<size_t> cuts;
    size_t at = 0;
    while (true) {
      at += 1 + rng() % 17;
      if (at >= stream.size()) break;
      cuts.push_back(at);
    }
    const Decoded random = DecodeChunks(opts, stream, cuts);
    ASSERT_EQ(random.messages, whole.messages) << "random round " << round;
    ASSERT_TRUE(random.counters == whole.counters) << "random round " << round;
  }
}

TEST(FramingNames, RoundTrip) {
  for (Framing f : {Framing::kAuto, Framing::kOctetCounted, Framing::kNewline}) {
    EXPECT_EQ(ParseFraming(FramingName(f)), f);
  }
  EXPECT_FALSE(ParseFraming("lf").has_value());
}

TEST(FrameDecoder, NewlineFraming) {
  const Decoded d = Decode({.framing = Framing::kNewline}, "<13>one\n<13>two\n");
  EXPECT_EQ(d.messages, V({"<13>one", "<13>two"}));
  EXPECT_EQ(d.counters.messages, 2u);
  EXPECT_EQ(d.counters.framing_errors, 0u);
}

TEST(FrameDecoder, NewlineModeNeverReadsLengthPrefixes) {
  const Decoded d = Decode({.framing = Framing::kNewline}, "5 hello\n12 x\n");
  EXPECT_EQ(d.messages, V({"5 hello", "12 x"}));
  EXPECT_EQ(d.counters.framing_errors, 0u);
}

TEST(FrameDecoder, OctetCounting) {
  const Decoded d = Decode({.framing = Framing::kOctetCounted}, "5 hello11 <13>a\nb c d");
  // The LF inside a counted frame is message content, not a terminator.
  EXPECT_EQ(d.messages, V({"hello", "<13>a\nb c d"}));
  EXPECT_EQ(d.counters.messages, 2u);
  EXPECT_EQ(d.counters.framing_errors, 0u);
  EXPECT_EQ(d.counters.partial_at_close, 0u);
}

TEST(FrameDecoder, OctetCountingToleratesLfBetweenFrames) {
  const Decoded d = Decode({.framing = Framing::kOctetCounted}, "3 abc\n3 def\r\n3 ghi");
  EXPECT_EQ(d.messages, V({"abc", "def", "ghi"}));
  EXPECT_EQ(d.counters.framing_errors, 0u);
}

TEST(FrameDecoder, AutoDecidesPerConnection) {
  // A newline connection stays one: a later line starting with "LEN SP" is a line.
  const Decoded lines = Decode({}, "<13>first\n5 <14>second\r\n3 abc<15>third\n");
  EXPECT_EQ(lines.messages, V({"<13>first", "5 <14>second", "3 abc<15>third"}));
  EXPECT_EQ(lines.counters.framing_errors, 0u);
  // An octet-counted connection stays one while its frames validate.
  const Decoded octets = Decode({}, "9 <13>first10 <14>second\n9 <15>third\n");
  EXPECT_EQ(octets.messages, V({"<13>first", "<14>second", "<15>third"}));
  EXPECT_EQ(octets.counters.framing_errors, 0u);
}

// Issue #21: "42 items processed" read as a 42-byte frame swallowed the next message and
// corrupted the one after, and counted nothing.
TEST(FrameDecoder, AutoLineStartingWithDigitsIsALineAndCounted) {
  const std::string stream = "42 items processed\n<13>second message\n<13>third message\n";
  const Decoded d = Decode({}, stream);
  EXPECT_EQ(d.messages, V({"42 items processed", "<13>second message", "<13>third message"}));
  EXPECT_EQ(d.counters.framing_errors, 1u);
  ExpectChunkingInvariant({}, stream);

  // Later in an octet-counted connection: that frame and the rest are read as lines.
  const Decoded late = Decode({}, "9 <13>first42 items processed\n<13>x\n");
  EXPECT_EQ(late.messages, V({"<13>first", "42 items processed", "<13>x"}));
  EXPECT_EQ(late.counters.framing_errors, 1u);
  ExpectChunkingInvariant({}, "9 <13>first42 items processed\n<13>x\n");
}

TEST(FrameDecoder, NulLfAndCrlfTerminatorsByDefault) {
  // Python's SysLogHandler over TCP ends each record with a NUL.
  const Decoded d = Decode({}, std::string("<132>a\0<132>b\0<132>c\n<132>d\r\n", 30));
  EXPECT_EQ(d.messages, V({"<132>a", "<132>b", "<132>c", "<132>d"}));
  EXPECT_EQ(d.counters.framing_errors, 0u);
}

TEST(FrameDecoder, AutoFirstFrameOctet) {
  const Decoded d = Decode({}, "17 <13>Oct 1 host x");
  EXPECT_EQ(d.messages, V({"<13>Oct 1 host x"}));
}

TEST(FrameDecoder, OctetModeFallsBackToNewlineForFrameWithoutHeader) {
  const Decoded d = Decode({.framing = Framing::kOctetCounted}, "<13>plain line\n5 hello");
  EXPECT_EQ(d.messages, V({"<13>plain line", "hello"}));
  EXPECT_EQ(d.counters.framing_errors, 1u);
}

TEST(FrameDecoder, WrongOctetCountsResyncAtNextNewline) {
  const Opts opts{.framing = Framing::kOctetCounted, .max_message_size = 100};
  // Non-digit inside the length, missing space, absurd length (> 10x max), leading zero.
  const Decoded d = Decode(opts, "12abc def\n5hello\n99999 x\n0 zero\n3 abc");
  EXPECT_EQ(d.messages, V({"12abc def", "5hello", "99999 x", "0 zero", "abc"}));
  EXPECT_EQ(d.counters.framing_errors, 4u);
  EXPECT_EQ(d.counters.messages, 5u);
}

TEST(FrameDecoder, AbsurdLengthDetectedWithoutReadingAllDigits) {
  const Opts opts{.max_message_size = 10};
  const std::string digits(5000, '9');
  const Decoded d = Decode(opts, digits + "\n2 ok");
  ASSERT_EQ(d.messages.size(), 2u);
  EXPECT_EQ(d.messages[0], std::string(10, '9'));  // fallback line, truncated to max
  EXPECT_EQ(d.messages[1], "2 ok");                // the connection now reads lines
  EXPECT_EQ(d.counters.framing_errors, 1u);
  EXPECT_EQ(d.counters.truncated, 1u);
}

TEST(FrameDecoder, LengthUpTo10xMaxIsTruncatedNotAnError) {
  const Opts opts{.octet_content_start = 0, .max_message_size = 10};
  const Decoded d = Decode(opts, "16 0123456789ABCDEF3 abc");
  EXPECT_EQ(d.messages, V({"0123456789", "abc"}));
  EXPECT_EQ(d.counters.truncated, 1u);
  EXPECT_EQ(d.counters.framing_errors, 0u);
}

// Found by tests/fuzz/frame_decoder_fuzz: a length prefix with more digits than
// max_message_size, split across chunks, was buffered whole (buffered_bytes() > max).
TEST(FrameDecoder, LengthPrefixLongerThanMaxBuffersAtMostMax) {
  for (const char* stream : {"123", "10", "1234 abc\nx"}) {
    for (std::size_t max : {1, 2, 3}) {
      const Opts opts{.max_message_size = max};
      std::vector<size_t> every;
      for (size_t i = 1; i < std::string_view(stream).size(); ++i) every.push_back(i);
      const Decoded bytewise = DecodeChunks(opts, stream, every);
      EXPECT_LE(bytewise.max_buffered, max) << stream << " max " << max;
      const Decoded whole = Decode(opts, stream);
      EXPECT_EQ(bytewise.messages, whole.messages) << stream << " max " << max;
      EXPECT_TRUE(bytewise.counters == whole.counters) << stream << " max " << max;
    }
  }
  // "10" is a valid prefix for max 1 (up to 10x max is believed): at close it is a partial
  // frame of two digits, delivered cut to one and counted as truncated.
  const Decoded d = DecodeChunks({.max_message_size = 1}, "10", {1});
  EXPECT_EQ(d.messages, V({"1"}));
  EXPECT_EQ(d.counters.partial_at_close, 1u);
  EXPECT_EQ(d.counters.truncated, 1u);
  EXPECT_LE(d.max_buffered, 1u);
}

TEST(FrameDecoder, OversizedNewlineFrameTruncated) {
  const Opts opts{.framing = Framing::kNewline, .max_message_size = 10};
  const Decoded d = Decode(opts, "0123456789ABCDEF\nok\n0123456789\n");
  EXPECT_EQ(d.messages, V({"0123456789", "ok", "0123456789"}));
  EXPECT_EQ(d.counters.truncated, 1u);
}

TEST(FrameDecoder, CrJustBeyondMaxIsStrippedNotTruncated) {
  const Opts opts{.framing = Framing::kNewline, .max_message_size = 3};
  const std::string stream = "abc\r\nabcd\r\n";
  const Decoded d = Decode(opts, stream);
  EXPECT_EQ(d.messages, V({"abc", "abc"}));
  EXPECT_EQ(d.counters.truncated, 1u);
  ExpectChunkingInvariant(opts, stream);
}

TEST(FrameDecoder, CrLf) {
  const Decoded d = Decode({.framing = Framing::kNewline}, "a\r\nb\r\nmid\rdle\n\r\n");
  EXPECT_EQ(d.messages, V({"a", "b", "mid\rdle"}));
}

TEST(FrameDecoder, EmptyFramesSkipped) {
  const Decoded d = Decode({}, "\n\n\r\n\n<13>x\n\n");
  EXPECT_EQ(d.messages, V({"<13>x"}));
  EXPECT_EQ(d.counters.messages, 1u);
  EXPECT_EQ(d.counters.framing_errors, 0u);
}

TEST(FrameDecoder, NulTerminator) {
  const std::string stream("a\0b\nc\0\0d", 8);
  const Decoded with_nul = Decode({.nul_terminator = true}, stream);
  EXPECT_EQ(with_nul.messages, V({"a", "b", "c", "d"}));
  const Decoded without = Decode({.nul_terminator = false}, stream);
  ASSERT_EQ(without.messages.size(), 2u);
  EXPECT_EQ(without.messages[0], std::string("a\0b", 3));
  EXPECT_EQ(without.messages[1], std::string("c\0\0d", 4));
  ExpectChunkingInvariant({.nul_terminator = true}, stream);
}

TEST(FrameDecoder, FinishYieldsUnterminatedNewlineFrame) {
  const Decoded d = Decode({}, "<13>a\n<13>tail");
  EXPECT_EQ(d.messages, V({"<13>a", "<13>tail"}));
  EXPECT_EQ(d.counters.partial_at_close, 0u);
}

TEST(FrameDecoder, FinishDeliversIncompleteOctetFrameAsPartial) {
  const Opts any{.octet_content_start = 0};
  const Decoded d = Decode(any, "5 hello10 abc");
  EXPECT_EQ(d.messages, V({"hello", "abc"}));
  EXPECT_EQ(d.counters.partial_at_close, 1u);
  EXPECT_EQ(d.counters.messages, 2u);

  const Decoded bare = Decode(any, "3 abc12");
  EXPECT_EQ(bare.messages, V({"abc", "12"}));
  EXPECT_EQ(bare.counters.partial_at_close, 1u);

  const Decoded no_body = Decode(any, "3 abc12 ");
  EXPECT_EQ(no_body.messages, V({"abc"}));
  EXPECT_EQ(no_body.counters.partial_at_close, 1u);

  // The same with the content check pending: nothing received after "LEN SP".
  const Decoded unchecked = Decode({}, "6 <13>ab12 ");
  EXPECT_EQ(unchecked.messages, V({"<13>ab"}));
  EXPECT_EQ(unchecked.counters.partial_at_close, 1u);
  EXPECT_EQ(unchecked.counters.framing_errors, 0u);
}

TEST(FrameDecoder, FinishResetsToFrameBoundary) {
  FrameDecoder dec;
  std::string a = "10 abc";
  EXPECT_TRUE(dec.Feed(a).empty());
  EXPECT_FALSE(dec.at_frame_boundary());
  EXPECT_EQ(dec.Finish().size(), 1u);
  EXPECT_TRUE(dec.at_frame_boundary());
  std::string b = "<1>x\n";
  auto msgs = dec.Feed(b);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0], "<1>x");
}

TEST(FrameDecoder, ResetDropsPartialFrame) {
  FrameDecoder dec;
  std::string a = "<13>half";
  dec.Feed(a);
  dec.Reset();
  std::string b = "<13>new\n";
  auto msgs = dec.Feed(b);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0], "<13>new");
}

TEST(FrameDecoder, ZeroCopyForFramesInsideChunk) {
  FrameDecoder dec;
  const std::string chunk = "6 <13>ab6 <13>cd6 <13>ef";
  auto msgs = dec.Feed(chunk);
  ASSERT_EQ(msgs.size(), 3u);
  for (std::string_view m : msgs) {
    EXPECT_GE(m.data(), chunk.data());
    EXPECT_LE(m.data() + m.size(), chunk.data() + chunk.size());
  }
  EXPECT_EQ(dec.buffered_bytes(), 0u);
}

TEST(FrameDecoder, SplitFrameViewSurvivesNewPartialInSameChunk) {
  FrameDecoder dec;
  std::string first = "<13>hel";
  EXPECT_TRUE(dec.Feed(first).empty());
  std::string second = "lo\n<13>wor";
  auto msgs = dec.Feed(second);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0], "<13>hello");  // assembled, while "<13>wor" went to the partial buffer
  std::string third = "ld\n";
  auto more = dec.Feed(third);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0], "<13>world");
}

TEST(FrameDecoder, CallbackForm) {
  FrameDecoder dec;
  std::vector<std::string> got;
  dec.Feed(std::string_view("<1>a\n<1>x\n<1>y"), [&](std::string_view m) { got.emplace_back(m); });
  dec.Finish([&](std::string_view m) { got.emplace_back(m); });
  EXPECT_EQ(got, V({"<1>a", "<1>x", "<1>y"}));
}

std::string SampleStream() {
  std::string s;
  s += "<13>newline one\n";
  s += "\n";
  s += "21 <14>octet counted one";
  s += "<15>crlf line\r\n";
  s += "6 a\nb\r\nc";                                  // LF/CR inside a counted frame are content
  s += "\n";                                           // stray LF between counted frames
  s += "40 0123456789012345678901234567890123456789";  // truncated to max 32
  s += "12abc bad header\n";                           // framing error, resync at LF
  s += "999999 absurd\n";                              // > 10x max: framing error
  s += std::string(50, 'L') + "\n";                    // truncated newline frame
  s += std::string("<13>with\0nul\n", 13);
  s += "3 end";
  s += "<13>unterminated tail";
  return s;
}

TEST(FrameDecoder, SampleStreamExpectedMessages) {
  // Forced octet counting reads the mixed stream frame by frame (auto would settle on one
  // framing for the connection at its first frame).
  const Opts opts{
      .framing = Framing::kOctetCounted, .nul_terminator = false, .max_message_size = 32};
  const Decoded d = Decode(opts, SampleStream());
  std::vector<std::string> want = {"<13>newline one",
                                   "<14>octet counted one",
                                   "<15>crlf line",
                                   "a\nb\r\nc",
                                   "01234567890123456789012345678901",
                                   "12abc bad header",
                                   "999999 absurd",
                                   std::string(32, 'L'),
                                   std::string("<13>with\0nul", 12),
                                   "end",
                                   "<13>unterminated tail"};
  EXPECT_EQ(d.messages, want);
  EXPECT_EQ(d.counters.messages, want.size());
  EXPECT_EQ(d.counters.truncated, 2u);
  // The two bad headers and the five frames that have none.
  EXPECT_EQ(d.counters.framing_errors, 7u);
  EXPECT_EQ(d.counters.partial_at_close, 0u);
}

TEST(FrameDecoder, EveryChunkingGivesSameMessages) {
  const std::string stream = SampleStream();
  ExpectChunkingInvariant({.max_message_size = 32}, stream);
  ExpectChunkingInvariant({.nul_terminator = true, .max_message_size = 32}, stream);
  ExpectChunkingInvariant({.framing = Framing::kNewline, .max_message_size = 32}, stream);
  ExpectChunkingInvariant({.framing = Framing::kOctetCounted, .max_message_size = 32}, stream);
  // Ending inside a counted frame: the partial-at-close path must not depend on chunking.
  ExpectChunkingInvariant({.max_message_size = 32}, stream + "30 cut short");
  ExpectChunkingInvariant({.max_message_size = 32}, stream + "300 cut short");
}

TEST(FrameDecoder, BinaryGarbageIsBoundedAndChunkingInvariant) {
  std::mt19937 rng(7);
  std::string garbage(4000, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() & 0xff);
  for (Framing f : {Framing::kAuto, Framing::kOctetCounted, Framing::kNewline}) {
    const Opts opts{.framing = f, .nul_terminator = true, .max_message_size = 64};
    const Decoded d = Decode(opts, garbage);
    for (const std::string& m : d.messages) EXPECT_LE(m.size(), 64u);
    EXPECT_EQ(d.counters.messages, d.messages.size());
    std::vector<size_t> cuts;
    for (size_t i = 3; i < garbage.size(); i += 1 + rng() % 100) cuts.push_back(i);
    const Decoded chunked = DecodeChunks(opts, garbage, cuts);
    EXPECT_EQ(chunked.messages, d.messages) << FramingName(f);
    EXPECT_TRUE(chunked.counters == d.counters) << FramingName(f);
    EXPECT_LE(chunked.max_buffered, 64u);
  }
}

TEST(FrameDecoder, OneMebibyteFrameInBothModes) {
  std::mt19937 rng(99);
  std::string payload(1 << 20, 'x');
  for (char& c : payload) c = static_cast<char>('a' + rng() % 26);
  const Opts opts{.octet_content_start = 0, .max_message_size = 2 << 20};
  for (const std::string& stream :
       {std::to_string(payload.size()) + " " + payload + "2 ok", payload + "\n2 ok"}) {
    const bool octets = stream[0] != payload[0];
    std::vector<size_t> cuts;
    for (size_t at = 1 + rng() % 70000; at < stream.size(); at += 1 + rng() % 70000) {
      cuts.push_back(at);
    }
    const Decoded d = DecodeChunks(opts, stream, cuts);
    ASSERT_EQ(d.messages.size(), 2u);
    EXPECT_TRUE(d.messages[0] == payload);
    EXPECT_EQ(d.messages[1], octets ? "ok" : "2 ok");
    EXPECT_EQ(d.counters.truncated, 0u);
  }
}

TEST(FrameDecoder, OversizedOctetFrameSkippedWithoutBuffering) {
  const size_t max = 1024;
  FrameDecoder dec({.octet_content_start = 0, .max_message_size = max});
  const size_t len = 9 * max;
  std::string header = std::to_string(len) + " ";
  EXPECT_TRUE(dec.Feed(header).empty());
  std::string chunk(100, 'z');
  size_t fed = 0;
  while (fed + chunk.size() < len) {
    EXPECT_TRUE(dec.Feed(chunk).empty());
    EXPECT_LE(dec.buffered_bytes(), max);
    fed += chunk.size();
  }
  std::string rest(len - fed, 'z');
  rest += "2 ok";
  auto msgs = dec.Feed(rest);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0], std::string(max, 'z'));
  EXPECT_EQ(msgs[1], "ok");
  EXPECT_EQ(dec.counters().truncated, 1u);
}

TEST(FrameDecoder, GibibyteNewlineFrameKeepsMemoryBounded) {
  const size_t max = 4096;
  FrameDecoder dec({.framing = Framing::kNewline, .max_message_size = max});
  const std::string chunk(64 * 1024, 'g');
  const size_t total = size_t{1} << 30;
  size_t max_buffered = 0;
  for (size_t fed = 0; fed < total; fed += chunk.size()) {
    EXPECT_TRUE(dec.Feed(chunk).empty());
    max_buffered = std::max(max_buffered, dec.buffered_bytes());
  }
  EXPECT_LE(max_buffered, max);
  std::string end = "\nnext\n";
  auto msgs = dec.Feed(end);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0], std::string(max, 'g'));
  EXPECT_EQ(msgs[1], "next");
  EXPECT_EQ(dec.counters().truncated, 1u);
}

TEST(FrameDecoder, OversizedPartialAtCloseCountsTruncation) {
  const Decoded d = Decode({.octet_content_start = 0, .max_message_size = 4}, "20 abcdefgh");
  EXPECT_EQ(d.messages, V({"abcd"}));
  EXPECT_EQ(d.counters.partial_at_close, 1u);
  EXPECT_EQ(d.counters.truncated, 1u);
}

}  // namespace
}  // namespace logfold
