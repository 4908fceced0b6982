// Tests for EventFilter, an output's `select`: the cases where a line's app and its RFC 3164
// tag differ ("postfix" and "postfix/smtpd"), either of which names the app.
#include "pipeline/event_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace logfold {
namespace {

bool Selects(const std::vector<std::string>& apps, const std::string& app, const std::string& tag) {
  EventSelection s;
  s.apps = apps;
  LogRecord r;
  r.app_name = app;
  r.tag = tag;
  Event e;
  e.kind = EventKind::kFirst;
  e.record = &r;
  return EventFilter(s).Matches(e);
}

TEST(EventFilterTest, AppsMatchTheProgramNameOrTheWholeTag) {
  EXPECT_TRUE(Selects({"postfix"}, "postfix", "postfix/smtpd"));
  EXPECT_TRUE(Selects({"postfix"}, "postfix", "postfix/qmgr"));
  EXPECT_TRUE(Selects({"postfix/smtpd"}, "postfix", "postfix/smtpd"));
  EXPECT_FALSE(Selects({"postfix/smtpd"}, "postfix", "postfix/qmgr"));
  EXPECT_FALSE(Selects({"postfix/smtpd"}, "postfix", ""));
  EXPECT_TRUE(Selects({"/USR/SBIN/CRON"}, "", "/USR/SBIN/CRON"));
  EXPECT_TRUE(Selects({"sshd", "cron"}, "sshd", ""));
  EXPECT_FALSE(Selects({"sshd"}, "postfix", "postfix/smtpd"));
  EXPECT_TRUE(Selects({}, "anything", ""));
}

}  // namespace
}  // namespace logfold
