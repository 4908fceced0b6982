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
  const std::string_view body = c.line.substr(h.body, c.line.size() - h.body - h.tail);
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
  // Windows CBS: the component in its own column after the level is the logger.
  Expect({"2016-09-28 04:30:30, Info                  CBS    Starting TrustedInstaller.",
          "Starting TrustedInstaller.", "Info", "CBS"});
}

// The formats of widely used software, each as its documentation shows it: the header is
// found, its level and logger go into the event, and the message left is the bare message.
TEST(MessageHeaderTest, AndroidLogcat) {
  // threadtime; a tag shorter than its column is padded before the colon.
  Expect({"03-17 16:13:38.811  1702  2395 D WindowManager: printFreezingDisplayLogs",
          "printFreezingDisplayLogs", "D", "WindowManager"});
  Expect({"03-17 16:13:38.811  1702  2395 I chatty  : uid=1000(system) expire 3 lines",
          "uid=1000(system) expire 3 lines", "I", "chatty"});
  // brief and time: the level letter and tag before a padded pid.
  Expect({"D/WindowManager( 1702): printFreezingDisplayLogs", "printFreezingDisplayLogs", "D",
          "WindowManager"});
  Expect({"I/Zygote  (  123): Process 42 exited", "Process 42 exited", "I", "Zygote"});
  Expect({"03-17 16:13:38.811 E/AndroidRuntime( 2227): FATAL EXCEPTION: main",
          "FATAL EXCEPTION: main", "E", "AndroidRuntime"});
  Expect({"W/System.err: java.io.IOException: closed", "java.io.IOException: closed", "W",
          "System.err"});
}

TEST(MessageHeaderTest, ApacheAndNginxErrorLogs) {
  // httpd 2.2: the client's bracket is context, like a thread.
  Expect({"[Sun Dec 04 04:51:18 2005] [error] [client 10.20.30.40] File does not exist: /x",
          "File does not exist: /x", "error", ""});
  // httpd 2.4: microseconds, "module:level", pid and tid, client with port; a message code
  // ("AH00124:") is the message's, not a logger.
  Expect(
      {"[Wed Oct 11 14:32:52.123456 2000] [core:error] [pid 35708:tid 4328636416] "
       "[client 1.2.3.4:5] AH00124: Request exceeded the limit of 10 internal redirects",
       "AH00124: Request exceeded the limit of 10 internal redirects", "error", ""});
  // An operation's name, a term in capitalised parts, is the message's too (CUPS' debug
  // log: a job's bracket, then the IPP operation and its outcome); a logger after a thread
  // bracket is a name or a qualified one.
  Expect({"D [28/Nov/2026:11:17:28 +0000] [Job 2] Validate-Job: successful-ok (successful-ok)",
          "Validate-Job: successful-ok (successful-ok)", "", ""});
  Expect({"D [28/Nov/2026:11:17:28 +0000] [Job 2] scheduler: job queued for printer office",
          "job queued for printer office", "", "scheduler"});
  Expect(
      {"[Wed Oct 11 14:32:52.123456 2000] [mpm_event:notice] [pid 1234:tid 140] AH00489: "
       "Apache/2.4.41 configured",
       "AH00489: Apache/2.4.41 configured", "notice", ""});
  // nginx: the pid#tid before the colon; the connection number stays with the message.
  Expect({"2024/05/09 12:34:56 [error] 1234#1234: *5 open() \"/srv/x\" failed (2: No such file)",
          "*5 open() \"/srv/x\" failed (2: No such file)", "error", "1234#1234"});
  // Right after a bracketed level, a word of lower-case letters before ':' is the message's
  // key, not a logger: "statement: DROP ..." and "DROP ..." are two events.
  Expect({"[Sat Nov 28 17:38:55 2026] [notice] statement: DROP TABLE t1;",
          "statement: DROP TABLE t1;", "notice", ""});
  // A capitalised module is a logger there, and a lower-case word after a thread is one.
  Expect(
      {"2026-11-28  2:15:09 0 [Note] InnoDB: Using io_uring", "Using io_uring", "Note", "InnoDB"});
  Expect({"2026-11-28 17:38:55,123 INFO     [MainThread] kernel: AppleThunderboltNHI reset",
          "AppleThunderboltNHI reset", "INFO", "kernel"});
}

TEST(MessageHeaderTest, SyslogFiles) {
  Expect({"Jun 14 15:16:01 gw sshd(pam_unix)[19939]: password check failed for backup",
          "password check failed for backup", "", "sshd(pam_unix)[19939]"});
  Expect({"Jun 15 04:06:20 gw logrotate: job ended with status [1]", "job ended with status [1]",
          "", "logrotate"});
  Expect({"2024-03-01T12:34:56.123456+01:00 web-01 sshd[123]: Accepted publickey for root",
          "Accepted publickey for root", "", "sshd[123]"});
  // A collector's prefix (an alert tag instead of "-") before the syslog line.
  Expect(
      {"ALRT 1131566461 2005.11.09 adm-2 Nov 9 12:01:01 local@adm-2 "
       "postfix/postdrop[10896]: warning: queue file write error",
       "warning: queue file write error", "", "postfix/postdrop[10896]"});
}

TEST(MessageHeaderTest, OpenStackOsloLog) {
  // A bracket holding an id after the logger's context is more context (oslo.log writes its
  // instance_format there, before the message).
  Expect(
      {"2024-02-01 10:00:04.500 4120 INFO nova.compute.manager [req-0c1d2e3f-4a5b-6c7d-8e9f"
       "-0a1b2c3d4e5f - - - - -] [instance: 7d1e2f30-aa11] Guest rebooted on request",
       "Guest rebooted on request", "INFO", "nova.compute.manager"});
  Expect(
      {"2026-11-28 17:37:10.908 24832 INFO nova.compute.manager [None req-e57e3e60-53c7-4b48-81fd"
       "-81c3bda8fe8d 1457 f5c1 - - - -] [instance: 7d52e499-4284] [volume: 3] Attaching",
       "Attaching", "INFO", "nova.compute.manager"});
  // A bracket that is no labelled value is the message's ("[OK]", a component and its
  // key=value context); a bracket that ends the line is no context either (the message must
  // follow it).
  Expect({"2024-02-01 10:00:04.500 4120 INFO nova.compute.manager [-] [OK] 3 instances synced",
          "[OK] 3 instances synced", "INFO", "nova.compute.manager"});
  Expect(
      {"2024-02-01 10:00:04.500 4120 INFO kafka.log.LogManager [-] [Log partition=t-0, "
       "dir=/tmp] Loading producer state",
       "[Log partition=t-0, dir=/tmp] Loading producer state", "INFO", "kafka.log.LogManager"});
  Expect({"2024-02-01 10:00:04.500 4120 INFO nova.compute.manager [-] [instance: 7d1e2f30]",
          "[instance: 7d1e2f30]", "INFO", "nova.compute.manager"});
  Expect(
      {"2024-02-01 10:00:04.562 4120 WARNING nova.virt.libvirt.driver [-] Cache entry expired: "
       "/var/lib/nova/cache",
       "Cache entry expired: /var/lib/nova/cache", "WARNING", "nova.virt.libvirt.driver"});
}

