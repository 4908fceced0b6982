// MessageHeader: finds the application's own header at the start of a message (timestamp,
// level, thread, logger) so it stays out of the fingerprint and template. No format list.
#ifndef LOGFOLD_PIPELINE_MESSAGE_HEADER_H_
#define LOGFOLD_PIPELINE_MESSAGE_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace logfold {

struct MessageHeader {
  // Where the message proper starts; 0 when the line has no header.
  std::uint32_t body = 0;
  std::string_view level;   // the level word as written ("INFO", "notice", "W"), or empty
  std::string_view logger;  // the logger, tag or program as written, or empty
  // The message is a double-quoted value (logfmt's msg="..."), its own quotes escaped (\");
  // `body` is its first word, after the blanks the value may open with.
  bool quoted = false;
  // Bytes at the line's end that are header too: the logger log4j's "%m (%c)" writes after the
  // message (" (kafka.server.ReplicaManager)"), when the header has a level. 0: none.
  std::uint8_t tail = 0;
};

// Headers longer than this are not looked for: a header is a short prefix.
inline constexpr std::size_t kMaxHeaderBytes = 384;

// The rule, for any log: a line's header is its leading run of fields that logging libraries
// write before the message (time fields: numbers, dates, times, month and weekday names, the
// kernel's "[  12.345678]", a bracket of them where a date may hold a month's name between
// date separators ("[28/Nov/2026:00:29:11 +0000]"); up to three names or dashes before a
// bracketed date or time, an access log's host, identity and user; one level: a level word,
// in capitals with a verbosity digit ("VERBOSE1"), or a level letter alone, fused with a date
// ("I0509") or with a tag ("D/Tag( 12):"); bracketed fields such as a thread; a caller such
// as "run.go:42" in braces, in a tab-separated column or before a separator (bare, it may be
// a host and port opening the message); at most two or three names such as a host and a
// program, but not a peer's endpoint right after the time fields, an address or a host's name
// in lower case with its port, which opens the message: a program writes its own host without
// a port), holding a time of day, a date or a level, and ending at a name followed by ':' (or
// ']', or a lone " : "; not when one word follows it, unless the name stands right after the
// level or carries a pid; not after a caller, which already says where the line comes from;
// not when it is a word of lower-case letters right after a bracketed level, "[notice]
// statement: ...", or right after time fields alone, "2026/11/28 17:38:55 statement: ..."), and
// then past a bracketed stamp of the program's own ("kernel: [ 12.345678]"); or at a separator (" -
// ", " | ", " -- ", " --- "; after the time fields, unless a level or a logger and another
// separator follow), a level mark alone after the time fields ("*", "#", Redis), a level ending
// with ':' (or, when a program with its pid follows it, the next name ending with ':': "INFO:
// app/4752 on vm:", bunyan), a bracketed field after a logger (and the labelled values in brackets
// after it: "[instance: 7d52...]"), a component in its own column after the level, or else at the
// first plain word that follows the time and level fields. Time fields followed by fields joined by
// '|' without spaces end at the first field holding a space. Leading key=value fields (logfmt)
// whose values are a time, a level or a caller end at the next field's value, the message, or,
// when that field is not the message field (IsMessageKey), at its name: a field of context
// (`component="tsdb" msg="..."`) opens the message. Anything that does not fit leaves the line
// without a header.
// A logger written after the message ("[%d] %p %m (%c)": a qualified name of three or more parts
// in parentheses ending the line), where the header has a level and no logger, is the header's
// (`tail`), and the message then starts right after the level: a bracket or a name with ':' there
// is the message's, unless the bracket is followed by a qualified logger with ':' (a thread and
// a logger: a layout writes one logger).
// A line opening with a tab left its first column empty: a time field right after it is read
// as the fields after a time ("\t\t     8 Connect\t...", MySQL's general log).
MessageHeader ParseMessageHeader(std::string_view line);

// The name structured logs give the field that holds the message (logfmt's and JSON's `msg`,
// `message`): its text is the event's own words, the other fields are its context.
bool IsMessageKey(std::string_view key);

// HeaderLearner: each scope's header, learned from its own lines. The rule, for any log: the
// header shape (the kind the grammar gave each field - time, level, bracket, name, caller,
// separator... - and whether it ends with ':', their count, which holds the level and the
// logger) that leads a scope's recent votes by kConfirmed (a line votes for the shape of a
// header the grammar is sure of - a level word or a terminator - or else for "no header")
// is stripped from the scope's lines that fit it where the grammar finds no header, only
// guesses (time fields and names up to a plain word), or finds one without a level where the
// shape has one (an unknown level word: "2024-05-09 12:34:56 AUDIT [main] Foo: msg"), whether
// or not the line voted; a guess that does not fit it stays the grammar's guess. A logger of
// lower-case letters where the confirmed shape has none is the message's key ("[INFO]
// [thread] statement: ..."): it stays in the message. Every line
// votes until the scope's shape is confirmed, one in kVoteEvery after that. A fixed table of
// kEntries scopes (a scope with a header takes a slot over by outvoting its holder; lines without
// one vote only in their own scope's slot), allocated when the first header is seen. Not
// thread-safe: the merger's thread owns it.
class HeaderLearner {
 public:
  static constexpr std::size_t kEntries = 1024;
  static constexpr std::uint32_t kConfirmed = 4, kMaxConfirm = 64, kVoteEvery = 8;

  // The header of `line`, a line of `scope`, which votes for its shape.
  MessageHeader Parse(std::uint64_t scope, std::string_view line);
  // The same decision without a vote (a group's first line, parsed again for its summary).
  MessageHeader Peek(std::uint64_t scope, std::string_view line) const;
  std::size_t MemoryUsage() const { return entries_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    std::uint64_t scope = 0;
    std::uint64_t shape = 0;  // 0: no header
    std::uint32_t confirm = 0;
  };
  static std::size_t Slot(std::uint64_t scope) { return (scope ^ (scope >> 29)) & (kEntries - 1); }
  static MessageHeader Decide(const Entry& e, std::uint64_t scope, std::string_view line,
                              const MessageHeader& h, bool sure, std::uint64_t shape);
  std::vector<Entry> entries_;
  std::uint32_t votes_skipped_ = 0;
};

// Where the message proper starts when a peer's endpoint opens it at `body` (after blanks): an
// IPv4 address or a host's name with its port, alone or after a name and '/'
// (`127.0.0.1:46810`, `alice/127.0.0.1:46810`, `mtalk.google.com:5228`, `wpad:80`), then a
// blank and a letter. A server writes the peer a line is
// about before the message, on some lines of a format string and not on others (before the
// peer is known, after it left): context, as a bracketed client in a header is, so the
// message starts after it. `body` when the message does not open so.
std::size_t SkipPeerEndpoint(std::string_view line, std::size_t body);

// The syslog severity (0 emerg .. 7 debug) a header's level word stands for, case-insensitive:
// "FATAL", "crit" and "SEVERE" are 2, "E"/"ERROR" 3, "W"/"warn" 4, "notice" 5, "I"/"info" 6,
// "D"/"debug"/"trace"/"fine"/"verbose" 7, with a verbosity digit too ("VERBOSE1", "DEBUG2");
// -1 for anything else (and the empty level).
int LevelSeverity(std::string_view level);

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_MESSAGE_HEADER_H_
