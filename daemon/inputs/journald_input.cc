// JournaldInput: the reader thread. Entries are batched, delivered (waiting while the engine
// is full) and only then is the batch's last cursor saved, so a restart resumes after the
// last entry the engine accepted.
#include "daemon/inputs/journald_input.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "daemon/inputs/blocking_delivery.h"
#include "daemon/runtime/wall_clock.h"

namespace logfold {

namespace {

constexpr std::size_t kBatch = 512;

// An RFC 5424 header field: printable ASCII without spaces, at most `max` bytes; "-" if empty.
void AppendHeaderField(std::string& out, std::string_view v, std::size_t max) {
  if (v.empty()) {
    out += '-';
    return;
  }
  v = v.substr(0, max);
  for (const char c : v) out += (c > 32 && c < 127) ? c : '_';
}

}  // namespace

class JournaldInput::Impl {
 public:
  Impl(std::uint32_t input, const std::string& name, const Options& options, IngestTarget& target,
       Metrics& metrics)
      : name_(name),
        options_(options),
        delivery_(input, target),
        counters_(metrics, name, "journald"),
        received_(counters_.received),
        bytes_(counters_.bytes),
        truncated_(counters_.truncated),
        no_message_(counters_.Dropped("no_message")),
        journal_errors_(counters_.Error("journal")),
        checkpoint_errors_(counters_.Error("checkpoint")) {
    const int r = options_.directory.empty()
                      ? sd_journal_open(&j_, SD_JOURNAL_LOCAL_ONLY)
                      : sd_journal_open_directory(&j_, options_.directory.c_str(), 0);
    if (r < 0) {
      throw std::runtime_error("input " + name_ + ": cannot open the journal" +
                               (options_.directory.empty() ? "" : " in " + options_.directory) +
                               ": " + std::strerror(-r));
    }
    for (const std::string& unit : options_.units) {
      const std::string match = "_SYSTEMD_UNIT=" + unit;
      sd_journal_add_match(j_, match.data(), match.size());
    }
    sd_journal_set_data_threshold(j_, options_.max_message_size + 64);
    if (!options_.state_directory.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(options_.state_directory, ec);
      if (ec) {
        sd_journal_close(j_);
        throw std::runtime_error("input " + name_ + ": state directory " +
                                 options_.state_directory + ": " + ec.message());
      }
      cursor_path_ = options_.state_directory + "/journald-" + name_ + ".cursor";
    }
    Seek();
  }

  ~Impl() { sd_journal_close(j_); }

  void Stop() {
    delivery_.Stop();
    wake_.Signal();
  }

  void Run() {
    const int jfd = sd_journal_get_fd(j_);
    while (!delivery_.stopped()) {
      text_.clear();
      ends_.clear();
      std::string cursor;
      while (ends_.size() < kBatch) {
        const int r = sd_journal_next(j_);
        if (r < 0) {
          journal_errors_.fetch_add(1, std::memory_order_relaxed);
          spdlog::warn("input {}: reading the journal: {}", name_, std::strerror(-r));
          break;
        }
        if (r == 0) break;
        if (skip_first_) {
          skip_first_ = false;
          if (sd_journal_test_cursor(j_, saved_cursor_.c_str()) > 0) continue;
        }
        if (AppendEntry()) {
          ends_.push_back(text_.size());
        }
        last_read_ = true;
      }
      if (last_read_) {
        char* c = nullptr;
        if (sd_journal_get_cursor(j_, &c) >= 0) {
          cursor = c;
          free(c);
        }
      }
      if (!ends_.empty()) {
        lines_.clear();
        std::size_t from = 0;
        for (const std::size_t end : ends_) {
          lines_.emplace_back(text_.data() + from, end - from);
          from = end;
        }
        if (!delivery_.Deliver(lines_, WallClockNowUs())) break;
        received_.fetch_add(lines_.size(), std::memory_order_relaxed);
      }
      if (!cursor.empty() && cursor != saved_cursor_) SaveCursor(cursor);
      last_read_ = false;
      if (ends_.size() == kBatch) continue;
      // Caught up: wait for the journal to change, or Stop().
      std::uint64_t timeout_us = 0;
      int ms = -1;
      if (sd_journal_get_timeout(j_, &timeout_us) >= 0 && timeout_us != UINT64_MAX) {
        timespec now{};
        clock_gettime(CLOCK_MONOTONIC, &now);
        const std::uint64_t now_us = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000 +
                                     static_cast<std::uint64_t>(now.tv_nsec) / 1000;
        ms = timeout_us > now_us ? static_cast<int>((timeout_us - now_us + 999) / 1000) : 0;
      }
      if (jfd < 0) ms = 1000;  // no change notification: poll once a second
      pollfd fds[2] = {{wake_.fd(), POLLIN, 0}, {jfd, POLLIN, 0}};
      const int r = poll(fds, jfd >= 0 ? 2 : 1, ms);
      if (r > 0 && fds[0].revents != 0) break;
      sd_journal_process(j_);
    }
    spdlog::info("input {}: stopped reading the journal", name_);
  }

 private:
  void Seek() {
    if (!cursor_path_.empty()) {
      std::ifstream in(cursor_path_);
      std::getline(in, saved_cursor_);
    }
    if (!saved_cursor_.empty() && sd_journal_seek_cursor(j_, saved_cursor_.c_str()) >= 0) {
      // Seeking lands on the saved entry when it still exists; it was delivered already.
      skip_first_ = true;
      spdlog::info("input {}: resuming the journal after the saved cursor", name_);
      return;
    }
    if (options_.read_from == ReadFrom::kEnd) {
      sd_journal_seek_tail(j_);
      // The tail's last entry is old: step onto it, so the next read is the first new one.
      sd_journal_previous(j_);
    } else {
      sd_journal_seek_head(j_);
    }
  }