TEST(MessageHeaderTest, PipeSeparatedFields) {
  Expect({"20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579",
          "onStandStepChanged 3579", "", "Step_LSC"});
  Expect({"20240201-10:15:29:615|Sync_Totals|40001234| dailyTotal = 1514", "dailyTotal = 1514", "",
          "Sync_Totals"});
  Expect({"20240201-0:41:04:180|Sync_Queue|40001234|flushQueue", "flushQueue", "", "Sync_Queue"});
  Expect({"2024-05-09 12:34:56|WARN|billing|retry 3 of 5", "retry 3 of 5", "WARN", "billing"});
  // loguru: " | " between the fields.
  Expect({"2024-05-09 12:34:56.789 | INFO     | __main__:main:12 - Worker 3 started",
          "Worker 3 started", "INFO", "__main__:main:12"});
}

TEST(MessageHeaderTest, JavaGoAndPythonLibraries) {
  // logback: the thread before the level, the logger after it.
  Expect({"18:01:47.978 [http-nio-8080-exec-1] DEBUG com.example.Controller - handling 42",
          "handling 42", "DEBUG", "com.example.Controller"});
  Expect({"[2015-10-18 18:01:47,978] INFO [Thread one two] c.x.Y: retry 3", "retry 3", "INFO",
          "c.x.Y"});
  // klog/glog: a level letter fused with the date; the caller closes the header with ']'.
  Expect({"I0509 12:34:56.789012   12345 controller.go:123] Starting workers", "Starting workers",
          "I", "controller.go:123"});
  Expect({"E0509 12:34:56.789012       1 reflector.go:138] Failed to watch *v1.Pod",
          "Failed to watch *v1.Pod", "E", "reflector.go:138"});
  // zap's console encoder: tab-separated, the level in lower case, the caller as logger.
  Expect({"2024-05-09T12:34:56.789Z\tinfo\tcontroller/run.go:42\tStarting workers\t{\"n\": 3}",
          "Starting workers\t{\"n\": 3}", "info", "controller/run.go:42"});
  // Python logging: "%(asctime)s - %(name)s - %(levelname)s - %(message)s", and the
  // default basicConfig format "%(levelname)s:%(name)s:%(message)s".
  Expect({"2024-05-09 12:34:56,123 - myapp.db - WARNING - pool exhausted", "pool exhausted",
          "WARNING", "myapp.db"});
  Expect({"INFO:myapp.db:pool exhausted", "pool exhausted", "INFO", "myapp.db"});
  Expect({"[2024-05-09 12:34:56,123] {taskinstance.py:1138} INFO - Executing task 3",
          "Executing task 3", "INFO", "taskinstance.py:1138"});
  // Spring Boot: a pid and "---" after the level, the logger padded before " : ".
  Expect(
      {"2024-05-09 12:34:56.123  INFO 1234 --- [           main] o.s.b.StartupInfoLogger   "
       "               : Starting App v1 using Java 17",
       "Starting App v1 using Java 17", "INFO", "o.s.b.StartupInfoLogger"});
  Expect(
      {"2024-05-09T12:34:56.123+02:00  WARN 1234 --- [myapp] [nio-8080-exec-1] "
       "o.s.w.s.PageNotFound : No mapping for GET /x",
       "No mapping for GET /x", "WARN", "o.s.w.s.PageNotFound"});
  // Elasticsearch: brackets without spaces between them, the level padded inside its own.
  Expect(
      {"[2024-05-09T12:34:56,123][WARN ][o.e.c.r.a.DiskThresholdMonitor] [node-1] high disk "
       "watermark [90%] exceeded",
       "high disk watermark [90%] exceeded", "WARN", ""});
  // Ruby's Logger: a severity letter, the time with "#pid", the label, "--", the program.
  Expect({"I, [2024-05-09T12:34:56.123456 #1234]  INFO -- : Started GET \"/\" for 127.0.0.1",
          "Started GET \"/\" for 127.0.0.1", "INFO", ""});
  Expect({"E, [2024-05-09T12:34:56.123456 #1234] ERROR -- myprog: boom 3", "boom 3", "ERROR",
          "myprog"});
  // Monolog (PHP): a channel and its level.
  Expect({"[2024-05-09 12:34:56] app.ERROR: Payment 42 failed", "Payment 42 failed", "ERROR",
          "app.ERROR"});
}

TEST(MessageHeaderTest, ABareCallerNeedsBracesATabOrASeparator) {
  // A host and port opening the message is no caller, whatever its last label looks like
  // (bench/header_formats.py: Proxifier's messages through Python logging and log4j).
  Expect(
      {"[2026-11-28 17:34:04 +0000] [24644] [INFO] [main] proxy.example.edu.hk:5070 open "
       "through proxy",
       "proxy.example.edu.hk:5070 open through proxy", "INFO", ""});
  Expect({"[2026-11-28 17:34:04,448] INFO www.example.com:443 close, 0 bytes sent",
          "www.example.com:443 close, 0 bytes sent", "INFO", ""});
  // The nearest callers that are the header's: before a separator, in braces, tab-separated.
  Expect({"2026-11-28 17:34:04,448 INFO Server.java:42 - started in 3 ms", "started in 3 ms",
          "INFO", ""});
  Expect({"[2026-11-28 17:34:04,448] {server.py:42} INFO - started in 3 ms", "started in 3 ms",
          "INFO", "server.py:42"});
  Expect({"2026-11-28T17:34:04.448Z\tinfo\tserver.go:42\tstarted in 3 ms", "started in 3 ms",
          "info", "server.go:42"});
}

TEST(MessageHeaderTest, ANameBeforeAOneWordMessageIsTheMessagesKey) {
  // "word: value" after a thread or a bare time is the message's own key when one word
  // follows: taken for a logger it would leave "<*>", into which every such line folds.
  Expect({"[2026-11-28 01:15:52 +0000] [1883] [INFO] [main]   frame:      0x204402031940",
          "frame:      0x204402031940", "INFO", ""});
  Expect({"2026/11/28 02:36:20 button report: 0x8002be0", "button report: 0x8002be0", "", ""});
  // The nearest headers that keep their logger or program: more than one word follows.
  Expect({"[2026-11-28 01:15:52 +0000] [1883] [INFO] [main] c.x.Y: retry 3", "retry 3", "INFO",
          "c.x.Y"});
  Expect({"Nov 28 00:16:47 host-3 app[9206]: started in 3 ms", "started in 3 ms", "", "app[9206]"});
  // A program with its pid keeps its place before a one-word message.
  Expect({"Nov 28 10:00:02 host-2 api-server[26983]: MergeTreeThread", "MergeTreeThread", "",
          "api-server[26983]"});
}

// A level word with its own ':' right after a name with ':' is the header's level, in any
// case: a category and a severity (BIND's print-category and print-severity). The nearest
// lines keep their words: a level word without ':' is the message's first word, and a
// lower-case key right after the time stays the message's when no level follows it.
TEST(MessageHeaderTest, ALevelAfterACategoryIsTheHeaders) {
  Expect({"28-Nov-2026 08:12:38.120 security: error: client @0x7f6d1c 127.0.0.1#53: denied",
          "client @0x7f6d1c 127.0.0.1#53: denied", "error", "security"});
  Expect({"28-Nov-2026 08:12:05.576 queries: info: client @0x7f6d1c 127.0.0.1#59377",
          "client @0x7f6d1c 127.0.0.1#59377", "info", "queries"});
  Expect({"2026-11-28 08:12:05 app: Warning: disk full", "disk full", "Warning", "app"});
  Expect({"2026/11/28 17:38:55 statement: error in DROP TABLE items;",
          "statement: error in DROP TABLE items;", "", ""});
  Expect(
      {"2026/11/28 17:38:55 statement: DROP TABLE items;", "statement: DROP TABLE items;", "", ""});
}

