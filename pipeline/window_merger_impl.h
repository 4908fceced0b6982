// WindowMerger's state and its small steps, shared by the files that implement it (private to
// pipeline/): window_merger.cc settles lines and runs group life, window_merger_events.cc
// builds templates, events and slot statistics, window_merger_memory.cc accounts memory,
// window_merger_state.cc exports and imports groups for checkpoints.
#ifndef LOGFOLD_PIPELINE_WINDOW_MERGER_IMPL_H_
#define LOGFOLD_PIPELINE_WINDOW_MERGER_IMPL_H_

// Inlined XXH3: per-token hashes of a few bytes are dominated by the call through the shared
// library's PLT otherwise. Same algorithm and results as libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pipeline/group_index.h"
#include "pipeline/group_tokens.h"
#include "pipeline/message_header.h"
#include "pipeline/sample_record.h"
#include "pipeline/shape_map.h"
#include "pipeline/sibling_table.h"
#include "pipeline/slot_stats.h"
#include "pipeline/template_match.h"
#include "pipeline/window_merger.h"

namespace logfold {
namespace merger_detail {

inline std::uint64_t Mix(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t v[2] = {a, b};
  return XXH3_64bits(v, sizeof v);
}

// A line's scope at a header level (a syslog severity, 0..7): the level separates events, so
// it keys the scope within the merger.
constexpr std::uint64_t kLevelSeed = 0x6c6576656cULL;  // "level"
inline std::uint64_t LevelScope(std::uint64_t scope, int severity) {
  return Mix(scope, kLevelSeed + static_cast<std::uint64_t>(severity));
}

}  // namespace merger_detail

struct WindowMerger::Impl {
  static constexpr std::uint32_t kNil = UINT32_MAX;
  static_assert(kNil == ShapeMap::kAbsent);
  static constexpr std::size_t kMaxAliases = 16;  // shapes remembered per group for the fast path
  // Same-length groups confirmed per line, newest first.
  static constexpr std::size_t kMaxBucketScan = 64;
  static constexpr std::size_t kMaxOtherLengthScan = 16;  // per nearby length
  // Bucket-scan candidates per line over all lengths: bounds the cost of a line that matches
  // nothing (a garbage flood opens a group a line and would touch 64 + 12 x 16 groups).
  static constexpr std::size_t kMaxScanPerLine = 16;
  // SimHash candidates confirmed per line, nearest first: in a cluster of near-duplicates
  // that match none of each other (one long prefix, a unique last word) every open group of
  // the cluster lies within max_distance of a new line, which would confirm them all.
  static constexpr std::size_t kMaxIndexCandidates = 32;
  // A line whose lookup read this many index entries (its block values' runs), and
  // kCrowdedDensity times what a lookup reads where fingerprints are spread evenly, is in a
  // crowd too, even with few candidates within distance (see Open and CrowdedReads).
  static constexpr std::size_t kCrowdedIndexReads = 128;
  static constexpr std::size_t kCrowdedDensity = 4;

  // Per-position flags of a group's template (pipeline/template_match.h).
  static constexpr std::uint8_t kWild = TemplateFlag::kWild;
  static constexpr std::uint8_t kVaried = TemplateFlag::kVaried;
  static constexpr std::uint8_t kGapAfter = TemplateFlag::kGapAfter;
  static constexpr std::size_t kMaxSlots = 8;  // variable slots with statistics per group
  // Word positions of a line that always add sibling evidence when it would open a group
  // (bounds that work); later positions only where a candidate shows a sibling there.
  static constexpr std::size_t kMaxSiblingPositions = 8;

  // What a group rarely needs, allocated only when it does: the hosts seen (only when the
  // scope leaves out the host) and shape keys beyond the first.
  struct GroupExtras {
    std::vector<std::string> hosts;
    std::vector<std::uint64_t> aliases;  // more shape keys in `exact` that point here
    // Values of the template's variable slots, by token position (at most kMaxSlots), over
    // lines of the group's own token count (a line aligned across a gap is not counted).
    std::vector<SlotStats> slots;
    // The peer endpoints that opened the group's lines (SkipPeerEndpoint: context, out of the
    // template), over the lines that had one; made when the group first takes a line and it or
    // its first line had one.
    std::unique_ptr<SlotStats> peer;
    // The group's words key in `exact` (one of `aliases`), 0 until it has one.
    std::uint64_t words_key = 0;
    // Of the first line counted in count_since (its summary's id); only lines that have an
    // origin (a Kafka input's) make a group keep one.
    LineOrigin since_origin;
  };