  // The fields an event uses, copied out of the entry: libsystemd's data pointers are valid
  // only until its next data call. Reused from entry to entry (no allocation once warm).
  struct Fields {
    std::string message, priority, facility, hostname, identifier, comm, syslog_pid, pid;
    bool has_message = false;
  };

  void ReadFields() {
    Fields& f = fields_;
    f.has_message = false;
    f.priority.clear();
    f.facility.clear();
    f.hostname.clear();
    f.identifier.clear();
    f.comm.clear();
    f.syslog_pid.clear();
    f.pid.clear();
    struct Wanted {
      std::string_view prefix;
      std::string* out;
    };
    const Wanted wanted[] = {{"MESSAGE=", &f.message},
                             {"PRIORITY=", &f.priority},
                             {"SYSLOG_FACILITY=", &f.facility},
                             {"_HOSTNAME=", &f.hostname},
                             {"SYSLOG_IDENTIFIER=", &f.identifier},
                             {"_COMM=", &f.comm},
                             {"SYSLOG_PID=", &f.syslog_pid},
                             {"_PID=", &f.pid}};
    const void* data = nullptr;
    std::size_t len = 0;
    sd_journal_restart_data(j_);
    while (sd_journal_enumerate_data(j_, &data, &len) > 0) {
      const std::string_view item(static_cast<const char*>(data), len);
      for (const Wanted& w : wanted) {
        if (item.starts_with(w.prefix)) {
          w.out->assign(item.substr(w.prefix.size()));
          if (w.out == &f.message) f.has_message = true;
          break;
        }
      }
    }
  }

  static int Number(std::string_view v, int fallback, int max) {
    int n = 0;
    if (v.empty() || v.size() > 3) return fallback;
    for (const char c : v) {
      if (c < '0' || c > '9') return fallback;
      n = n * 10 + (c - '0');
    }
    return n <= max ? n : fallback;
  }

  // Appends the current entry to text_ as "<PRI>1 TIMESTAMP HOST APP PROCID - - MSG".
  bool AppendEntry() {
    ReadFields();
    const Fields& f = fields_;
    if (!f.has_message) {
      no_message_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    const std::size_t start = text_.size();
    // Journal defaults: a missing PRIORITY is info, a missing facility user (as imjournal).
    const int severity = Number(f.priority, 6, 7);
    const int facility = Number(f.facility, 1, 23);
    std::uint64_t usec = 0;
    sd_journal_get_realtime_usec(j_, &usec);
    const time_t secs = static_cast<time_t>(usec / 1'000'000);
    tm t{};
    gmtime_r(&secs, &t);
    char head[80];
    const int n =
        std::snprintf(head, sizeof head, "<%d>1 %04d-%02d-%02dT%02d:%02d:%02d.%06uZ ",
                      facility * 8 + severity, t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour,
                      t.tm_min, t.tm_sec, static_cast<unsigned>(usec % 1'000'000));
    text_.append(head, static_cast<std::size_t>(n));
    AppendHeaderField(text_, f.hostname, 255);
    text_ += ' ';
    AppendHeaderField(text_, f.identifier.empty() ? f.comm : f.identifier, 48);
    text_ += ' ';
    AppendHeaderField(text_, f.syslog_pid.empty() ? f.pid : f.syslog_pid, 128);
    text_ += " - - ";
    std::string_view msg = f.message;
    if (msg.size() > options_.max_message_size) {
      msg = msg.substr(0, options_.max_message_size);
      truncated_.fetch_add(1, std::memory_order_relaxed);
    }
    text_.append(msg);
    bytes_.fetch_add(text_.size() - start, std::memory_order_relaxed);
    return true;
  }

  // Replaced whole (write, then rename) so a crash leaves the old cursor or the new one.
  void SaveCursor(const std::string& cursor) {
    if (cursor_path_.empty()) {
      saved_cursor_ = cursor;
      return;
    }
    const std::string tmp = cursor_path_ + ".tmp";
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const std::string line = cursor + "\n";
    const bool ok =
        fd >= 0 && write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    if (fd >= 0) close(fd);
    if (!ok || rename(tmp.c_str(), cursor_path_.c_str()) != 0) {
      checkpoint_errors_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    saved_cursor_ = cursor;
  }

  const std::string name_;
  const Options options_;
  BlockingDelivery delivery_;
  sd_journal* j_ = nullptr;
  WakeSignal wake_;
  std::string cursor_path_;
  std::string saved_cursor_;
  bool skip_first_ = false;
  bool last_read_ = false;
  std::string text_;               // this batch's lines, back to back
  std::vector<std::size_t> ends_;  // where each line of text_ ends
  std::vector<std::string_view> lines_;
  Fields fields_;

  InputCounters counters_;
  Metrics::Counter& received_;
  Metrics::Counter& bytes_;
  Metrics::Counter& truncated_;
  Metrics::Counter& no_message_;
  Metrics::Counter& journal_errors_;
  Metrics::Counter& checkpoint_errors_;
};

JournaldInput::JournaldInput(std::uint32_t input, std::string name, const Options& options,
                             IngestTarget& target, Metrics& metrics)
    : name_(std::move(name)),
      impl_(std::make_unique<Impl>(input, name_, options, target, metrics)) {}

JournaldInput::~JournaldInput() {
  Stop();
  Join();
}

void JournaldInput::Start() {
  thread_.Start(name_, [this] { impl_->Run(); });
}

void JournaldInput::Stop() { impl_->Stop(); }

void JournaldInput::Join() { thread_.Join(); }

}  // namespace logfold