TEST(MessageHeaderTest, AVerbosityDigitAfterALevelIsTheLevel) {
  // Chromium's VLOG(1): pid, tid, time, "VERBOSE1" and caller in one bracket. Read as no header,
  // the bracket is one path-like token that keeps its class, and two function names written
  // as the whole message ("MutablePO2TS::MutablePO2TS", "...::~MutablePO2TS") fold beside it.
  Expect(
      {"[6113:6113:1128/024738.308296:VERBOSE1:components/signin/internal/identity_manager/"
       "mutable_profile_oauth2_token_service_delegate.cc:355] MutablePO2TS::MutablePO2TS",
       "MutablePO2TS::MutablePO2TS", "VERBOSE1",
       "components/signin/internal/identity_manager/"
       "mutable_profile_oauth2_token_service_delegate.cc:355"});
  Expect({"2026-11-28 02:47:38.175 UTC [6113] DEBUG2:  autovacuum: processing database x",
          "autovacuum: processing database x", "DEBUG2", ""});
  EXPECT_EQ(LevelSeverity("VERBOSE1"), 7);
  EXPECT_EQ(LevelSeverity("DEBUG5"), 7);
  EXPECT_EQ(LevelSeverity("ERROR1"), 3);
  // The nearest words that are no level: a name in capitals with a digit, two digits.
  Expect({"[6113:6113:1128/024738.308296:MP3:media/decoder.cc:12] opened", "", "", ""});
  Expect({"[6113:6113:1128/024738.308296:INFO12:media/decoder.cc:12] opened", "", "", ""});
  EXPECT_EQ(LevelSeverity("INFO12"), -1);
  EXPECT_EQ(LevelSeverity("HTTP2"), -1);
}

TEST(MessageHeaderTest, ANameAfterTheCallerIsTheMessages) {
  // A header that names its caller ends there: "Class::Method:" after it is the message's
  // own, else the message is the URL alone and every such line folds into "<*>".
  Expect(
      {"[6461:6552:1128/024740.696026:VERBOSE1:net/base/network_delegate.cc:38] "
       "NetworkDelegate::NotifyBeforeURLRequest: http://127.0.0.1:1/api",
       "NetworkDelegate::NotifyBeforeURLRequest: http://127.0.0.1:1/api", "VERBOSE1",
       "net/base/network_delegate.cc:38"});
  Expect({"2024-05-09 12:34:56 INFO {taskinstance.py:1138} Runner: task started",
          "Runner: task started", "INFO", "taskinstance.py:1138"});
  // The nearest header without a caller keeps the name as its logger.
  Expect({"[6461:6552:1128/024740.696026:INFO] NetworkDelegate: request started", "request started",
          "INFO", "NetworkDelegate"});
}

TEST(MessageHeaderTest, AProgramWithItsPidAfterTheLevelIsTheHeaders) {
  // bunyan's CLI: the level, then the program with its pid and the host up to their ':'. Left
  // in the message, "app/4752" is a variable before every message and one-word messages fold.
  Expect({"[2026-11-28T00:16:47.448Z]  INFO: app/29040 on vm: PacketResponder 1 terminating",
          "PacketResponder 1 terminating", "INFO", "app/29040"});
  Expect({"[2026-11-28T01:14:45.038Z]  WARN: app/2339 on vm: VariationsSeedUsage:2",
          "VariationsSeedUsage:2", "WARN", "app/2339"});
  // The nearest lines that keep those words: no pid, no ':' within three names.
  Expect({"[2026-11-28T00:16:47.448Z]  INFO: app/main on vm: PacketResponder 1 terminating",
          "app/main on vm: PacketResponder 1 terminating", "INFO", ""});
  Expect({"[2026-11-28T00:16:47.448Z]  INFO: app/29040 started in 3 ms",
          "app/29040 started in 3 ms", "INFO", ""});
}

TEST(MessageHeaderTest, NamesBeforeABracketedTimeAreTheHeaders) {
  // The common log format: a host, an identity and a user (or '-') before the bracketed time.
  // Kept, the user splits one event in two ("-" and "alice" are tokens of different kinds).
  Expect(
      {"127.0.0.1 - - [28/Nov/2026:00:29:11 +0000] \"GET / HTTP/1.1\" 200 230 \"-\" "
       "\"curl/7.88.1\"",
       "\"GET / HTTP/1.1\" 200 230 \"-\" \"curl/7.88.1\"", "", ""});
  Expect({"127.0.0.1 - alice [28/Nov/2026:00:29:11 +0000] \"GET /secret/s.txt HTTP/1.1\" 401 625",
          "\"GET /secret/s.txt HTTP/1.1\" 401 625", "", ""});
  Expect({"10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 2326",
          "\"GET /a.gif HTTP/1.0\" 200 2326", "", ""});
  // A month's name between date separators is a date in a bracket of time words.
  Expect({"[09-May-2024 12:34:56.789] Server startup in 1234 ms", "Server startup in 1234 ms", "",
          ""});
  // The nearest lines that keep every word: a bracket that is no time after names, four names
  // before the time, a month's name that is not between separators.
  Expect({"user alice [admin] logged in", "", "", ""});
  Expect({"backup of host db1 [28/Nov/2026:00:29:11 +0000] done", "", "", ""});
  Expect({"10.0.0.1 - - [Nov/2026] \"GET /a.gif HTTP/1.0\" 200 2326", "", "", ""});
}

TEST(MessageHeaderTest, KeyValueHeaders) {
  // Go's log/slog TextHandler: the message is the value after the time and level fields.
  Expect({"time=2026-11-28T00:16:47.448Z level=INFO msg=\"Deleting block blk_17 file /d/b\"",
          "Deleting block blk_17 file /d/b\"", "INFO", ""});
  Expect({"time=2026-11-28T00:16:47.448Z level=WARN msg=started", "started", "WARN", ""});
  // logrus's text formatter (a quoted time), go-kit (a caller before the level).
  Expect({"time=\"2026-11-28T00:16:47Z\" level=error msg=\"disk full\" dev=sda",
          "disk full\" dev=sda", "error", ""});
  Expect({"ts=2026-11-28T00:16:47.448Z caller=main.go:42 level=info msg=\"listening\"",
          "listening\"", "info", "main.go:42"});
  // A field of context before the message field opens the message with its name (go-kit's
  // `component=`): the message is then the fields as the program wrote them, not a value.
  Expect(
      {"ts=2026-11-28T08:12:35.125Z caller=head.go:564 level=info component=tsdb "
       "msg=\"Replaying chunks\"",
       "component=tsdb msg=\"Replaying chunks\"", "info", "head.go:564"});
  Expect(
      {"ts=2026-11-28T08:12:35.170Z caller=manager.go:214 level=debug component=\"discovery "
       "manager scrape\" msg=\"Discoverer channel closed\"",
       "component=\"discovery manager scrape\" msg=\"Discoverer channel closed\"", "debug",
       "manager.go:214"});
  EXPECT_FALSE(ParseMessageHeader("ts=2026-11-28T08:12:35.170Z level=debug component=\"a b\" "
                                  "msg=\"c d\"")
                   .quoted);
  // A quoted message says so: its own quotes are escaped (msg="\"GET / HTTP/1.1\" 200").
  EXPECT_TRUE(
      ParseMessageHeader("time=2026-11-28T00:16:47.448Z level=INFO msg=\"disk full\"").quoted);
  EXPECT_FALSE(ParseMessageHeader("time=2026-11-28T00:16:47.448Z level=WARN msg=started").quoted);
  EXPECT_FALSE(ParseMessageHeader("2026-11-28 00:16:47 INFO \"quoted\" words").quoted);
  // A quoted message's opening blanks are not the message's; an empty quoted value is none.
  Expect({"time=2026-11-28T01:15:52.190Z level=INFO msg=\"  frame:      0x204402031940\"",
          "frame:      0x204402031940\"", "INFO", ""});
  Expect({"time=2026-11-28T01:15:52.190Z level=INFO msg=\"   \"", "", "", ""});
  // The nearest lines that are no header: key=value pairs without a time or a level, a
  // number that is no time, a message that only starts with a key.
  Expect({"user=alice action=login result=ok", "", "", ""});
  Expect({"ts=1700000000 msg=\"started\"", "", "", ""});
  Expect({"level=high temperature in room 3", "", "", ""});
  // An empty value is no message: the message starts at a word (a fuzzer's line, and the
  // nearest real one).
  for (const std::string_view line :
       {std::string_view("pino=9::3644 \tno= "),
        std::string_view("time=2026-11-28T00:16:47.448Z level=INFO msg= ")}) {
    const MessageHeader h = ParseMessageHeader(line);
    EXPECT_TRUE(h.body == 0 ||
                (h.body < line.size() && line[h.body] != ' ' && line[h.body] != '\t'))
        << line << " body " << h.body;
  }
}