  // One open group (or a free slot). Kept small: everything of a group but its samples' text
  // and token arrays is here (~150 bytes). What Fits/Confirm read per candidate comes first:
  // the fingerprint, then `tokens` (one block: hashes, tokens, flags) and `first`'s message.
  struct Group {
    std::uint64_t fingerprint = 0;  // as indexed: wild positions left out
    std::uint64_t scope = 0;
    GroupTokens tokens;  // of the first line's message, with the template flags
    SampleRecord first;  // the group's first line
    std::uint64_t id = 0;
    std::uint64_t count_total = 0, count_since = 0;
    TimeUs first_seen = 0, last_seen = 0, last_activity = 0, hold_start = 0;
    std::uint64_t shape = 0;  // the first line's shape key in `exact`
    std::uint32_t lru_prev = kNil, lru_next = kNil, hold_prev = kNil, hold_next = kNil;
    std::int32_t max_distance = 0;
    // Bit fields: a third bool took the group past 136 bytes.
    bool live : 1 = false;
    // Out of matching (index and bucket) since a sibling position became a variable and
    // another group took its lines; it closes normally (window_merger_siblings.cc).
    bool retired : 1 = false;
    // In the GroupIndex: not when the first line already had kMaxIndexCandidates SimHash
    // candidates it did not fit (see Open). Retired groups are in none either.
    bool indexed : 1 = false;
    // Its words key (GroupWordsKey) is in `exact`, as an alias: set when the group takes its
    // first line, redone when a word position turns wild.
    bool words_keyed : 1 = false;
    // Its first line holds a DNS name among its plain words: a plain name may take that place
    // (a value by its kind), so the rigid-word shortcut leaves the group to Match. Valid once
    // dns_known: found when that shortcut first asks (DnsWords), which most groups never meet.
    bool dns_words : 1 = false;
    bool dns_known : 1 = false;
    // Its first line opened with a peer's endpoint (PreparedLine::peer_size), which
    // GroupExtras::peer counts once the group takes a line.
    bool peer : 1 = false;
    // More hosts were seen than GroupExtras::hosts lists (a bit here keeps GroupExtras within
    // one 112-byte malloc chunk).
    bool hosts_truncated : 1 = false;
    std::uint8_t tail = 0;   // header bytes after the message (MessageHeader::tail)
    std::uint16_t body = 0;  // where the first line's message proper starts (after its header)
    SampleRecord last;       // the latest line that joined; empty until one does
    std::unique_ptr<GroupExtras> extras;
  };
  // Every open group costs this much plus its 16 bytes of bucket link and its blocks: keep it
  // from growing unnoticed (bench/RESULTS.md "groupmem" has what a group is made of).
  static_assert(sizeof(Group) <= 136);

  // An intrusive doubly linked list over group slots. Both lists stay sorted by time because
  // time never goes backwards inside the merger: appending at the tail keeps the order.
  struct List {
    std::uint32_t head = kNil, tail = kNil;
    bool operator==(const List&) const = default;
  };
  // Bucket keys are XXH3 outputs: FlatMap64's home is their low bits. An empty list is never
  // stored (a bucket is erased when its last group closes).
  using BucketMap = FlatMap64<List, List{kNil, kNil}>;

