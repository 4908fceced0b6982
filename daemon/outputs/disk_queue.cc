// DiskQueue: segment files appended by Push, read front to back by Peek/Commit, deleted once
// read; the read positions persist in a small checksummed cursor file.
#include "daemon/outputs/disk_queue.h"

#include <dirent.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>

#include "daemon/outputs/sink_io.h"

namespace logfold {
namespace {

constexpr std::uint32_t kRecordMagic = 0x3152464c;  // "LFR1" little-endian
// The first segment's number leaves room below it for records PushFront puts first.
constexpr std::uint64_t kFirstSeq = std::uint64_t{1} << 40;
constexpr std::size_t kReadChunk = 1 << 20;
constexpr auto kPersistEvery = std::chrono::seconds(1);

std::uint32_t Crc(std::string_view bytes) {
  return static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

void PutU32(std::uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint32_t GetU32(const char* in) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

// Where the next plausible record starts after damage at data[0]: the next record magic,
// or all but the last 3 bytes (a magic may straddle the end).
std::size_t Resync(std::string_view data) {
  char magic[4];
  PutU32(kRecordMagic, magic);
  const std::size_t next = data.find(std::string_view(magic, 4), 1);
  if (next != std::string_view::npos) return next;
  return data.size() > 3 ? data.size() - 3 : 1;
}

// Registry of the queues this process has open, by directory.
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::weak_ptr<DiskQueue>>& Registry() {
  static std::map<std::string, std::weak_ptr<DiskQueue>> queues;
  return queues;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

void AppendDiskRecord(std::string_view payload, std::string& out) {
  char header[kRecordHeaderSize];
  PutU32(kRecordMagic, header);
  PutU32(static_cast<std::uint32_t>(payload.size()), header + 4);
  PutU32(Crc(payload), header + 8);
  PutU32(Crc(std::string_view(header, 12)), header + 12);
  out.append(header, kRecordHeaderSize);
  out.append(payload);
}

ParsedRecord ParseDiskRecord(std::string_view data) {
  ParsedRecord r;
  if (data.size() < kRecordHeaderSize) {
    char magic[4];
    PutU32(kRecordMagic, magic);
    // A prefix that cannot begin a record is damage even before more bytes arrive.
    if (std::string_view(magic, std::min<std::size_t>(4, data.size())) != data.substr(0, 4)) {
      r.kind = ParsedRecord::kCorrupt;
      r.consumed = Resync(data);
    }
    return r;
  }
  const std::uint32_t length = GetU32(data.data() + 4);
  if (GetU32(data.data()) != kRecordMagic || GetU32(data.data() + 12) != Crc(data.substr(0, 12)) ||
      length > kMaxRecordPayload) {
    r.kind = ParsedRecord::kCorrupt;
    r.consumed = Resync(data);
    return r;
  }
  if (data.size() - kRecordHeaderSize < length) return r;
  const std::string_view payload = data.substr(kRecordHeaderSize, length);
  r.consumed = kRecordHeaderSize + length;
  if (Crc(payload) != GetU32(data.data() + 8)) {
    r.kind = ParsedRecord::kCorrupt;  // the header is sound, so its length is trusted
    return r;
  }
  r.kind = ParsedRecord::kRecord;
  r.payload = payload;
  return r;
}

std::shared_ptr<DiskQueue> DiskQueue::Open(const Options& options, Metrics& metrics,
                                           std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    error = "disk_buffer " + options.dir + ": " + ec.message();
    return nullptr;
  }
  const std::string key = std::filesystem::weakly_canonical(options.dir, ec).string();
  std::lock_guard lock(RegistryMutex());
  if (auto it = Registry().find(key); it != Registry().end()) {
    if (auto q = it->second.lock()) return q;
  }
  std::shared_ptr<DiskQueue> q(new DiskQueue(options, metrics));
  q->key_ = key;
  if (!q->Load(error)) return nullptr;
  Registry()[key] = q;
  return q;
}

DiskQueue::DiskQueue(Options options, Metrics& metrics)
    : options_(std::move(options)),
      written_(metrics.GetCounter("logfold_disk_buffer_written_bytes_total",
                                  "Bytes an output wrote to its disk buffer",
                                  "sink=\"" + options_.sink_name + "\"")),
      read_(metrics.GetCounter("logfold_disk_buffer_read_bytes_total",
                               "Bytes an output took from its disk buffer for delivery",
                               "sink=\"" + options_.sink_name + "\"")),
      corrupt_(metrics.GetCounter("logfold_disk_buffer_corrupt_records_total",
                                  "Damaged records found in a disk buffer (skipped; their "
                                  "events are lost)",
                                  "sink=\"" + options_.sink_name + "\"")),
      write_errors_(metrics.GetCounter("logfold_disk_buffer_write_errors_total",
                                       "Failed writes to a disk buffer (the batch stays with "
                                       "the worker, which retries)",
                                       "sink=\"" + options_.sink_name + "\"")),
      gauge_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  metrics.AddGauge("logfold_disk_buffer_bytes", "Bytes queued in an output's disk buffer",
                   "sink=\"" + options_.sink_name + "\"",
                   [g = gauge_] { return static_cast<double>(g->load()); });
}

DiskQueue::~DiskQueue() {
  {
    std::lock_guard lock(mu_);
    PersistLocked();
    if (tail_fd_ >= 0) ::close(tail_fd_);
    if (head_fd_ >= 0) ::close(head_fd_);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
  std::lock_guard lock(RegistryMutex());
  auto it = Registry().find(key_);
  if (it != Registry().end() && it->second.expired()) Registry().erase(it);
}

std::string DiskQueue::SegmentPath(std::uint64_t seq) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.seg", static_cast<unsigned long long>(seq));
  return options_.dir + "/" + name;
}

bool DiskQueue::Load(std::string& error) {
  lock_fd_ = ::open((options_.dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    error =
        ErrnoText("disk_buffer " + options_.dir + ": lock (is another logfold using it?)", errno);
    return false;
  }
  DIR* d = ::opendir(options_.dir.c_str());
  if (d == nullptr) {
    error = ErrnoText("disk_buffer " + options_.dir, errno);
    return false;
  }
  std::vector<Segment> found;
  while (dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (name.size() != 20 || name.substr(16) != ".seg") continue;
    Segment s;
    if (std::from_chars(name.data(), name.data() + 16, s.seq, 16).ec != std::errc()) continue;
    struct stat st {};
    if (::stat(SegmentPath(s.seq).c_str(), &st) != 0) continue;
    s.size = static_cast<std::uint64_t>(st.st_size);
    s.start = kSegmentMagic.size();
    found.push_back(s);
  }
  ::closedir(d);
  std::sort(found.begin(), found.end(),
            [](const Segment& a, const Segment& b) { return a.seq < b.seq; });
  // cursor: "seq start" lines, then "crc N" over the lines before it.
  const std::string cursor_path = options_.dir + "/cursor";
  std::string text;
  if (FILE* f = std::fopen(cursor_path.c_str(), "rb")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (1 << 20))
      text.append(buf, n);
    std::fclose(f);
  }
  const std::size_t crc_at = text.rfind("crc ");
  if (!text.empty()) {
    std::uint32_t stored = 0;
    const bool ok =
        crc_at != std::string::npos &&
        std::from_chars(text.data() + crc_at + 4, text.data() + text.size(), stored).ec ==
            std::errc() &&
        stored == Crc(std::string_view(text).substr(0, crc_at));
    if (!ok) {
      spdlog::error(
          "sink {}: disk buffer cursor {} is damaged; reading every segment from its "
          "start (events may be delivered twice)",
          options_.sink_name, cursor_path);
    } else {
      std::istringstream in(text.substr(0, crc_at));
      std::uint64_t seq = 0, start = 0;
      while (in >> std::hex >> seq >> std::dec >> start) {
        for (Segment& s : found) {
          if (s.seq == seq)
            s.start = std::clamp<std::uint64_t>(start, kSegmentMagic.size(), s.size);
        }
      }
    }
  }
  for (const Segment& s : found) {
    if (s.start >= s.size) {
      ::unlink(SegmentPath(s.seq).c_str());
      continue;
    }
    segments_.push_back(s);
    bytes_ += s.size - s.start;
  }
  gauge_->store(bytes_);
  if (!segments_.empty()) {
    spdlog::info("sink {}: disk buffer {} holds {} bytes in {} segments from an earlier run",
                 options_.sink_name, options_.dir, bytes_, segments_.size());
  }
  return true;
}

bool DiskQueue::WriteSegmentLocked(std::uint64_t seq, std::string_view bytes) {
  const std::string path = SegmentPath(seq);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || !WriteAll(fd, kSegmentMagic) || !WriteAll(fd, bytes)) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(path.c_str());
    WriteFailedLocked("disk buffer write " + path, err);
    return false;
  }
  ::close(fd);
  return true;
}

bool DiskQueue::AppendLocked(std::string_view record) {
  std::string bytes;
  AppendDiskRecord(record, bytes);
  if (tail_fd_ < 0 || segments_.empty() || segments_.back().size >= options_.segment_bytes) {
    if (tail_fd_ >= 0) ::close(tail_fd_);
    tail_fd_ = -1;
    const std::uint64_t seq = segments_.empty() ? kFirstSeq : segments_.back().seq + 1;
    if (!WriteSegmentLocked(seq, {})) return false;
    tail_fd_ = ::open(SegmentPath(seq).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (tail_fd_ < 0) return false;
    segments_.push_back({seq, kSegmentMagic.size(), kSegmentMagic.size()});
  }
  Segment& tail = segments_.back();
  if (!WriteAll(tail_fd_, bytes)) {
    const int err = errno;
    // Leave no partial record behind: the next append starts at a record boundary.
    if (::ftruncate(tail_fd_, static_cast<off_t>(tail.size)) != 0) {
      ::close(tail_fd_);
      tail_fd_ = -1;  // the next append opens a new segment
    }
    WriteFailedLocked("disk buffer write " + SegmentPath(tail.seq), err);
    return false;
  }
  tail.size += bytes.size();
  bytes_ += bytes.size();
  written_ += bytes.size();
  gauge_->store(bytes_);
  return true;
}

bool DiskQueue::Push(std::string_view record, Clock::time_point deadline) {
  const std::uint64_t size = record.size() + kRecordHeaderSize;
  std::unique_lock lock(mu_);
  while (bytes_ > 0 && bytes_ + size > options_.max_bytes) {
    if (space_cv_.wait_until(lock, deadline) == std::cv_status::timeout && bytes_ > 0 &&
        bytes_ + size > options_.max_bytes) {
      return false;
    }
  }
  if (Clock::now() < write_retry_at_) {
    space_cv_.wait_until(lock, std::min(deadline, write_retry_at_));
    if (Clock::now() < write_retry_at_) return false;
  }
  if (!AppendLocked(record)) {
    write_retry_at_ = Clock::now() + write_backoff_.Next();
    return false;
  }
  write_backoff_.Reset();
  lock.unlock();
  data_cv_.notify_all();
  return true;
}

void DiskQueue::WriteFailedLocked(const std::string& what, int err) {
  ++write_errors_;
  std::string note;
  if (write_error_log_.Allow(note)) {
    spdlog::error("sink {}: {}{}", options_.sink_name, ErrnoText(what, err), note);
  }
}

bool DiskQueue::PushFront(std::string_view record) {
  std::lock_guard lock(mu_);
  std::string bytes;
  AppendDiskRecord(record, bytes);
  const std::uint64_t seq = segments_.empty() ? kFirstSeq : segments_.front().seq - 1;
  if (!WriteSegmentLocked(seq, bytes)) return false;
  const std::uint64_t size = kSegmentMagic.size() + bytes.size();
  segments_.push_front({seq, size, kSegmentMagic.size()});
  if (segments_.size() == 1) {
    // A lone segment becomes the tail only through AppendLocked, which opens it anew.
    if (tail_fd_ >= 0) ::close(tail_fd_);
    tail_fd_ = -1;
  }
  bytes_ += bytes.size();
  written_ += bytes.size();
  gauge_->store(bytes_);
  ResetReaderLocked();
  PersistLocked();
  data_cv_.notify_all();
  return true;
}

void DiskQueue::ResetReaderLocked() {
  if (head_fd_ >= 0) ::close(head_fd_);
  head_fd_ = -1;
  rbuf_.clear();
  peeked_ = 0;
}

void DiskQueue::CountCorruptLocked(std::size_t bytes, const char* what) {
  ++corrupt_;
  spdlog::error("sink {}: disk buffer segment {}: {} ({} bytes skipped)", options_.sink_name,
                SegmentPath(segments_.front().seq), what, bytes);
}

bool DiskQueue::NextLocked(std::string& out) {
  while (!segments_.empty()) {
    Segment& head = segments_.front();
    if (head_fd_ < 0 || head_seq_ != head.seq) {
      ResetReaderLocked();
      head_fd_ = ::open(SegmentPath(head.seq).c_str(), O_RDONLY | O_CLOEXEC);
      head_seq_ = head.seq;
      rbuf_offset_ = head.start;
      if (head_fd_ < 0) {
        CountCorruptLocked(head.size - head.start, "cannot be opened");
        DropLocked(head.size - head.start);
        segments_.pop_front();
        continue;
      }
      if (head.start == kSegmentMagic.size()) {
        char magic[8] = {};
        if (::pread(head_fd_, magic, sizeof magic, 0) != 8 ||
            std::string_view(magic, 8) != kSegmentMagic) {
          CountCorruptLocked(head.size, "has no segment header");
          rbuf_offset_ = 0;  // every byte is read as possible records; damage is skipped
        }
      }
    }
    const ParsedRecord r = ParseDiskRecord(rbuf_);
    if (r.kind == ParsedRecord::kRecord) {
      out.assign(r.payload);
      peeked_ = r.consumed;
      return true;
    }
    if (r.kind == ParsedRecord::kCorrupt) {
      CountCorruptLocked(r.consumed, "damaged record");
      DropLocked(r.consumed);
      rbuf_.erase(0, r.consumed);
      rbuf_offset_ += r.consumed;
      head.start = rbuf_offset_;
      continue;
    }
    const std::uint64_t have = rbuf_offset_ + rbuf_.size();
    if (have < head.size) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, head.size - have));
      const std::size_t old = rbuf_.size();
      rbuf_.resize(old + want);
      const ssize_t n = ::pread(head_fd_, rbuf_.data() + old, want, static_cast<off_t>(have));
      rbuf_.resize(old + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
      if (n > 0) continue;
      head.size = have;  // the file is shorter than we knew: what is left is a torn tail
    }
    const bool is_tail = tail_fd_ >= 0 && segments_.size() == 1;
    if (is_tail) return false;  // more may be appended
    if (!rbuf_.empty()) CountCorruptLocked(rbuf_.size(), "ends inside a record");
    DropLocked(head.size - std::min(head.size, head.start));
    ::unlink(SegmentPath(head.seq).c_str());
    segments_.pop_front();
    ResetReaderLocked();
    space_cv_.notify_all();
  }
  return false;
}