TEST(MessageHeaderTest, KernelMessages) {
  // The kernel's own stamp (seconds since boot); the subsystem is the message's.
  Expect({"[   12.345678] usb 1-1: new high-speed USB device number 2",
          "usb 1-1: new high-speed USB device number 2", "", ""});
  Expect({"<6>[ 3120.000201] EXT4-fs (sda1): mounted filesystem",
          "EXT4-fs (sda1): mounted filesystem", "", ""});
  Expect({"[   12.345678] 70 tasks queued", "70 tasks queued", "", ""});
  Expect({"Jun 17 07:07:00 combo kernel: Linux version 2.6.5-1.358", "Linux version 2.6.5-1.358",
          "", "kernel"});
  // The kernel's stamp after the program in a syslog file is the header's too ...
  Expect({"Nov 28 01:14:45 combo kernel: [18001.820240] usb 1-1: new high-speed USB device",
          "usb 1-1: new high-speed USB device", "", "kernel"});
  Expect(
      {"- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 kernel: [   12.345678] "
       "VariationsSeedUsage:2",
       "VariationsSeedUsage:2", "", "kernel"});
  Expect({"Nov 28 01:14:45 combo app[12]: [2026-11-28 01:14:45] job 3 done", "job 3 done", "",
          "app[12]"});
  // ... but a bracketed number that is no time (no clock, no date, not seconds with
  // microseconds) is the message's.
  Expect(
      {"Nov 28 01:14:45 combo app[12]: [2.5] retries left", "[2.5] retries left", "", "app[12]"});
}

TEST(MessageHeaderTest, MessagesWithoutHeaderKeepEveryWord) {
  for (std::string_view line : {
           "42 files removed",
           "Connection closed by 10.1.2.3 port 22",
           "PacketResponder 1 for block blk_38865049 terminating",
           "ERROR",  // a header and nothing after it is no header
           "2015-10-18 18:01:47,978",
           "134681 node-246 unix.hw state_change.unavailable 1077804742 1 Component State",
           "[main] started",
           "I/O error: disk failed",  // not Android's "I/Tag:"
           "I/O: retry",
           "[12.5] degrees",
           "INFO:",
           "20171223|no time before the bar|x",
           "error\tunused",
           "A, B and C went home",
           "[x][y] z",
           "",
       }) {
    Expect({line, "", "", ""});
  }
}

TEST(MessageHeaderTest, ALongLeadingBracketIsNotAField) {
  std::string line = "[" + std::string(300, 'x') + "] 12:00:00 INFO a: b";
  EXPECT_EQ(ParseMessageHeader(line).body, 0u);
}