  MergerOptions opt;
  Tokenizer tokenizer;
  HeaderLearner headers;  // each scope's header shape, when opt.infer_header
  Fingerprinter fingerprinter;
  GroupIndex index;
  std::vector<Group> groups;
  // Each slot's links in its bucket's list (oldest first), apart from the groups: a bucket
  // scan walks them before it reads any group, and this array stays in cache where 144-byte
  // groups do not.
  struct BucketLink {
    std::uint32_t prev = kNil, next = kNil;
    // RuledOutDigest::Of the group's tokens (SetScanDigest): a bucket scan, which reads
    // this link anyway, rules most groups out with it unread.
    std::uint64_t digest = 0;
  };
  std::vector<BucketLink> bucket_links;
  std::vector<std::uint32_t> free_slots;
  std::size_t live = 0;
  List lru, hold;
  ShapeMap exact;
  // Groups by scope and token count, in opening order: an intrusive list, so closing one of
  // many groups is O(1) (a vector erase shifted everything after it). A flat table: every
  // new line looks up to 13 buckets, and a node-based map's modulo and node load were 4 % of
  // a replay.
  BucketMap buckets;
  TemplateMatcher matcher;  // protected words and value keys set from opt
  // Event scratch: templates are built when an event needs one (the last one is kept for the
  // next event of the same group, e.g. annotate mode), and summaries' samples are expanded
  // into records here, so groups store neither.
  std::string template_text;
  std::uint32_t template_slot = kNil;
  LogRecord first_record, last_record;
  std::vector<SlotSummary> slot_summaries;
  std::vector<SlotValueCount> slot_values;
  SlotSummary peer_summary;  // a summary's peer statistics, in reused scratch
  std::array<SlotValueCount, SlotStats::kTop> peer_values;
  bool track_hosts = false;
  MergerStats stats;
  MergeDecision decision;
  bool explain_rejections = false;  // see WindowMerger::ExplainRejections
  TimeUs latest = INT64_MIN;
  std::uint64_t next_id = 0;

  // Scratch reused for every line.
  PreparedLine line;  // the line's tokens, hashes and own header (timestamp, level, ...)
  std::vector<GroupIndex::Candidate> candidates;
  RuledOutDigest line_digest;  // of the line, for the bucket scans
  std::vector<std::uint32_t> tried;
  std::size_t scan_budget = 0;  // bucket-scan candidates left for the current line
  // The current line's lookup found kMaxIndexCandidates SimHash candidates or read
  // CrowdedReads() entries.
  bool crowded = false;
  std::vector<std::uint8_t> skip;
  std::vector<Token> group_tokens;
  // The latest candidate Fits ruled out without Confirm, kNil once Confirm ran after it: its
  // rejection reason is filled in only if the line opens a group (explain shows the last).
  std::uint32_t unexplained = kNil;
  // A line position where Match rejects any change (TemplateMatcher::RejectsAnyChangeAt),
  // found from a candidate rejected there; kNil until one is.
  std::uint32_t rigid_at = kNil;
  // Word positions past the first kMaxSiblingPositions where a rejected candidate of the
  // line's token count differed from the line and only there, with the candidate's value:
  // where its sibling evidence is kept (window_merger_siblings.cc).
  static constexpr std::size_t kMaxSiblingHints = 2;
  struct SiblingHint {
    std::uint32_t position;
    std::uint64_t value;
  };
  SiblingHint sibling_hints[kMaxSiblingHints];
  std::size_t sibling_hint_count = 0;
  // Stream-learned variables (window_merger_siblings.cc): evidence per sibling key, and
  // scratch for a sibling's shape key.
  SiblingTable siblings;
  // Words the scope has written as a key's value in lines that folded (MaskValues).
  ValueWords value_words;
  std::vector<std::uint64_t> shape_scratch;
  // Which fields hold names, read from the open groups where Match asks
  // (window_merger_siblings.cc).
  static constexpr std::size_t kNameFieldScan = 64;
  struct LearnedNameFields final : NameFields {
    Impl* m = nullptr;
    std::uint64_t scope = 0;  // the current line's, without its level (evidence holds at all)
    std::size_t k = SiblingTable::kMaxValues;  // variable_after_values, at most kMaxValues
    // The current line's last answer: Match may ask once per candidate (a bucket scan: 16).
    std::uint64_t asked = 0;  // field hash, 0: none yet for this line
    bool answer = false;
    void NewLine(std::uint64_t value_scope) {
      scope = value_scope;
      asked = 0;
    }
    bool HoldsNames(std::uint64_t field_hash) override;
    bool ReadGroups(std::uint64_t field_hash);
  };
  LearnedNameFields name_fields;

