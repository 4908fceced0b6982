// FileInput: the follower thread. A file is known by device and inode plus a fingerprint of
// its first bytes (which tells a reused inode or copytruncate's new content from the old);
// its saved position is the end of the last line whose events the outputs have written
// (IngestTarget::Settled), so a restart, even after kill -9, skips no line; it may read again
// the lines delivered since the last such moment (at-least-once).
#include "daemon/inputs/file_input.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/inputs/blocking_delivery.h"
#include "daemon/runtime/wall_clock.h"

namespace logfold {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadSize = 256 * 1024;
// Enough to tell two log files apart (timestamps, sequence numbers), small enough that a
// fresh file has it soon.
constexpr std::uint32_t kFingerprintBytes = 256;
// A file that left the pattern (renamed away, deleted) is read on until it has been quiet
// this long, for writers that still append to the old file shortly after a rotation.
constexpr auto kRotateWait = std::chrono::seconds(2);
// Copytruncate leftovers remembered for a copy that shows up late.
constexpr std::size_t kRetiredMax = 64;
constexpr std::size_t kRecordSize = 64;
// While positions wait for the engine to settle, how often the follower looks again.
constexpr auto kSettleRetry = std::chrono::milliseconds(10);

std::uint64_t Fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

struct FileKey {
  dev_t dev;
  ino_t ino;
  auto operator<=>(const FileKey&) const = default;
};

struct Fingerprint {
  std::uint64_t hash = 0;
  std::uint32_t length = 0;  // 0: the file was empty, nothing to compare
  bool operator==(const Fingerprint&) const = default;
};

// Hash of the first `length` bytes of `fd`, or nullopt when it has fewer.
std::optional<std::uint64_t> HashPrefix(int fd, std::uint32_t length) {
  char buf[kFingerprintBytes];
  std::size_t got = 0;
  while (got < length) {
    const ssize_t n = pread(fd, buf + got, length - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  return Fnv1a({buf, length});
}

// The first bytes of `fd` (at most kFingerprintBytes of its `size`) into `head`, and their
// fingerprint.
Fingerprint TakeFingerprint(int fd, std::uint64_t size, std::string& head) {
  head.resize(std::min<std::uint64_t>(size, kFingerprintBytes));
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  head.resize(got);
  return {Fnv1a(head), static_cast<std::uint32_t>(got)};
}

// A saved position: one fixed-size record, rewritten in place with one pwrite (a write
// inside one page is all or nothing under kill -9) and checked by its own hash.
std::string EncodeRecord(const Fingerprint& fp, std::uint64_t offset) {
  char text[kRecordSize];
  const int n = std::snprintf(text, sizeof text, "lfpos1 %016" PRIx64 " %" PRIu32 " %" PRIu64,
                              fp.hash, fp.length, offset);
  std::string out(text, static_cast<std::size_t>(n));
  char check[24];
  std::snprintf(check, sizeof check, " %016" PRIx64, Fnv1a(out));
  out += check;
  out.resize(kRecordSize - 1, ' ');
  out += '\n';
  return out;
}

bool DecodeRecord(std::string_view text, Fingerprint& fp, std::uint64_t& offset) {
  std::uint64_t check = 0;
  char body[kRecordSize + 1] = {};
  if (text.size() != kRecordSize) return false;
  std::memcpy(body, text.data(), text.size());
  if (std::sscanf(body, "lfpos1 %" SCNx64 " %" SCNu32 " %" SCNu64 " %" SCNx64, &fp.hash, &fp.length,
                  &offset, &check) != 4) {
    return false;
  }
  const std::string expect = EncodeRecord(fp, offset);
  return expect == text;
}

}  // namespace

class FileInput::Impl {
 public:
  Impl(std::uint32_t input, const std::string& name, const Options& options, IngestTarget& target,
       Metrics& metrics)
      : name_(name),
        options_(options),
        target_(target),
        share_(target.NewShare()),
        delivery_(input, target, share_),
        counters_(metrics, name, "file"),
        received_(counters_.received),
        bytes_(counters_.bytes),
        truncated_(counters_.truncated),
        rotations_(counters_.Other("logfold_file_rotations_total",
                                   "Followed files that left the pattern (renamed or deleted) "
                                   "and were read to their end.")),
        truncations_(counters_.Other("logfold_file_truncations_total",
                                     "Followed files truncated or rewritten in place "
                                     "(copytruncate); read again from their start.")),
        lost_bytes_(counters_.Other("logfold_file_lost_bytes_total",
                                    "Bytes of an unfinished last line dropped because its file "
                                    "was truncated or removed.")),
        open_errors_(counters_.Error("open")),
        read_errors_(counters_.Error("read")),
        checkpoint_errors_(counters_.Error("checkpoint")) {
    if (!options_.multiline_start.empty()) {
      try {
        start_re_.emplace(options_.multiline_start, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        throw std::runtime_error("input " + name_ + ": multiline_start: " + e.what());
      }
    }
    if (!options_.state_directory.empty()) {
      state_dir_ = options_.state_directory + "/file-" + name_;
      std::error_code ec;
      std::filesystem::create_directories(state_dir_, ec);
      if (ec)
        throw std::runtime_error("input " + name_ + ": state directory " + state_dir_ + ": " +
                                 ec.message());
      LoadPositions();
    }
    SetUpInotify();
  }

  ~Impl() {
    for (auto& [key, f] : files_) {
      if (f.fd >= 0) close(f.fd);
    }
    if (inotify_fd_ >= 0) close(inotify_fd_);
  }

  void Stop() {
    stop_.store(true);
    delivery_.Stop();
    wake_.Signal();
  }

  // On the starting thread, before Run(): when the daemon says it is serving, the files
  // present are known and `read_from` "end" has fixed their start.
  void FirstScan() { Scan(/*first=*/true); }

  void Run() {
    auto last_scan = Clock::now();
    const auto poll_interval =
        std::chrono::microseconds(std::max<TimeUs>(options_.poll_interval_us, 1000));
    while (!stop_.load()) {
      ReadAll();
      if (stop_.load()) break;
      const bool saved = Checkpoint();
      auto timeout = poll_interval - (Clock::now() - last_scan);
      if (!saved) timeout = std::min<Clock::duration>(timeout, kSettleRetry);
      if (HoldsRecord() && options_.multiline_timeout_us > 0) {
        timeout = std::min<Clock::duration>(
            timeout, std::chrono::microseconds(options_.multiline_timeout_us));
      }
      const bool rescan = Wait(std::max<Clock::duration>(timeout, Clock::duration::zero()));
      if (rescan || rescan_ || Clock::now() - last_scan >= poll_interval) {
        rescan_ = false;
        Scan(/*first=*/false);
        last_scan = Clock::now();
      }
    }
    // What was delivered before the stop: saved now if already settled (or if the target
    // keeps no shares); otherwise the daemon calls CheckpointSettled once the outputs drained.
    Checkpoint();
    spdlog::info("input {}: stopped following {} file(s)", name_, files_.size());
  }

 private:
  struct File {
    std::string path;
    int fd = -1;
    Fingerprint fp;
    std::string head;               // the bytes `fp` hashes, for matching a later copy
    std::uint64_t offset = 0;       // end of the last delivered record: the saved position
    std::uint64_t read_offset = 0;  // end of the bytes in `buf`
    std::vector<char> buf;          // bytes [offset, read_offset) read and not yet delivered
    std::size_t buf_len = 0;
    bool skip_to_newline = false;  // the rest of an over-long line is being dropped
    bool matched = true;           // found by the latest scan
    Clock::time_point last_data = Clock::now();
    std::uint64_t saved_offset = UINT64_MAX;
    Fingerprint saved_fp;
    int state_fd = -1;
  };
  struct Saved {
    Fingerprint fp;
    std::uint64_t offset = 0;
    bool claimed = false;  // taken by a copy of this file's old content
  };
  struct Retired {
    std::string head;  // the truncated content's first bytes (at most kFingerprintBytes)
    std::uint64_t offset = 0;
  };

  std::string StatePath(const FileKey& k) const {
    return state_dir_ + "/" + std::to_string(k.dev) + "-" + std::to_string(k.ino);
  }

  void LoadPositions() {
    DIR* dir = opendir(state_dir_.c_str());
    if (dir == nullptr) return;
    while (const dirent* e = readdir(dir)) {
      unsigned long long dev = 0, ino = 0;
      if (std::sscanf(e->d_name, "%llu-%llu", &dev, &ino) != 2) continue;
      const std::string path = state_dir_ + "/" + e->d_name;
      std::string text(kRecordSize, '\0');
      const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      const ssize_t n = pread(fd, text.data(), text.size(), 0);
      close(fd);
      Saved s;
      if (n != static_cast<ssize_t>(kRecordSize) || !DecodeRecord(text, s.fp, s.offset)) {
        spdlog::warn("input {}: ignoring damaged position file {}", name_, path);
        checkpoint_errors_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      saved_[FileKey{static_cast<dev_t>(dev), static_cast<ino_t>(ino)}] = s;
    }
    closedir(dir);
  }

  void SetUpInotify() {
    // Watch the pattern's directory when it is a plain one; otherwise polling alone.
    const std::filesystem::path p(options_.path);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    if (dir.find_first_of("*?[") != std::string::npos) return;
    inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_fd_ < 0) return;
    if (inotify_add_watch(
            inotify_fd_, dir.c_str(),
            IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE) < 0) {
      spdlog::info("input {}: no inotify watch on {} ({}); polling", name_, dir,
                   std::strerror(errno));
      close(inotify_fd_);
      inotify_fd_ = -1;
    }
  }

  // Waits for inotify, Stop() or `timeout`. True when the directory's entries changed.
  bool Wait(Clock::duration timeout) {
    pollfd fds[2] = {{wake_.fd(), POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    const int ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(timeout).count());
    const int r = poll(fds, inotify_fd_ >= 0 ? 2 : 1, ms);
    if (r <= 0 || fds[1].revents == 0) return false;
    alignas(inotify_event) char events[4096];
    bool changed = false;
    while (true) {
      const ssize_t n = read(inotify_fd_, events, sizeof events);
      if (n <= 0) break;
      for (ssize_t i = 0; i < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(events + i);
        if ((ev->mask & (IN_MODIFY | IN_CLOSE_WRITE)) == 0) changed = true;
        i += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
    return changed;
  }

  bool HoldsRecord() const {
    if (!start_re_) return false;
    for (const auto& [key, f] : files_) {
      if (f.buf_len > 0) return true;
    }
    return false;
  }

  void Scan(bool first) {
    glob_t g{};
    const int rc = glob(options_.path.c_str(), GLOB_NOSORT, nullptr, &g);
    std::vector<std::pair<std::string, struct stat>> found;
    if (rc == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        struct stat st {};
        if (stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode))
          found.emplace_back(g.gl_pathv[i], st);
      }
    }
    globfree(&g);
    for (auto& [key, f] : files_) f.matched = false;
    // Known files first, so that a truncation is seen (and its position retired) before a
    // copy of its old content is considered.
    std::vector<std::size_t> fresh;
    for (std::size_t i = 0; i < found.size(); ++i) {
      const auto& [path, st] = found[i];
      auto it = files_.find(FileKey{st.st_dev, st.st_ino});
      if (it == files_.end()) {
        fresh.push_back(i);
        continue;
      }
      File& f = it->second;
      f.matched = true;
      f.path = path;
      CheckReplaced(f, static_cast<std::uint64_t>(st.st_size));
    }
    // Files with a saved position of their own first: a copy made while the daemon was
    // down is then compared with its original's current content (see Track).
    std::stable_partition(fresh.begin(), fresh.end(), [&](std::size_t i) {
      return saved_.contains(FileKey{found[i].second.st_dev, found[i].second.st_ino});
    });
    for (const std::size_t i : fresh) {
      const auto& [path, st] = found[i];
      Track(FileKey{st.st_dev, st.st_ino}, path, first);
    }
    // Files that left the pattern: read to their end, then let go once quiet.
    for (auto it = files_.begin(); it != files_.end();) {
      File& f = it->second;
      if (f.matched || Clock::now() - f.last_data < kRotateWait) {
        ++it;
        continue;
      }
      ReadFile(f);
      if (stop_.load()) return;
      Flush(f);
      // Its position goes with it, so only once its last lines are written out.
      if (!Checkpoint()) {
        ++it;
        continue;
      }
      if (f.buf_len > 0) lost_bytes_.fetch_add(f.buf_len, std::memory_order_relaxed);
      rotations_.fetch_add(1, std::memory_order_relaxed);
      spdlog::info("input {}: {} left the pattern; read to its end", name_, f.path);
      Release(it->first, f, /*forget=*/true);
      it = files_.erase(it);
    }
    if (first && !state_dir_.empty()) {
      // Positions of files that no longer exist under the pattern are of no further use.
      for (const auto& [key, s] : saved_) {
        if (!files_.contains(key)) unlink(StatePath(key).c_str());
      }
      saved_.clear();
    }
  }

  // A known file whose size fell below what was read, or whose first bytes changed, was
  // truncated or rewritten in place (copytruncate): what was delivered is done with; what
  // remains of the old content may still turn up in a copy, which then resumes from here.
  void CheckReplaced(File& f, std::uint64_t size) {
    bool replaced = size < f.read_offset;
    if (!replaced && f.fp.length > 0) {
      const auto h = HashPrefix(f.fd, f.fp.length);
      replaced = !h || *h != f.fp.hash;
    }
    if (!replaced) {
      if (f.fp.length < kFingerprintBytes && size > f.fp.length) {
        f.fp = TakeFingerprint(f.fd, size, f.head);
      }
      return;
    }
    Flush(f);
    if (f.buf_len > 0) lost_bytes_.fetch_add(f.buf_len, std::memory_order_relaxed);
    if (f.fp.length > 0) Retire(f);
    truncations_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("input {}: {} was truncated; reading it from its start", name_, f.path);
    f.offset = f.read_offset = 0;
    f.buf_len = 0;
    f.skip_to_newline = false;
    f.fp = TakeFingerprint(f.fd, size, f.head);
  }

  // Remembers where a truncated file's old content was left, for its copy.
  void Retire(const File& f) {
    if (retired_.size() == kRetiredMax) retired_.pop_front();
    retired_.push_back({f.head, f.offset});
  }

  // Starts following a file the scan found for the first time, unless it is (the start of)
  // a copy of a followed file, or still empty: then the next scan looks again.
  void Track(const FileKey& key, const std::string& path, bool first) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno != ENOENT) {
        open_errors_.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("input {}: open {}: {}", name_, path, std::strerror(errno));
      }
      return;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_dev != key.dev || st.st_ino != key.ino) {
      close(fd);  // replaced between stat and open: the next scan sees the new one
      return;
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    std::string head;
    const Fingerprint fp = TakeFingerprint(fd, size, head);
    auto defer = [&] {
      close(fd);
      rescan_ = true;
    };
    const auto saved = saved_.find(key);
    if (fp.length == 0 && saved == saved_.end()) return defer();
    // A file starting with the same bytes as a followed one is a copy of it (copytruncate's
    // first step): it is read only once the original was truncated, from where that stopped.
    for (const auto& [other_key, other] : files_) {
      const std::uint32_t n = std::min(fp.length, other.fp.length);
      if (n > 0 &&
          std::string_view(head).substr(0, n) == std::string_view(other.head).substr(0, n)) {
        return defer();
      }
    }
    std::optional<std::uint64_t> start;
    bool continues_another = false;  // resumes where a truncated or moved file stopped
    for (auto it = retired_.begin(); it != retired_.end(); ++it) {
      const auto n = std::min<std::size_t>(fp.length, it->head.size());
      if (n == 0 ||
          std::string_view(head).substr(0, n) != std::string_view(it->head).substr(0, n)) {
        continue;
      }
      if (size < it->head.size() || size < it->offset) return defer();  // still being copied
      start = it->offset;
      continues_another = true;
      retired_.erase(it);
      spdlog::info("input {}: {} is a copy of a truncated file; resuming at byte {}", name_, path,
                   *start);
      break;
    }
    if (!start && saved != saved_.end()) {
      // Saved before a restart: resume, unless the file was rewritten meanwhile.
      const Saved& s = saved->second;
      const bool same =
          s.fp.length == 0 || (s.fp.length <= size && HashPrefix(fd, s.fp.length) == s.fp.hash);
      start = same && s.offset <= size ? s.offset : 0;
    }
    if (!start && first) {
      // No position of its own, but the first bytes of a file whose position was saved and
      // which no longer has them (truncated, or gone): a copytruncate or a move while the
      // daemon was down. It continues from that file's position.
      for (auto& [other_key, s] : saved_) {
        if (s.claimed || s.fp.length == 0 || s.fp.length > size || s.offset > size) continue;
        if (HashPrefix(fd, s.fp.length) != s.fp.hash) continue;
        const auto live = files_.find(other_key);
        if (live != files_.end() && live->second.fp.length >= s.fp.length &&
            Fnv1a(std::string_view(live->second.head).substr(0, s.fp.length)) == s.fp.hash) {
          continue;
        }
        s.claimed = true;
        start = s.offset;
        continues_another = true;
        spdlog::info("input {}: {} holds the old content of a file saved at byte {}", name_, path,
                     s.offset);
        break;
      }
    }
    if (!start) start = first && options_.read_from == ReadFrom::kEnd ? size : 0;
    File f;
    f.path = path;
    f.fd = fd;
    f.fp = fp;
    f.head = std::move(head);
    f.offset = f.read_offset = *start;
    auto [it, inserted] = files_.emplace(key, std::move(f));
    spdlog::info("input {}: following {} from byte {}", name_, path, *start);
    // Nothing of a new file was delivered yet, so its start is safe to save at once (a restart
    // must not take it for a file present at start). One that continues another file waits
    // for the next checkpoint, as that file's position would have.
    if (!continues_another) SavePosition(it->first, it->second);
  }

  void Release(const FileKey& key, File& f, bool forget) {
    if (f.fd >= 0) close(f.fd);
    f.fd = -1;
    if (f.state_fd >= 0) close(f.state_fd);
    f.state_fd = -1;
    if (forget && !state_dir_.empty()) unlink(StatePath(key).c_str());
  }

  bool Unsaved() const {
    return std::any_of(files_.begin(), files_.end(), [](const auto& entry) {
      const File& f = entry.second;
      return f.saved_offset != f.offset || f.saved_fp != f.fp;
    });
  }

 public:
  // Saves every file's position if the engine has settled all that was delivered; true when
  // nothing is left unsaved. A position saved sooner could be ahead of lines still queued or
  // in an output's buffer, which a kill -9 would lose.
  bool Checkpoint() {
    if (state_dir_.empty() || !Unsaved()) return true;
    if (share_ != nullptr && !target_.Settled(*share_)) return false;
    for (auto& [key, f] : files_) SavePosition(key, f);
    return true;
  }

 private:
  void SavePosition(const FileKey& key, File& f) {
    if (state_dir_.empty()) return;
    if (f.saved_offset == f.offset && f.saved_fp == f.fp) return;
    if (f.state_fd < 0) {
      f.state_fd = open(StatePath(key).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (f.state_fd < 0) {
        checkpoint_errors_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    const std::string record = EncodeRecord(f.fp, f.offset);
    if (pwrite(f.state_fd, record.data(), record.size(), 0) !=
        static_cast<ssize_t>(record.size())) {
      checkpoint_errors_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    f.saved_offset = f.offset;
    f.saved_fp = f.fp;
  }

  void ReadAll() {
    for (auto& [key, f] : files_) {
      ReadFile(f);
      if (stop_.load()) return;
      if (start_re_ && f.buf_len > 0 &&
          Clock::now() - f.last_data >= std::chrono::microseconds(options_.multiline_timeout_us)) {
        Flush(f);
      }
    }
  }

  // Reads what `f` has gained and delivers its complete records.
  void ReadFile(File& f) {
    const std::size_t max = options_.max_message_size;
    struct stat st {};
    if (fstat(f.fd, &st) != 0) {
      read_errors_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    CheckReplaced(f, static_cast<std::uint64_t>(st.st_size));
    while (!stop_.load()) {
      if (f.buf.size() < f.buf_len + kReadSize) f.buf.resize(f.buf_len + kReadSize);
      const ssize_t n =
          pread(f.fd, f.buf.data() + f.buf_len, kReadSize, static_cast<off_t>(f.read_offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        read_errors_.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("input {}: read {}: {}", name_, f.path, std::strerror(errno));
        return;
      }
      if (n == 0) return;
      // Truncated and rewritten while we read: those bytes may be the new content at the old
      // offset. Dropped unread; the start of the new content is read next.
      if (f.fp.length > 0 && HashPrefix(f.fd, f.fp.length) != f.fp.hash) {
        if (fstat(f.fd, &st) == 0) CheckReplaced(f, static_cast<std::uint64_t>(st.st_size));
        continue;
      }
      f.last_data = Clock::now();
      bytes_.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
      f.buf_len += static_cast<std::size_t>(n);
      f.read_offset += static_cast<std::uint64_t>(n);
      if (!DeliverRecords(f, /*flush=*/false)) return;
      // A held multi-line record over the limit goes out (cut) without waiting for its end.
      if (start_re_ && f.buf_len > max && !DeliverRecords(f, /*flush=*/true)) return;
      if (f.skip_to_newline) {
        Consume(f, f.buf_len);  // no newline yet: all of it belongs to the dropped line
      } else if (f.buf_len > max) {
        // An unterminated line longer than the limit: deliver its start, drop the rest.
        std::string_view head(f.buf.data(), max);
        if (!delivery_.Deliver({&head, 1}, WallClockNowUs())) return;
        truncated_.fetch_add(1, std::memory_order_relaxed);
        received_.fetch_add(1, std::memory_order_relaxed);
        Consume(f, f.buf_len);
        f.skip_to_newline = true;
      }
      if (static_cast<std::size_t>(n) < kReadSize) return;
    }
  }

  // Delivers any held record regardless of the multi-line rule.
  void Flush(File& f) { DeliverRecords(f, /*flush=*/true); }

  void Consume(File& f, std::size_t n) {
    std::memmove(f.buf.data(), f.buf.data() + n, f.buf_len - n);
    f.buf_len -= n;
    f.offset += n;
  }

  // Splits the complete lines of `f.buf` into records and delivers them; then the position
  // moves past them (saved by the next Checkpoint). False when Stop() interrupted the
  // delivery.
  bool DeliverRecords(File& f, bool flush) {
    const char* data = f.buf.data();
    const std::size_t len = f.buf_len;
    std::size_t pos = 0;
    std::size_t consumed = 0;
    std::size_t record_start = SIZE_MAX;  // start of the multi-line record being built
    std::size_t record_end = 0;
    records_.clear();
    auto emit = [&](std::size_t from, std::size_t to) {
      std::size_t end = to;
      if (end > from && data[end - 1] == '\r') --end;
      if (end - from > options_.max_message_size) {
        end = from + options_.max_message_size;
        truncated_.fetch_add(1, std::memory_order_relaxed);
      }
      records_.emplace_back(data + from, end - from);
    };
    while (pos < len) {
      const void* nl = std::memchr(data + pos, '\n', len - pos);
      if (nl == nullptr) break;
      const std::size_t line_end = static_cast<const char*>(nl) - data;
      if (f.skip_to_newline) {
        f.skip_to_newline = false;
        pos = consumed = line_end + 1;
        continue;
      }
      if (!start_re_) {
        emit(pos, line_end);
        pos = consumed = line_end + 1;
        continue;
      }
      std::string_view line(data + pos, line_end - pos);
      const bool starts = std::regex_search(line.begin(), line.end(), *start_re_);
      if (starts && record_start != SIZE_MAX) {
        emit(record_start, record_end);
        consumed = pos;
        record_start = SIZE_MAX;
      }
      if (record_start == SIZE_MAX) record_start = pos;
      record_end = line_end;
      pos = line_end + 1;
    }
    if (record_start != SIZE_MAX && flush) {
      emit(record_start, record_end);
      consumed = record_end + 1;
    }
    if (records_.empty() && consumed == 0) return true;
    if (!records_.empty()) {
      if (!delivery_.Deliver(records_, WallClockNowUs())) return false;
      received_.fetch_add(records_.size(), std::memory_order_relaxed);
    }
    Consume(f, consumed);
    return true;
  }

  const std::string name_;
  const Options options_;
  IngestTarget& target_;
  const std::shared_ptr<QueueShare> share_;  // null: the target keeps none (tests' fakes)
  BlockingDelivery delivery_;
  std::optional<std::regex> start_re_;
  std::string state_dir_;
  std::map<FileKey, Saved> saved_;  // positions loaded at start, used by the first scan
  std::map<FileKey, File> files_;
  std::deque<Retired> retired_;
  std::vector<std::string_view> records_;
  WakeSignal wake_;
  int inotify_fd_ = -1;
  std::atomic<bool> stop_{false};
  bool rescan_ = false;  // a file was put off: look again at the next wake

  InputCounters counters_;
  Metrics::Counter& received_;
  Metrics::Counter& bytes_;
  Metrics::Counter& truncated_;
  Metrics::Counter& rotations_;
  Metrics::Counter& truncations_;
  Metrics::Counter& lost_bytes_;
  Metrics::Counter& open_errors_;
  Metrics::Counter& read_errors_;
  Metrics::Counter& checkpoint_errors_;
};

FileInput::FileInput(std::uint32_t input, std::string name, const Options& options,
                     IngestTarget& target, Metrics& metrics)
    : name_(std::move(name)),
      impl_(std::make_unique<Impl>(input, name_, options, target, metrics)) {}

FileInput::~FileInput() {
  Stop();
  Join();
}

void FileInput::Start() {
  if (thread_.started()) return;
  impl_->FirstScan();
  thread_.Start(name_, [this] { impl_->Run(); });
}

void FileInput::Stop() { impl_->Stop(); }

void FileInput::CheckpointSettled() { impl_->Checkpoint(); }

void FileInput::Join() { thread_.Join(); }

}  // namespace logfold