// Lines written by the programs themselves, run on the build machine (Kafka 3.9's broker
// through log4j 1 (reload4j) with its own pattern and with a thread pattern, logback 1.3,
// log4j 2.23, java.util.logging (JDK 17), clickhouse-server 18.16, headless Chromium, CPython 3
// logging, Go's log and klog v2, nginx 1.22, Apache httpd 2.4, PostgreSQL 15, MariaDB 10.11,
// Redis 7.0, journalctl 252); the Loghub lines of programs that cannot run here (Thunderbird's
// syslog, HealthApp, Windows CBS, Android logcat) are their published samples. Expected: what
// the program adds before the message is out of the body.
TEST(MessageHeaderTest, RealPrograms) {
  // Kafka's "[%d] %p %m (%c)": the logger at the end is the header's, and the message (with
  // its own "[Broker id=1]" prefix) follows the level.
  Expect(
      {"[2026-11-27 23:17:20,843] INFO [Broker id=1] Transitioning 1 partition(s) to local "
       "leaders. (state.change.logger)",
       "[Broker id=1] Transitioning 1 partition(s) to local leaders.", "INFO",
       "state.change.logger"});
  Expect(
      {"2026-11-27 23:17:08.342 INFO  [main] kafka.server.ControllerServer - "
       "[ControllerServer id=1] Starting controller",
       "[ControllerServer id=1] Starting controller", "INFO", "kafka.server.ControllerServer"});
  // Java: logback 1.3's default pattern, log4j 2.23 with two patterns, java.util.logging with
  // a one-line format and its default two-line one (the first line names the class and
  // method), threads named with spaces.
  Expect(
      {"23:50:07.861 [pool-1 worker 3] WARN com.example.orders.OrderService -- Retrying "
       "payment for order 1042 (attempt 2 of 5)",
       "Retrying payment for order 1042 (attempt 2 of 5)", "WARN",
       "com.example.orders.OrderService"});
  Expect(
      {"2026-11-27 23:50:13.258 [HTTP request handler 12] INFO  "
       "com.example.orders.OrderService - Order 1042 accepted for customer c-77",
       "Order 1042 accepted for customer c-77", "INFO", "com.example.orders.OrderService"});
  Expect(
      {"2026-11-27T23:50:13,258 ERROR [pool-1 worker 3] OrderService:11 - Failed to reserve "
       "stock for item sku-991: timeout",
       "Failed to reserve stock for item sku-991: timeout", "ERROR", "OrderService:11"});
  Expect(
      {"2026-11-27 23:50:15.367 SEVERE com.example.orders.OrderService - Failed to reserve "
       "stock for item sku-991: timeout",
       "Failed to reserve stock for item sku-991: timeout", "SEVERE",
       "com.example.orders.OrderService"});
  Expect({"Nov 27, 2026 11:50:17 PM JulApp main", "JulApp main", "", ""});
  Expect({"WARNING: Retrying payment for order 1042 (attempt 2 of 5)",
          "Retrying payment for order 1042 (attempt 2 of 5)", "WARNING", ""});
  // clickhouse-server: thread number padded in brackets, query id in braces, Poco's level.
  Expect({"2026.11.27 23:14:31.558907 [ 2 ] {} <Information> Application: starting up",
          "starting up", "Information", "Application"});
  Expect(
      {"2026.11.27 23:14:31.790751 [ 20 ] {d90279e4-db06-41b3-b7de-3e509a538b0e} "
       "<Information> executeQuery: Read 1 rows, 1.00 B in 0.001 sec., 1244 rows/sec., "
       "1.22 KiB/sec.",
       "Read 1 rows, 1.00 B in 0.001 sec., 1244 rows/sec., 1.22 KiB/sec.", "Information",
       "executeQuery"});
  Expect(
      {"2026.11.27 23:14:31.529030 [ 2 ] {} <Information> : Starting ClickHouse 18.16.1 "
       "with revision 54412",
       "Starting ClickHouse 18.16.1 with revision 54412", "Information", ""});
  // A logger with its class in parentheses before the colon (an instance and its class).
  Expect(
      {"2026.11.28 02:41:51.286542 [ 22 ] {1a58186d-4d77-4142-89e8-c2ec137f6ce2} <Debug> "
       "shop.events (SelectExecutor): Key condition: unknown",
       "Key condition: unknown", "Debug", "shop.events"});
  Expect({"2024-05-09 12:34:56,789 INFO orders.db (Compactor): merged 3 parts", "merged 3 parts",
          "INFO", "orders.db"});
  // Parentheses holding words apart (prose), or a word in lower case, are the message's.
  Expect({"2024-05-09 12:34:56,789 INFO Retrying (attempt 2 of 5): timeout",
          "Retrying (attempt 2 of 5): timeout", "INFO", ""});
  Expect({"2024-05-09 12:34:56,789 INFO Retrying (later): timeout", "Retrying (later): timeout",
          "INFO", ""});
  // Chromium: pid, tid, time, level and caller in one bracket.
  Expect(
      {"[10453:10487:1127/231320.614667:ERROR:dbus/bus.cc:405] Failed to connect to the "
       "bus: Failed to connect to socket /run/dbus/system_bus_socket: No such file or "
       "directory",
       "Failed to connect to the bus: Failed to connect to socket "
       "/run/dbus/system_bus_socket: No such file or directory",
       "ERROR", "dbus/bus.cc:405"});
  Expect(
      {"[10453:10453:1127/231320.825987:WARNING:device/bluetooth/dbus/"
       "bluez_dbus_manager.cc:209] Floss manager service not available, cannot set Floss "
       "enable/disable.",
       "Floss manager service not available, cannot set Floss enable/disable.", "WARNING",
       "device/bluetooth/dbus/bluez_dbus_manager.cc:209"});
  // Python logging: BASIC_FORMAT and common formats.
  Expect({"WARNING:myapp.db:Connection from 10.0.3.7 port 51234 closed",
          "Connection from 10.0.3.7 port 51234 closed", "WARNING", "myapp.db"});
  Expect(
      {"2026-11-27 23:11:54,317 - myapp.db - WARNING - Connection from 10.0.3.7 port 51234 "
       "closed",
       "Connection from 10.0.3.7 port 51234 closed", "WARNING", "myapp.db"});
  Expect({"2026-11-27 23:11:54,333 WARNING myapp.db: Connection from 10.0.3.7 port 51234 closed",
          "Connection from 10.0.3.7 port 51234 closed", "WARNING", "myapp.db"});
  Expect(
      {"2026-11-27 23:11:54,334 [WARNING] myapp.db: Connection from 10.0.3.7 port 51234 "
       "closed",
       "Connection from 10.0.3.7 port 51234 closed", "WARNING", "myapp.db"});
  Expect(
      {"2026-11-27 23:11:54,334 WARNING  [Worker pool 0] myapp.db - Connection from "
       "10.0.3.7 port 51234 closed",
       "Connection from 10.0.3.7 port 51234 closed", "WARNING", "myapp.db"});
  Expect(
      {"[2026-11-27 23:11:54,334] {app.py:3} WARNING - Connection from 10.0.3.7 port 51234 "
       "closed",
       "Connection from 10.0.3.7 port 51234 closed", "WARNING", "app.py:3"});
  Expect(
      {"2026-11-27 23:11:54,335 8329 WARNING myapp.db [-] Connection from 10.0.3.7 port "
       "51234 closed",
       "Connection from 10.0.3.7 port 51234 closed", "WARNING", "myapp.db"});
  // Django's "verbose" ("%(levelname)s %(asctime)s %(module)s %(process)d %(thread)d"): the
  // level and time are found; module, pid and thread id stay in the body (not done).
  Expect(
      {"WARNING 2026-11-27 23:11:54,334 app 8329 140417425880768 Connection from 10.0.3.7 "
       "port 51234 closed",
       "app 8329 140417425880768 Connection from 10.0.3.7 port 51234 closed", "WARNING", ""});
  // Go: log's default and Lshortfile flags, klog.
  Expect({"2026/11/27 23:13:17 Connection from 10.0.3.7 port 51234 closed",
          "Connection from 10.0.3.7 port 51234 closed", "", ""});
  Expect({"2026/11/27 23:13:17.150431 main.go:15: Connection from 10.0.3.7 port 51234 closed",
          "Connection from 10.0.3.7 port 51234 closed", "", "main.go:15"});
  Expect({"W1127 23:13:17.150501   10380 main.go:21] Request a1b2c3 completed in 12 ms",
          "Request a1b2c3 completed in 12 ms", "W", "main.go:21"});
  // nginx: the pid#tid is taken for the logger; the connection number "*1" is the message's.
  Expect(
      {"2026/11/27 23:13:32 [error] 10884#10884: *1 open() \"/tmp/hs/ng/www/missing1.html\" "
       "failed (2: No such file or directory), client: 127.0.0.1, server: , request: \"GET "
       "/missing1.html HTTP/1.1\", host: \"127.0.0.1:18089\"",
       "*1 open() \"/tmp/hs/ng/www/missing1.html\" failed (2: No such file or directory), "
       "client: 127.0.0.1, server: , request: \"GET /missing1.html HTTP/1.1\", host: "
       "\"127.0.0.1:18089\"",
       "error", "10884#10884"});
  // Apache httpd 2.4.
  Expect(
      {"[Fri Nov 27 23:13:54.785332 2026] [core:info] [pid 11448:tid 11478] [client "
       "127.0.0.1:54168] AH00128: File does not exist: /tmp/hs/ap/www/missing1.html",
       "AH00128: File does not exist: /tmp/hs/ap/www/missing1.html", "info", ""});
  Expect(
      {"[Fri Nov 27 23:13:54.872359 2026] [proxy:error] [pid 11447:tid 11452] "
       "(111)Connection refused: AH00957: http: attempt to connect to 127.0.0.1:9 "
       "(127.0.0.1:9) failed",
       "(111)Connection refused: AH00957: http: attempt to connect to 127.0.0.1:9 "
       "(127.0.0.1:9) failed",
       "error", ""});
  // PostgreSQL: "LOG" is no level word the grammar knows; it is taken for the logger.
  Expect(
      {"2026-11-27 23:14:06.621 UTC [12005] ERROR:  relation \"nosuch\" does not exist at "
       "character 15",
       "relation \"nosuch\" does not exist at character 15", "ERROR", ""});
  Expect(
      {"2026-11-27 23:14:06.492 UTC [11992] LOG:  database system is ready to accept "
       "connections",
       "database system is ready to accept connections", "", "LOG"});
  // MariaDB: thread id, then "[Note]" / "[Warning]".
  Expect(
      {"2026-11-27 23:14:20 4 [Warning] Access denied for user 'bad'@'localhost' (using "
       "password: YES)",
       "Access denied for user 'bad'@'localhost' (using password: YES)", "Warning", ""});
  Expect(
      {"2026-11-27 23:14:14 0 [Note] InnoDB: Using io_uring", "Using io_uring", "Note", "InnoDB"});
  // dpkg 1.21 (/var/log/dpkg.log): the time, then the message; a package version after the
  // action and package names is not a second time field (it would make the names a header).
  Expect({"2025-06-24 14:36:53 configure libxau6:amd64 1:1.0.9-1 <none>",
          "configure libxau6:amd64 1:1.0.9-1 <none>", "", ""});
  Expect({"2025-06-24 14:36:25 trigproc man-db:amd64 2.11.2-2 <none>",
          "trigproc man-db:amd64 2.11.2-2 <none>", "", ""});
  // A version opening with a year is no date either: a date's month has two digits.
  Expect({"2025-06-24 14:39:37 configure x11proto-dev:all 2022.1-1 <none>",
          "configure x11proto-dev:all 2022.1-1 <none>", "", ""});
  // Redis: "pid:role" before the time, then its level mark ("*", "#", "." or "-"), which
  // ends the header but is not taken for a level.
  Expect({"10948:M 27 Nov 2026 23:13:34.614 * Ready to accept connections",
          "Ready to accept connections", "", ""});
  Expect({"10948:M 27 Nov 2026 23:13:34.613 * monotonic clock: POSIX clock_gettime",
          "monotonic clock: POSIX clock_gettime", "", ""});
  Expect({"5993:M 27 Nov 2026 23:08:04.629 - DB 0: 20 keys (0 volatile) in 32 slots HT.",
          "DB 0: 20 keys (0 volatile) in 32 slots HT.", "", ""});
  // journalctl 252 (-o short-iso and short-precise) of entries written into a journal file
  // with systemd-journal-remote (there is no journald here).
  Expect(
      {"2026-11-27T23:51:25+0000 web-01 kernel: usb 1-1: new high-speed USB device number 2 "
       "using xhci_hcd",
       "usb 1-1: new high-speed USB device number 2 using xhci_hcd", "", "kernel"});
  Expect({"2026-11-27T23:51:25+0000 web-01 cron[2211]: (root) CMD (run-parts /etc/cron.hourly)",
          "(root) CMD (run-parts /etc/cron.hourly)", "", "cron[2211]"});
  Expect(
      {"Nov 27 23:51:25.244655 web-01 sshd[1240]: Failed password for invalid user admin "
       "from 10.0.0.9 port 40022 ssh2",
       "Failed password for invalid user admin from 10.0.0.9 port 40022 ssh2", "", "sshd[1240]"});
  // Loghub's published samples of programs that do not run here.
  Expect(
      {"- 1131566461 2005.11.09 dn228 Nov 9 12:01:01 dn228/dn228 crond(pam_unix)[2915]: "
       "session closed for user root",
       "session closed for user root", "", "crond(pam_unix)[2915]"});
  Expect({"20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579",
          "onStandStepChanged 3579", "", "Step_LSC"});
  Expect(
      {"2016-09-28 04:30:30, Info                  CBS    Loaded Servicing Stack "
       "v6.1.7601.23505 with Core: C:\\Windows\\winsxs\\amd64",
       "Loaded Servicing Stack v6.1.7601.23505 with Core: C:\\Windows\\winsxs\\amd64", "Info",
       "CBS"});
  Expect(
      {"03-17 16:13:38.811  1702  2395 D WindowManager: printFreezingDisplayLogsopening app "
       "wtoken = AppWindowToken",
       "printFreezingDisplayLogsopening app wtoken = AppWindowToken", "D", "WindowManager"});
}