  explicit Impl(MergerOptions o)
      : opt(std::move(o)),
        tokenizer(opt.tokenizer),
        fingerprinter(opt.weights),
        index(opt.max_distance) {
    ApplyDerived();
    // Room for the first closes' slots: closing a group then frees memory without the free
    // list growing (the bucket table, unlike the node map before it, does not shrink).
    free_slots.reserve(64);
    // Templates are built here only once a group has a flag (see Template): room for a
    // typical one from the start, so a close that summarises does not raise MemoryUsage.
    template_text.reserve(256);
  }

  void ApplyDerived() {
    // A window or hold of zero would close or summarise a group at every call, and a hold
    // that never advances would loop: both are at least 1 us.
    opt.window_us = std::max<TimeUs>(opt.window_us, 1);
    opt.max_hold_us = std::max<TimeUs>(opt.max_hold_us, 1);
    opt.max_groups = std::max<std::size_t>(opt.max_groups, 1);
    matcher.SetWords(opt.protected_words, opt.value_keys);
    name_fields.m = this;
    name_fields.k = std::min<std::size_t>(opt.variable_after_values, SiblingTable::kMaxValues);
    matcher.SetNameFields(opt.variable_after_values > 0 ? &name_fields : nullptr);
    track_hosts =
        std::find(opt.scope.begin(), opt.scope.end(), ScopeField::kHost) == opt.scope.end();
  }

  // --- lists --------------------------------------------------------------------------
  template <std::uint32_t Group::*Prev, std::uint32_t Group::*Next>
  void Unlink(List& list, std::uint32_t slot) {
    Group& g = groups[slot];
    if (g.*Prev != kNil)
      groups[g.*Prev].*Next = g.*Next;
    else
      list.head = g.*Next;
    if (g.*Next != kNil)
      groups[g.*Next].*Prev = g.*Prev;
    else
      list.tail = g.*Prev;
    g.*Prev = g.*Next = kNil;
  }
  template <std::uint32_t Group::*Prev, std::uint32_t Group::*Next>
  void Append(List& list, std::uint32_t slot) {
    Group& g = groups[slot];
    g.*Prev = list.tail;
    g.*Next = kNil;
    if (list.tail != kNil)
      groups[list.tail].*Next = slot;
    else
      list.head = slot;
    list.tail = slot;
  }
  void TouchLru(std::uint32_t slot) {
    Unlink<&Group::lru_prev, &Group::lru_next>(lru, slot);
    Append<&Group::lru_prev, &Group::lru_next>(lru, slot);
  }
  // The bucket lists: as Append and Unlink, over bucket_links.
  void BucketAppend(List& list, std::uint32_t slot) {
    bucket_links[slot].prev = list.tail;
    bucket_links[slot].next = kNil;
    if (list.tail != kNil)
      bucket_links[list.tail].next = slot;
    else
      list.head = slot;
    list.tail = slot;
  }
  void BucketUnlink(List& list, std::uint32_t slot) {
    const BucketLink l = bucket_links[slot];
    if (l.prev != kNil)
      bucket_links[l.prev].next = l.next;
    else
      list.head = l.next;
    if (l.next != kNil)
      bucket_links[l.next].prev = l.prev;
    else
      list.tail = l.prev;
    bucket_links[slot].prev = bucket_links[slot].next = kNil;
  }
  // Appends to the bucket of `key`, creating it.
  void AppendToBucket(std::uint64_t key, std::uint32_t slot) {
    if (List* b = buckets.Lookup(key)) {
      BucketAppend(*b, slot);
      return;
    }
    List fresh;
    BucketAppend(fresh, slot);
    buckets.Set(key, fresh);
  }
  // A free slot, or a new one at the end.
  std::uint32_t NewSlot() {
    if (!free_slots.empty()) {
      const std::uint32_t slot = free_slots.back();
      free_slots.pop_back();
      return slot;
    }
    groups.emplace_back();
    bucket_links.emplace_back();
    return static_cast<std::uint32_t>(groups.size() - 1);
  }
  void TouchHold(std::uint32_t slot) {
    Unlink<&Group::hold_prev, &Group::hold_next>(hold, slot);
    Append<&Group::hold_prev, &Group::hold_next>(hold, slot);
  }