bool DiskQueue::Peek(std::string& out, Clock::time_point deadline, const void* consumer) {
  std::unique_lock lock(mu_);
  for (;;) {
    const bool mine = !held_ || holder_ == consumer;
    if (mine && NextLocked(out)) {
      held_ = true;
      holder_ = consumer;
      return true;
    }
    if (data_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (held_ && holder_ != consumer) return false;
      if (!NextLocked(out)) return false;
      held_ = true;
      holder_ = consumer;
      return true;
    }
  }
}

void DiskQueue::Release(const void* consumer) {
  {
    std::lock_guard lock(mu_);
    if (!held_ || holder_ != consumer) return;
    held_ = false;
    holder_ = nullptr;
  }
  data_cv_.notify_all();
}

void DiskQueue::Commit(const void* consumer) {
  {
    std::lock_guard lock(mu_);
    if (!held_ || holder_ != consumer) return;
    held_ = false;
    holder_ = nullptr;
    data_cv_.notify_all();
    if (peeked_ == 0 || segments_.empty()) return;
    rbuf_.erase(0, peeked_);
    rbuf_offset_ += peeked_;
    segments_.front().start = rbuf_offset_;
    DropLocked(peeked_);
    read_ += peeked_;
    peeked_ = 0;
    if (Clock::now() >= next_persist_) PersistLocked();
  }
  space_cv_.notify_all();
}