// Words that are levels only in brackets ("[Note]", "<Information>") begin bare messages.
TEST(MessageHeaderTest, BracketOnlyLevelsAreMessageWordsBare) {
  Expect({"Note: the server is starting", "", "", ""});
  Expect({"Information about the disk follows", "", "", ""});
  // A dotted name in parentheses ending the line is a trailing logger only after a level
  // header, and only with three or more parts.
  Expect({"2026-11-27 23:17:20,843 INFO Reading (app.conf)", "Reading (app.conf)", "INFO", ""});
  Expect({"Reading (a.b.c)", "", "", ""});
}

// A logger written after the message ("[%d] %p %m (%c)", log4j; Kafka) is the header's and
// out of the message; the layout writes nothing between the level and the message, so a
// bracket or a name with ':' there is the message's: two methods' lines ("initializeNew
// Publishers:", "maybePublishMetadata(LOG_DELTA):") keep their names. Without a logger at the
// end, the same bracket is a thread and the name a logger.
TEST(MessageHeaderTest, ALoggerAfterTheMessageIsTheHeadersAndTheMessageFollowsTheLevel) {
  Expect(
      {"[2026-11-28 02:49:55,704] INFO [MetadataLoader id=1] initializeNewPublishers: The loader "
       "finished catching up (org.apache.kafka.image.loader.MetadataLoader)",
       "[MetadataLoader id=1] initializeNewPublishers: The loader finished catching up", "INFO",
       "org.apache.kafka.image.loader.MetadataLoader"});
  Expect(
      {"[2026-11-28 02:51:29,818] INFO [MetadataLoader id=1] maybePublishMetadata(LOG_DELTA): "
       "The loader finished catching up (org.apache.kafka.image.loader.MetadataLoader)",
       "[MetadataLoader id=1] maybePublishMetadata(LOG_DELTA): The loader finished catching up",
       "INFO", "org.apache.kafka.image.loader.MetadataLoader"});
  Expect({"[2026-11-28 02:51:29,818] WARN Session expired: member m-1 (kafka.coordinator.Group)",
          "Session expired: member m-1", "WARN", "kafka.coordinator.Group"});
  Expect(
      {"[2026-11-28 02:51:29,818] INFO [MetadataLoader id=1] initializeNewPublishers: The loader "
       "finished catching up",
       "The loader finished catching up", "INFO", "initializeNewPublishers"});
  Expect({"2026-11-28 02:51:29,818 INFO [main] kafka.server.Broker: started (app.conf)",
          "started (app.conf)", "INFO", "kafka.server.Broker"});
  // A layout writes one logger: after a thread and a qualified logger, the name in
  // parentheses at the end is the message's (Kafka's config dump ends with it).
  Expect(
      {"2026-11-28 18:32:32,854 INFO [Thread-4 (worker)] com.example.jobs.Scheduler: values "
       "follow (kafka.server.KafkaConfig)",
       "values follow (kafka.server.KafkaConfig)", "INFO", "com.example.jobs.Scheduler"});
  // Right after the level, even a qualified name with ':' is the message's there.
  Expect(
      {"[2026-11-28 17:16:16,684] DEBUG com.apple.icloud.fmfd.heartbeat: scheduler_evaluate_"
       "activity told me to run this job (com.apple.xpc.launchd)",
       "com.apple.icloud.fmfd.heartbeat: scheduler_evaluate_activity told me to run this job",
       "DEBUG", "com.apple.xpc.launchd"});
  const std::string_view line =
      "[2026-11-28 02:51:29,818] INFO Shutting down. (kafka.log.LogManager)";
  EXPECT_EQ(ParseMessageHeader(line).tail, std::string_view(" (kafka.log.LogManager)").size());
}