  // --- keys -----------------------------------------------------------------------------
  std::uint64_t ScopeHash(const LogRecord& r) const { return logfold::ScopeHash(r, opt.scope); }

  std::uint64_t ShapeKey(std::uint64_t scope) const {
    return XXH3_64bits_withSeed(line.hashes.data(), line.hashes.size() * sizeof(std::uint64_t),
                                scope);
  }

  std::uint64_t BucketKey(std::uint64_t scope, std::size_t n) const {
    return merger_detail::Mix(scope ^ 0x6275636b6574ULL, n);
  }

  // The key of a template's words in their places: each plain word's hash, and one
  // placeholder for every variable token and every wild position. A line fits a group of its
  // token count only where their words agree (or the group's varied), so a line finds the
  // group that has its words in the same places by this key in `exact`, however many groups
  // of its length opened since (the bucket scan reads only the newest). A sum of per-position
  // terms (as the sibling keys), seeded apart from the shape keys that share the table: a
  // line that opens a group pays a multiply and an add a token.
  static constexpr std::uint64_t kWordsSeed = 0x776f726473ULL;  // "words"
  static constexpr std::uint64_t kPlaceholder = 0x2a2a2a2a2a2a2a2aULL;
  // Open groups with a words key, by token count (the last counter for all longer ones): a
  // line of a count no such group has skips the key and its lookup (a flood of lines that
  // each open a group, with no event of their lengths folding, pays nothing).
  std::array<std::uint32_t, 64> words_keyed_by_count{};
  std::uint32_t& WordsKeyed(std::size_t n) {
    return words_keyed_by_count[std::min(n, words_keyed_by_count.size() - 1)];
  }
  static std::uint64_t WordsBase(std::uint64_t scope, std::size_t n) {
    return SiblingKeys::Fmix(scope ^ SiblingKeys::Fmix(n + kWordsSeed));
  }
  // A name learned as a value (MaskValues) keeps its word's hash and place in the key: groups
  // that opened before it was learned still have it as a word.
  std::uint64_t LineWordsKey(std::uint64_t scope) const {
    const std::size_t n = line.tokens.size();
    std::uint64_t sum = WordsBase(scope, n);
    for (std::size_t i = 0; i < n; ++i) {
      const Token& t = line.tokens[i];
      sum += SiblingKeys::Term(
          t.cls == TokenClass::kWord || (line.learned && IsLearnedName(t.cls, line.hashes[i]))
              ? line.hashes[i]
              : kPlaceholder,
          i);
    }
    return SiblingKeys::Fmix(sum);
  }
  static std::uint64_t GroupWordsKey(const Group& g) {
    const GroupTokens& t = g.tokens;
    std::uint64_t sum = WordsBase(g.scope, t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      const bool word = t.cls(i) == TokenClass::kWord || IsLearnedName(t.cls(i), t.hash(i));
      sum += SiblingKeys::Term(word && !(t.flags(i) & kWild) ? t.hash(i) : kPlaceholder, i);
    }
    return SiblingKeys::Fmix(sum);
  }

  // --- confirmation (pipeline/template_match.h) -------------------------------------------
  MatchTemplate TemplateOf(const Group& g) const { return {g.first.message(), g.tokens}; }

  // After the group's tokens or wild flags change (Open, Reindex, ImportGroup).
  void SetScanDigest(std::uint32_t slot) {
    bucket_links[slot].digest = RuledOutDigest::Of(groups[slot].tokens);
  }

  // Does the line fit group g's template? On success matcher.marks() holds the template flags
  // the line adds, by group position; on failure the decision's reason says why.
  bool Confirm(const Group& g, std::string_view message) {
    const MatchResult result = matcher.Match(line.View(message), TemplateOf(g));
    if (!result.accepted) decision.reason.assign(MatchReasonText(result.reason));
    return result.accepted;
  }