void DiskQueue::DropLocked(std::uint64_t bytes) {
  bytes_ -= std::min(bytes_, bytes);
  gauge_->store(bytes_);
}

bool DiskQueue::empty() const {
  std::lock_guard lock(mu_);
  return bytes_ == 0;
}

std::uint64_t DiskQueue::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

void DiskQueue::Persist() {
  std::lock_guard lock(mu_);
  PersistLocked();
}

void DiskQueue::PersistLocked() {
  next_persist_ = Clock::now() + kPersistEvery;
  std::string text;
  for (const Segment& s : segments_) {
    if (s.start == kSegmentMagic.size()) continue;
    char line[64];
    std::snprintf(line, sizeof line, "%016llx %llu\n", static_cast<unsigned long long>(s.seq),
                  static_cast<unsigned long long>(s.start));
    text += line;
  }
  text += "crc " + std::to_string(Crc(text)) + "\n";
  const std::string tmp = options_.dir + "/cursor.tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  // No fsync: the page cache outlives the process (restarts, kill -9), which is what the
  // buffer promises; syncing under the lock would stall every Push once a second.
  const bool ok = fd >= 0 && WriteAll(fd, text);
  if (fd >= 0) ::close(fd);
  if (!ok || ::rename(tmp.c_str(), (options_.dir + "/cursor").c_str()) != 0) {
    WriteFailedLocked("disk buffer cursor " + options_.dir, errno);
  }
}

}  // namespace logfold