// MySQL's and MariaDB's general query log writes its time column only when the second
// changes; a line opening with a tab left that column empty, and the fields after it (the
// connection id) are the header's as on a line with the time. A tab-indented line whose first
// word is no time or level field (a stack frame, a continuation) keeps every word.
TEST(MessageHeaderTest, AnEmptyFirstColumnIsStillTheHeadersColumn) {
  Expect({"261128  2:15:11\t     7 Connect\tapp@127.0.0.1 on shop using TCP/IP",
          "Connect\tapp@127.0.0.1 on shop using TCP/IP", "", ""});
  Expect({"\t\t     8 Connect\tapp@127.0.0.1 on shop using TCP/IP",
          "Connect\tapp@127.0.0.1 on shop using TCP/IP", "", ""});
  Expect({"\t\t   296 Query\tCOMMIT", "Query\tCOMMIT", "", ""});
  Expect(
      {"\tat org.apache.catalina.core.StandardWrapperValve.invoke(StandardWrapperValve.java:199)",
       "", "", ""});
  Expect({"\tProcess 1234 waits for ShareLock on transaction 5678", "", "", ""});
  Expect({"\tconnections.max.reauth.ms = 0", "", "", ""});
  Expect({"     8 Connect\tapp@127.0.0.1 on shop using TCP/IP", "", "", ""});
}

// HeaderLearner: lines of one scope (the same id) teach it their header shape.
MessageHeader Learn(HeaderLearner& learner, std::uint64_t scope, std::string_view line) {
  return learner.Parse(scope, line);
}

std::string LogbackLine(int i) {
  return "2024-05-09 12:34:" + std::to_string(10 + i) + ",789 INFO  [main] c.e.Foo: request " +
         std::to_string(i) + " done";
}

TEST(HeaderLearnerTest, AnUnknownLevelWordTakesTheScopesConfirmedShape) {
  HeaderLearner learner;
  const std::string_view audit =
      "2024-05-09 12:35:00,001 AUDIT [main] c.e.Foo: user admin logged in";
  // The grammar alone takes "AUDIT" for a logger and stops after the thread.
  EXPECT_EQ(audit.substr(ParseMessageHeader(audit).body), "c.e.Foo: user admin logged in");
  EXPECT_EQ(audit.substr(Learn(learner, 7, audit).body), "c.e.Foo: user admin logged in");
  for (int i = 0; i < 8; ++i) {
    const std::string line = LogbackLine(i);
    EXPECT_EQ(line.substr(Learn(learner, 7, line).body), "request " + std::to_string(i) + " done");
  }
  const MessageHeader h = Learn(learner, 7, audit);
  EXPECT_EQ(audit.substr(h.body), "user admin logged in");
  EXPECT_EQ(h.level, "AUDIT");
  EXPECT_EQ(h.logger, "c.e.Foo");
  // Another scope has confirmed nothing: the grammar's answer.
  EXPECT_EQ(audit.substr(Learn(learner, 8, audit).body), "c.e.Foo: user admin logged in");
}

// A lower-case word and ':' after the thread reads as a logger to the grammar. Where the
// scope's confirmed header has no logger, it is the message's key and stays in the message
// ("statement: DROP ..." is not "DROP ..."); where the scope's lines have a logger there
// (Python's "[%(threadName)s] %(name)s:"), it is still the logger.
// Right after time fields alone, a word of lower-case letters and ':' is the message's key
// (Go's log: "statement: ..." is the message); a program with its pid there, or a level word
// (winston's "info:"), is still header.
TEST(MessageHeaderTest, ALowerCaseWordRightAfterTheTimeIsTheMessagesKey) {
  const std::string_view go = "2026/11/28 17:38:55 statement: DROP TABLE items;";
  MessageHeader h = ParseMessageHeader(go);
  EXPECT_EQ(go.substr(h.body), "statement: DROP TABLE items;");
  EXPECT_EQ(h.logger, "");
  const std::string_view program = "2026/11/28 17:38:55 sshd[12]: Accepted key for bob";
  h = ParseMessageHeader(program);
  EXPECT_EQ(program.substr(h.body), "Accepted key for bob");
  EXPECT_EQ(h.logger, "sshd[12]");
  const std::string_view level = "2026-11-28T17:38:55.123Z info: request done";
  h = ParseMessageHeader(level);
  EXPECT_EQ(level.substr(h.body), "request done");
}

TEST(HeaderLearnerTest, ALoggerTheScopesHeaderHasNotIsTheMessagesKey) {
  HeaderLearner learner;
  const auto line = [](int i, std::string_view message) {
    return "[2026-11-28 17:34:" + std::to_string(10 + i) + " +0000] [9077] [INFO] [Thread-4] " +
           std::string(message);
  };
  const std::string statement = line(0, "statement: DROP TABLE items;");
  EXPECT_EQ(statement.substr(ParseMessageHeader(statement).body), "DROP TABLE items;");
  for (int i = 0; i < 8; ++i) {
    const std::string l = line(i, "connection received host=10.0.0.1 port=" + std::to_string(i));
    EXPECT_EQ(l.substr(Learn(learner, 3, l).body).substr(0, 19), "connection received");
  }
  MessageHeader h = Learn(learner, 3, statement);
  EXPECT_EQ(statement.substr(h.body), "statement: DROP TABLE items;");
  EXPECT_EQ(h.logger, "");
  EXPECT_EQ(h.level, "INFO");
  // A scope whose lines have a lower-case logger there keeps it.
  for (int i = 0; i < 8; ++i) {
    const std::string l = line(i, "kernel: request " + std::to_string(i) + " done");
    EXPECT_EQ(l.substr(Learn(learner, 4, l).body), "request " + std::to_string(i) + " done");
  }
  h = Learn(learner, 4, statement);
  EXPECT_EQ(statement.substr(h.body), "DROP TABLE items;");
  EXPECT_EQ(h.logger, "statement");
}

TEST(HeaderLearnerTest, AGuessTheScopesShapeDoesNotFitStaysAGuess) {
  HeaderLearner learner;
  // Go's log: a time, then the message. A burst of messages opening with "word:" reads as a
  // program after the time and confirms that shape for a while ...
  const auto go = [](int i, std::string_view message) {
    return "2026/11/28 02:36:" + std::to_string(10 + i) + " " + std::string(message);
  };
  for (int i = 0; i < 8; ++i) {
    const std::string line = go(i, "pam_env(sshd:session): deprecated reading of environment");
    EXPECT_EQ(line.substr(Learn(learner, 1, line).body), "deprecated reading of environment");
  }
  // ... and a plain message, which the grammar guesses a time header for, keeps that guess
  // while the shape does not fit it, as before the burst: its stamp never joins the template.
  const std::string first = go(0, "User child is on pid 13211");
  const std::string later = go(9, "User child is on pid 13370");
  EXPECT_EQ(first.substr(ParseMessageHeader(first).body), "User child is on pid 13211");
  EXPECT_EQ(later.substr(Learn(learner, 1, later).body), "User child is on pid 13370");
  // A line with a level the grammar knows keeps the grammar's header.
  const std::string_view other = "2024-05-09 12:35:00 ERROR disk full";
  EXPECT_EQ(other.substr(Learn(learner, 1, other).body), "disk full");
  // The nearest line that is no guess at all (no time, no level) keeps every word.
  const std::string_view plain = "User child is on pid 13370";
  EXPECT_EQ(Learn(learner, 1, plain).body, 0u);
}

TEST(HeaderLearnerTest, TwoProgramsHeadersWithoutLevelDoNotDependOnTheVote) {
  HeaderLearner learner;
  // One scope, two programs: "app[pid]:" lines confirm their shape; the kernel's lines have
  // one more field (its stamp). Every kernel line loses its stamp, whether it voted (one line
  // in kVoteEvery once the shape is confirmed) or not.
  for (int i = 0; i < 90; ++i) {
    const std::string app = "Nov 28 01:14:" + std::to_string(10 + i) + " combo app[" +
                            std::to_string(100 + i) + "]: job " + std::to_string(i) + " done";
    EXPECT_EQ(app.substr(Learn(learner, 5, app).body), "job " + std::to_string(i) + " done");
    if (i % 2 != 0) continue;  // a period of three lines: kernel lines vote too
    const std::string kernel = "Nov 28 01:14:" + std::to_string(10 + i) + " combo kernel: [" +
                               std::to_string(18000 + i) + ".820240] usb 1-1: reset";
    EXPECT_EQ(kernel.substr(Learn(learner, 5, kernel).body), "usb 1-1: reset") << i;
  }
}