  // Resets the decision for a new line, keeping the reason's buffer (no allocation a line).
  void ResetDecision() {
    decision.path = MergeDecision::kNew;
    decision.reason.clear();
    decision.candidates = 0;
    decision.fingerprint = 0;
    decision.group_id = 0;
    decision.group_fingerprint = 0;
    decision.distance = 0;
    decision.sibling_position = -1;
    decision.sibling_values = 0;
  }

  // Confirm for a SimHash or bucket candidate: most are ruled out cheaply first (a line that
  // opens a group in a busy scope is confirmed against up to 64 + 12 x 16 groups). A crowd
  // of near-duplicates differs from the line in one plain word: once Match has rejected one
  // of them there (rigid_at), the others are ruled out by that position alone.
  bool Fits(std::uint32_t slot, std::string_view message) {
    const GroupTokens& t = groups[slot].tokens;
    if ((rigid_at != kNil && ChangesRigidWord(groups[slot])) ||
        matcher.RuledOut(line.View(message), t)) {
      unexplained = slot;
      return false;
    }
    unexplained = kNil;
    return ConfirmCandidate(slot, message);
  }
  // A template holding a value by its kind there (a host, a name with a number, a DNS name)
  // may take the line's plain name in its place: Match decides.
  bool ChangesRigidWord(Group& g) {
    const GroupTokens& t = g.tokens;
    return t.size() == line.tokens.size() && !(t.flags(rigid_at) & kWild) &&
           t.hash(rigid_at) != line.hashes[rigid_at] && t.cls(rigid_at) == TokenClass::kWord &&
           !DnsWords(g);
  }
  // Group g's dns_words, found from its first line when first asked.
  bool DnsWords(Group& g) {
    if (!g.dns_known) {
      const std::size_t n = g.tokens.size();
      group_tokens.resize(n);
      for (std::size_t i = 0; i < n; ++i) group_tokens[i] = g.tokens.token(i);
      g.dns_words = TemplateMatcher::HoldsDnsWord(
          {g.first.message(), group_tokens, g.tokens.hashes(), g.body});
      g.dns_known = true;
    }
    return g.dns_words;
  }

  // At max_groups every new line evicts the least recently active group, whose index
  // buckets, shape entry and blocks are cold: start loading them before the line is
  // tokenized, so the eviction in Open finds them in cache (a garbage flood opens a group a
  // line). Only hints: a line that joins a group wastes a few prefetches.
  void PrefetchEviction() const {
    if (live < opt.max_groups || lru.head == kNil) return;
    asm volatile("");  // prefetches alone would make GCC drop this call as pure
    const Group& g = groups[lru.head];
    if (g.indexed) index.Prefetch(g.scope, g.fingerprint);
    exact.Prefetch(g.shape);
    g.tokens.Prefetch();
    g.first.Prefetch();
    g.last.Prefetch();
    // The next victim: its Group is read at the next line's start.
    if (g.lru_next != kNil) {
      const char* next = reinterpret_cast<const char*>(&groups[g.lru_next]);
      __builtin_prefetch(next);
      __builtin_prefetch(next + sizeof(Group) - 1);
    }
  }

  // Index entries a lookup must read to be a crowd's. Spread evenly, each of the k+1 blocks'
  // runs holds about size / 2^bits entries (bits = 64 / (k+1)): 61 reads at 100 k groups,
  // k = 4, which grows with max_groups; a crowd (one long prefix, varying words) shares its
  // block values and reads far more. The index's size over all scopes bounds the query's
  // scope's from above, so this errs towards indexing. A fixed 1,024 let a crowd that never
  // folds keep ~1.4 k entries per lookup (bench/RESULTS.md "A long fixed prefix").
  std::size_t CrowdedReads() const {
    const auto blocks = static_cast<unsigned>(index.max_distance() + 1);
    const unsigned bits = std::min(64u / blocks, 63u);
    const std::size_t even = (index.size() * blocks) >> bits;
    return std::max(kCrowdedIndexReads, kCrowdedDensity * even);
  }

  GroupExtras& Extras(Group& g) {
    if (g.extras == nullptr) g.extras = std::make_unique<GroupExtras>();
    return *g.extras;
  }

