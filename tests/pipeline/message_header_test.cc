// MessageHeader tests: the header of the common application and syslog line formats is found
// (body, level, logger), and messages that merely start with a number, a name or an address
// keep every word.
#include "pipeline/message_header.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace logfold {
namespace {

struct Case {
  std::string_view line;
  std::string_view body;  // expected message proper ("" = no header: the whole line)
  std::string_view level;
  std::string_view logger;
};

void Expect(const Case& c) {
  const MessageHeader h = ParseMessageHeader(c.line);
  const std::string_view body = c.line.substr(h.body);
  EXPECT_EQ(body, c.body.empty() ? c.line : c.body) << c.line;
  EXPECT_EQ(h.level, c.level) << c.line;
  EXPECT_EQ(h.logger, c.logger) << c.line;
}

TEST(MessageHeaderTest, JavaStyleHeaders) {
  Expect(
      {"2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: "
       "Created MRAppMaster for application appattempt_1445144423722_0020_000001",
       "Created MRAppMaster for application appattempt_1445144423722_0020_000001", "INFO",
       "org.apache.hadoop.mapreduce.v2.app.MRAppMaster"});
  // A thread name with spaces.
  Expect(
      {"2015-10-18 18:06:02,841 WARN [RMCommunicator Allocator] org.apache.hadoop.ipc.Client: "
       "Address change detected.",
       "Address change detected.", "WARN", "org.apache.hadoop.ipc.Client"});
  Expect({"081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating",
          "PacketResponder 1 terminating", "INFO", "dfs.DataNode$PacketResponder"});
  Expect(
      {"17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered signal "
       "handlers for [TERM, HUP, INT]",
       "Registered signal handlers for [TERM, HUP, INT]", "INFO",
       "executor.CoarseGrainedExecutorBackend"});
  // Nested brackets in the thread, and " - " around the level and before the message.
  Expect(
      {"2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:"
       "FastLeaderElection@774] - Notification time out: 3200",
       "Notification time out: 3200", "INFO", ""});
  // A logger followed by its request context (OpenStack-like), after a source file name.
  Expect(
      {"nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO "
       "nova.osapi_compute.wsgi.server [req-38101a0b 113d3a99 - - -] 10.11.10.1 \"GET "
       "/v2/servers/detail HTTP/1.1\" status: 200",
       "10.11.10.1 \"GET /v2/servers/detail HTTP/1.1\" status: 200", "INFO",
       "nova.osapi_compute.wsgi.server"});
}

TEST(MessageHeaderTest, SyslogAndDeviceHeaders) {
  Expect({"Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster from 173.234.31.186",
          "Invalid user webmaster from 173.234.31.186", "", "sshd[24200]"});
  Expect(
      {"Jul  1 09:29:02 calvisitor-10-105-160-95 sandboxd[129] ([31211]): "
       "com.apple.Addres(31211) deny network-outbound /private/var/run/mDNSResponder",
       "com.apple.Addres(31211) deny network-outbound /private/var/run/mDNSResponder", "",
       "([31211])"});
  Expect(
      {"- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond(pam_unix)[2915]: "
       "session closed for user root",
       "session closed for user root", "", "crond(pam_unix)[2915]"});
  // Android: pid and tid between the time and a one-letter level.
  Expect({"03-17 16:13:38.811  1702  2395 D WindowManager: printFreezingDisplayLogsopening app",
          "printFreezingDisplayLogsopening app", "D", "WindowManager"});
  // Apache error log: a bracketed date and a bracketed level, no logger.
  Expect({"[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2",
          "workerEnv.init() ok /etc/httpd/conf/workers2", "notice", ""});
  Expect({"[10.30 16:49:06] chrome.exe *64 - www.baidu.com:80 open through proxy",
          "www.baidu.com:80 open through proxy", "", "*64"});
  // Source names before the level ("RAS KERNEL"); a number after the level is the message's.
  Expect(
      {"- 1118784453 2005.06.14 R07-M0-N6-C:J11-U01 2005-06-14-14.27.33.186273 "
       "R07-M0-N6-C:J11-U01 RAS KERNEL INFO total of 1 ddr error(s) detected",
       "total of 1 ddr error(s) detected", "INFO", ""});
  Expect({"2016-09-28 04:30:30, Info                  CBS    Starting TrustedInstaller.",
          "CBS    Starting TrustedInstaller.", "Info", ""});
}

TEST(MessageHeaderTest, MessagesWithoutHeaderKeepEveryWord) {
  for (std::string_view line : {
           "10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 2326",
           "42 files removed",
           "Connection closed by 10.1.2.3 port 22",
           "PacketResponder 1 for block blk_38865049 terminating",
           "ERROR",  // a header and nothing after it is no header
           "2015-10-18 18:01:47,978",
           "134681 node-246 unix.hw state_change.unavailable 1077804742 1 Component State",
           "[main] started",
           "",
       }) {
    Expect({line, "", "", ""});
  }
}

TEST(MessageHeaderTest, ALongLeadingBracketIsNotAField) {
  std::string line = "[" + std::string(300, 'x') + "] 12:00:00 INFO a: b";
  EXPECT_EQ(ParseMessageHeader(line).body, 0u);
}

}  // namespace
}  // namespace logfold