TEST(HeaderLearnerTest, AFewMessagesStartingWithALevelWordConfirmNothing) {
  HeaderLearner learner;
  // Bare messages, a few of which begin with a level word: the scope's lines mostly have no
  // header, so nothing is stripped from the others.
  for (int i = 0; i < 40; ++i) {
    const std::string line = i % 8 == 0 ? "ERROR task " + std::to_string(i) + " failed"
                                        : "Progress of task " + std::to_string(i) + " is 0.5";
    const MessageHeader h = Learn(learner, 3, line);
    if (i % 8 == 0) {
      EXPECT_EQ(line.substr(h.body), "task " + std::to_string(i) + " failed");
    } else {
      EXPECT_EQ(h.body, 0u) << line;
    }
  }
}

TEST(HeaderLearnerTest, ScopesWithoutHeadersTakeNoSlotFromOnesWithAHeader) {
  HeaderLearner learner;
  for (int i = 0; i < 8; ++i) Learn(learner, 7, LogbackLine(i));
  // Many more scopes than slots, of lines without a header (most of a syslog stream).
  for (std::uint64_t scope = 100; scope < 20000; ++scope) {
    Learn(learner, scope * 0x9E3779B97F4A7C15ULL, "plain text without a header");
  }
  const std::string_view audit =
      "2024-05-09 12:35:00,001 AUDIT [main] c.e.Foo: user admin logged in";
  EXPECT_EQ(audit.substr(Learn(learner, 7, audit).body), "user admin logged in");
}

TEST(HeaderLearnerTest, MemoryIsAFixedTableAllocatedOnTheFirstHeader) {
  HeaderLearner learner;
  for (std::uint64_t scope = 0; scope < 5000; ++scope) Learn(learner, scope, "plain text");
  EXPECT_EQ(learner.MemoryUsage(), 0u);
  for (std::uint64_t scope = 0; scope < 5000; ++scope) {
    Learn(learner, scope * 0x9E3779B97F4A7C15ULL, LogbackLine(static_cast<int>(scope % 40)));
  }
  const std::size_t used = learner.MemoryUsage();
  EXPECT_GT(used, 0u);
  EXPECT_LE(used, HeaderLearner::kEntries * 32);
  for (std::uint64_t scope = 5000; scope < 50000; ++scope) {
    Learn(learner, scope * 0x9E3779B97F4A7C15ULL, LogbackLine(static_cast<int>(scope % 40)));
  }
  EXPECT_EQ(learner.MemoryUsage(), used);
}

// A peer's endpoint opening the message, an IPv4 address with its port alone or after a name
// and '/', then a word, is context: the message starts after it.
TEST(PeerEndpointTest, AnAddressWithItsPortOpeningTheMessageIsSkipped) {
  const std::string a = "127.0.0.1:46810 peer info: IV_VER=2.6.14";
  EXPECT_EQ(SkipPeerEndpoint(a, 0), a.find("peer"));
  const std::string b = "alice/127.0.0.1:46810 MULTI_sva: pool returned IPv4=10.199.0.2";
  EXPECT_EQ(SkipPeerEndpoint(b, 0), b.find("MULTI"));
  const std::string c = "2026-11-28 13:57:37 10.251.194.213:50010 Served block blk_1 to /10.0.0.2";
  EXPECT_EQ(SkipPeerEndpoint(c, 20), c.find("Served"));
  const std::string d = "11.client-channel.google.com:443 error : Could not connect to proxy";
  EXPECT_EQ(SkipPeerEndpoint(d, 0), d.find("error"));
  const std::string e = "wpad:80 error : Could not connect to proxy";
  EXPECT_EQ(SkipPeerEndpoint(e, 0), e.find("error"));
}

// A peer's endpoint right after the time fields (an address or a host's name in lower case,
// with its port) is the message's, never a host or a program: a
// program writes its own host without a port. So the names after it are no logger
// (`peer info:` stays the message's, as in the bare message), whatever the line's scope.
TEST(PeerEndpointTest, AnEndpointAfterTheTimeIsNoHeaderField) {
  Expect({"2026-11-28 13:57:37 127.0.0.1:46810 peer info: IV_VER=2.6.14",
          "127.0.0.1:46810 peer info: IV_VER=2.6.14", "", ""});
  Expect({"2026-11-28 13:57:37 127.0.0.1:46810 VERIFY OK: depth=0, CN=alice",
          "127.0.0.1:46810 VERIFY OK: depth=0, CN=alice", "", ""});
  Expect({"2026-11-28 13:58:58 alice/127.0.0.1:53472 MULTI: Learn: 10.199.0.2 -> alice",
          "alice/127.0.0.1:53472 MULTI: Learn: 10.199.0.2 -> alice", "", ""});
  Expect({"Nov 28 13:58:58 mtalk.google.com:5228 peer gone: reset by peer",
          "mtalk.google.com:5228 peer gone: reset by peer", "", ""});
  // A confirmed shape with a host and a logger there does not take it either.
  HeaderLearner learner;
  for (int i = 0; i < 8; ++i) {
    learner.Parse(7, "2026-11-28 13:57:34 vpn1 openvpn info: Initialization Sequence Completed");
  }
  const std::string line = "2026-11-28 13:57:37 127.0.0.1:46810 peer info: IV_VER=2.6.14";
  EXPECT_EQ(line.substr(learner.Parse(7, line).body), "127.0.0.1:46810 peer info: IV_VER=2.6.14");
  // The nearest that stay header fields: a host without a port, a class and its line (the
  // caller), an access log's client with its port before the bracketed time.
  Expect({"2026-11-28 13:57:37 OrderService:11 - Failed to reserve stock",
          "Failed to reserve stock", "", "OrderService:11"});
  Expect({"2026-11-28 13:57:37 vpn1 openvpn[12]: peer info: IV_VER=2.6.14",
          "peer info: IV_VER=2.6.14", "", "openvpn[12]"});
  Expect({"127.0.0.1:5555 - - [28/Nov/2026:00:29:11 +0000] \"GET / HTTP/1.1\" 200 230",
          "\"GET / HTTP/1.1\" 200 230", "", ""});
}

// The nearest openings that are no peer: an address without a port, a port without an address,
// an endpoint before a bracket or a number, a path, an empty label, one later in the line.
TEST(PeerEndpointTest, OtherOpeningsAreTheMessages) {
  for (const std::string line :
       {"127.0.0.1 - - [28/Nov/2026:05:07:05 +0000] \"GET / HTTP/1.1\"",
        "127.0.0.1:42960 [28/Nov/2026:05:07:05.338] web app/app2 0/0/0/63/63 200",
        "/var/log/syslog:12 opened", "a..b:80 empty label", "Note: --cipher is not set",
        "127.0.0.1:46810 3 retries", "1.2.3:80 short", "1.2.3.4.5:80 long", "10.0.0.1:123456 port",
        "/127.0.0.1:80 rooted", "x y/127.0.0.1:80 words", "connect from 127.0.0.1:46810 refused"}) {
    EXPECT_EQ(SkipPeerEndpoint(line, 0), 0u) << line;
  }
}

}  // namespace
}  // namespace logfold