  TimeUs Clamp(TimeUs now) {
    if (now < latest) {
      ++stats.clock_backwards;
      return latest;
    }
    latest = now;
    return now;
  }

  // --- settling a line and group life (window_merger.cc) -------------------------------------
  // `reuse`: the slot is opened again at once (Open evicting), so its token and first-line
  // blocks stay for the new group's Assign instead of a free and a malloc each.
  // `index_cleared`: every group closes and the caller then clears the index (FlushAll).
  void Close(std::uint32_t slot, SummaryReason reason, EventSink& sink, bool reuse = false,
             bool index_cleared = false);
  void Open(const LogRecord& r, std::uint64_t scope, std::uint64_t fp, std::uint64_t shape,
            TimeUs now, EventSink& sink, std::uint32_t wild_at = kNil);
  void Join(std::uint32_t slot, const LogRecord& r, std::optional<std::uint64_t> fp,
            std::uint64_t shape, bool shape_in_table, TimeUs now, EventSink& sink);
  void FlushDue(TimeUs now, EventSink& sink);
  void Add(const LogRecord& r, TimeUs now_in, EventSink& sink);
  void Decide(MergeDecision::Path path, std::uint32_t slot, std::uint64_t fp, const char* why);
  std::uint32_t ScanBucket(std::uint64_t key, std::size_t limit, std::string_view message);
  void FlushAll(EventSink& sink);
  void Reindex(std::uint32_t slot);
  void KeyWords(std::uint32_t slot);
  bool Subsumes(std::uint32_t slot, std::uint32_t other);
  std::uint32_t FindByWords(std::uint64_t scope, std::uint64_t key, std::string_view message);
  void LeaveBucket(std::uint32_t slot);

  // --- stream-learned variables (window_merger_siblings.cc) --------------------------------
  bool SettleBySiblings(const LogRecord& r, std::uint64_t scope, std::uint64_t fp,
                        std::uint64_t shape, bool shape_in_table, TimeUs now, EventSink& sink);
  std::uint32_t FindSibling(std::uint64_t scope, std::size_t position, std::uint64_t value,
                            bool evidence = false);
  enum class Enumeration { kNo, kElsewhere, kRepeated };
  Enumeration RecurElsewhere(const SiblingTable::Entry& e, std::uint64_t scope, std::size_t i,
                             bool repeats);
  bool ConfirmCandidate(std::uint32_t slot, std::string_view message);
  void MaskValues(std::uint64_t scope, std::string_view message);
  void LearnValues(std::uint32_t slot, std::string_view message);
  void Retire(std::uint32_t slot);

  // --- templates, events and slot statistics (window_merger_events.cc) ----------------------
  std::string_view Template(std::uint32_t slot);
  void EmitLine(EventKind kind, std::uint32_t slot, const LogRecord& r, std::uint64_t fp,
                EventSink& sink);
  void EmitSummary(std::uint32_t slot, SummaryReason reason, bool closing, EventSink& sink);
  std::span<const SlotSummary> SlotSummaries(const GroupExtras& x);
  void NoteSlots(std::uint32_t slot, const LogRecord& r, EventSink& sink);
  void EmitNewValue(std::uint32_t slot, const LogRecord& r, std::uint8_t news, EventSink& sink);
  void PrefetchSlots(const Group& g) const;
  void NoteHost(Group& g, const LogRecord& r);
  void NotePeer(Group& g, std::string_view message);
  const SlotSummary& PeerSummary(const SlotStats& st);
  std::uint64_t GroupFingerprint(const Group& g);

  // --- checkpoints (window_merger_state.cc) -------------------------------------------------
  std::vector<std::uint8_t> export_flags;  // scratch: the exported group's template flags
  void ExportGroups(const std::function<void(const GroupState&)>& visit);
  void ImportGroup(const GroupState& s, bool resume, EventSink& sink);

  // --- memory accounting (window_merger_memory.cc) -----------------------------------------
  std::size_t MemoryUsage() const;
  static std::size_t GroupBlocks(const Group& g);
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_WINDOW_MERGER_IMPL_H_
