// The syslog parser against its peers' own test tables, field by field: rsyslog's parser
// testbench (tests/parsertest-parse1.sh, -parse2, -parse3, -parse-3164-buggyday,
// -parse-nodate, -parse_invld_regex, rfc5424parser-sp_at_msg_start, prop-programname,
// hostname-with-slash-pmrfc5424, empty-app-name) and go-syslog's valid RFC 3164 and RFC 5424
// cases (rfc3164/machine_test.go, rfc5424/machine_test.go).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/log_record.h"
#include "pipeline/syslog_parser.h"
#include "pipeline/syslog_time.h"

namespace logfold {
namespace {

// 2026-12-31T12:00:00Z: every BSD stamp of the cases (none later than Dec 31) lands in 2026.
constexpr TimeUs kArrival = 1798718400000000;

struct Case {
  std::string_view source;  // the reference file the case comes from
  std::string_view line;
  int pri;                   // -1: no PRI expected
  std::string_view time;     // RFC 3339 (Z assumed without offset); "" = no timestamp
  std::string_view host;     // "" = absent (rsyslog falls back to the local host name)
  std::string_view app;      // rsyslog's %programname%, go-syslog's appname
  std::string_view procid;   // "*" = not checked by the reference
  std::string_view message;  // rsyslog's %msg% less the SP after an RFC 3164 tag (see README)
  // rsyslog's %syslogtag% where it says more than %programname% (logfold's `tag`), else "".
  std::string_view tag = {};
};

// The cases where logfold deliberately reads differently from the reference, with the reason
// also listed in config/README.md ("Parser conformance").
constexpr std::string_view kDocumentedDifferences[] = {
    // No PRI and no timestamp: rsyslog reads the first words as hostname and tag; logfold
    // keeps the plain line whole (no_header).
    "This is a message!",
    // Where go-syslog and rsyslog disagree, logfold follows rsyslog (checked against
    // rsyslogd 8.2302): a word followed by a space is a tag...
    "<166>Jul  6 20:33:28 ABC-1-234567 Some message here",
    "<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!",
    // ... and a line without PRI is user.notice (13), not PRI 0.
    "Oct 22 10:52:01 10.1.2.3 sched[0]: That's All Folks!",
};

constexpr Case kCases[] = {
    // rsyslog tests/parsertest-parse1.sh
    {"rsyslog parse1",
     "<167>Mar  6 16:57:54 172.20.245.8 %PIX-7-710005: UDP request discarded from SERVER1/2741 "
     "to test_app:255.255.255.255/61601",
     167, "2026-03-06T16:57:54", "172.20.245.8", "%PIX-7-710005", "",
     "UDP request discarded from SERVER1/2741 to test_app:255.255.255.255/61601"},
    {"rsyslog parse1",
     "<167>Mar 27 19:06:53 source_server sshd(pam_unix)[12750]: session opened for user foo by "
     "(uid=0)",
     167, "2026-03-27T19:06:53", "source_server", "sshd(pam_unix)", "12750",
     "session opened for user foo by (uid=0)"},
    {"rsyslog parse1",
     "<167>Apr  6 15:07:10 lxcvs07 sshd(pam_unix)[31738]: session closed for user cvsadmin", 167,
     "2026-04-06T15:07:10", "lxcvs07", "sshd(pam_unix)", "31738",
     "session closed for user cvsadmin"},
    {"rsyslog parse1",
     "<167>Jul 31 21:39:21 example-b example-gw[10538]: disconnect host=/192.0.2.1 "
     "destination=192.0.2.2/11282 in=3274 out=1448 duration=0",
     167, "2026-07-31T21:39:21", "example-b", "example-gw", "10538",
     "disconnect host=/192.0.2.1 destination=192.0.2.2/11282 in=3274 out=1448 duration=0"},
    {"rsyslog parse1",
     "<167>AUG 10 22:18:24 host tag This msg contains 8-bit European chars: "
     "\xC3\xA4\xC3\xB6\xC3\xBC",
     167, "2026-08-10T22:18:24", "host", "tag", "",
     "This msg contains 8-bit European chars: \xC3\xA4\xC3\xB6\xC3\xBC"},
    {"rsyslog parse1", "<167> Mar  7 19:06:53 example tag: testmessage (only date actually tested)",
     167, "2026-03-07T19:06:53", "example", "tag", "", "testmessage (only date actually tested)"},
    {"rsyslog parse1",
     "<167>Mar 7 2008 19:06:53: example tag: testmessage (only date actually tested)", 167,
     "2008-03-07T19:06:53", "example", "tag", "", "testmessage (only date actually tested)"},
    {"rsyslog parse1",
     "<167>Mar 7 2008 19:06:53 example tag: testmessage (only date actually tested)", 167,
     "2008-03-07T19:06:53", "example", "tag", "", "testmessage (only date actually tested)"},
    {"rsyslog parse1", "<167>Mar 7 19:06:53: example tag: testmessage (only date actually tested)",
     167, "2026-03-07T19:06:53", "example", "tag", "", "testmessage (only date actually tested)"},
    {"rsyslog parse1", "<14>Jan  6 2009 15:22:26 localhost", 14, "2009-01-06T15:22:26", "localhost",
     "", "", ""},
    {"rsyslog parse1", "<167>Oct  8 23:05:06 10.321.1.123 05\",result_code=200,b", 167,
     "2026-10-08T23:05:06", "10.321.1.123", "05\",result_code=200,b", "", ""},
    {"rsyslog parse1", "<167>Feb 18 16:01:59 serverX -- MARK --", 167, "2026-02-18T16:01:59",
     "serverX", "--", "", "MARK --"},
    {"rsyslog parse1", "Feb 18 16:01:59 serverX -- MARK --", 13, "2026-02-18T16:01:59", "serverX",
     "--", "", "MARK --"},
    {"rsyslog parse1",
     "<38>Mar 27 19:06:53 source_server 0123456789012345678901234567890123456789: MSG part", 38,
     "2026-03-27T19:06:53", "source_server", "0123456789012345678901234567890123456789", "",
     "MSG part"},
    {"rsyslog parse1", "<29>Oct 16 20:47:24 example-p exam-pl[12345]: connect host= /192.0.2.1", 29,
     "2026-10-16T20:47:24", "example-p", "exam-pl", "12345", "connect host= /192.0.2.1"},
    {"rsyslog parse1", "<34>Oct 11 22:14:15 mymachine su: su root failed for lonvick on /dev/pts/8",
     34, "2026-10-11T22:14:15", "mymachine", "su", "", "su root failed for lonvick on /dev/pts/8"},
    {"rsyslog parse1",
     "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOMsu root failed for "
     "lonvick on /dev/pts/8",
     34, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "su", "",
     "BOMsu root failed for lonvick on /dev/pts/8"},
    {"rsyslog parse1",
     "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% Its time to make the "
     "do-nuts.",
     165, "2003-08-24T05:14:15.000003-07:00", "192.0.2.1", "myproc", "8710",
     "%% Its time to make the do-nuts."},
    {"rsyslog parse1",
     "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
     "iut=\"3\" eventSource= \"Application\" eventID=\"1011\"][examplePriority@32473 "
     "class=\"high\"]",
     165, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "evntslog", "", ""},
    {"rsyslog parse1",
     "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
     "iut=\"3\" eventSource= \"Application\" eventID=\"1011\"] BOMAn application event log "
     "entry...",
     165, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "evntslog", "",
     "BOMAn application event log entry..."},
    {"rsyslog parse1",
     "<6>AUG 10 22:18:24 2009  netips-warden2-p [audit] user=[*SMS] src=192.168.11.11 iface=5 "
     "access=9 Update State Reset",
     6, "2026-08-10T22:18:24", "2009", "", "",
     "netips-warden2-p [audit] user=[*SMS] src=192.168.11.11 iface=5 access=9 Update State "
     "Reset"},
    {"rsyslog parse1", "<14>Aug 30 23:00:05 X4711 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
     14, "2026-08-30T23:00:05", "X4711", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "", ""},
    {"rsyslog parse1", "<14>Aug 30 23:00:05 X4711 ", 14, "2026-08-30T23:00:05", "X4711", "", "",
     ""},
    {"rsyslog parse1", "<14>Aug 30 23:00:05 X4711", 14, "2026-08-30T23:00:05", "X4711", "", "", ""},
    {"rsyslog parse1", "<14>Aug 30 23:00:05 ", 14, "2026-08-30T23:00:05", "", "", "", ""},
    {"rsyslog parse1", "<14>Aug 30 23:00:05", 14, "2026-08-30T23:00:05", "", "", "", ""},
    {"rsyslog parse1",
     "<14>2010-08-30T23:00:05Z X4711 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 14,
     "2010-08-30T23:00:05Z", "X4711", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "", ""},
    {"rsyslog parse1", "<14>2010-08-30T23:00:05Z X4711 ", 14, "2010-08-30T23:00:05Z", "X4711", "",
     "", ""},
    {"rsyslog parse1", "<14>2010-08-30T23:00:05Z X4711", 14, "2010-08-30T23:00:05Z", "X4711", "",
     "", ""},
    // rsyslog tests/parsertest-parse2.sh (its template prints no hostname)
    {"rsyslog parse2",
     "<175>Oct 16 23:47:31 #001 MSWinEventLog 0#011Security#01119023582#011Fri Oct 16 16:30:44 "
     "2009#011592#011Security#011rgabcde#011User#011Success Audit#011XSXSXSN01#011Detailed "
     "Tracking#011#0112572#01119013885",
     175, "2026-10-16T23:47:31", "", "#001", "",
     "MSWinEventLog 0#011Security#01119023582#011Fri Oct 16 16:30:44 "
     "2009#011592#011Security#011rgabcde#011User#011Success Audit#011XSXSXSN01#011Detailed "
     "Tracking#011#0112572#01119013885"},
    // rsyslog tests/parsertest-parse3.sh
    {"rsyslog parse3", "<175>Oct 16 2009 23:47:31 hostname tag This is a message", 175,
     "2009-10-16T23:47:31", "hostname", "tag", "", "This is a message"},
    {"rsyslog parse3", "<175>Oct 16 2009 23:47:31 hostname tag[1234] This is a message", 175,
     "2009-10-16T23:47:31", "hostname", "tag", "1234", "This is a message"},
    // rsyslog tests/rfc5424parser-sp_at_msg_start.sh: RFC 5424 MSG keeps a leading SP
    {"rsyslog sp_at_msg_start", "<13>1 2019-05-15T11:21:57+03:00 domain.tld tag - - - nosd-nosp",
     13, "2019-05-15T11:21:57+03:00", "domain.tld", "tag", "", "nosd-nosp"},
    {"rsyslog sp_at_msg_start",
     "<13>1 2019-05-15T11:21:57+03:00 domain.tld tag - - [abc@123 a=\"b\"] sd-nosp", 13,
     "2019-05-15T11:21:57+03:00", "domain.tld", "tag", "", "sd-nosp"},
    {"rsyslog sp_at_msg_start", "<13>1 2019-05-15T11:21:57+03:00 domain.tld tag - - -  nosd-sp", 13,
     "2019-05-15T11:21:57+03:00", "domain.tld", "tag", "", " nosd-sp"},
    {"rsyslog sp_at_msg_start",
     "<13>1 2019-05-15T11:21:57+03:00 domain.tld tag - - [abc@123 a=\"b\"]  sd-sp", 13,
     "2019-05-15T11:21:57+03:00", "domain.tld", "tag", "", " sd-sp"},
    // rsyslog tests/prop-programname.sh
    {"rsyslog prop-programname", "<133>2011-03-01T11:22:12Z host tag/with/slashes msgh ...x", 133,
     "2011-03-01T11:22:12Z", "host", "tag", "*", "msgh ...x", "tag/with/slashes"},
    // rsyslog tests/parsertest-parse-3164-buggyday.sh: a space after the PRI, one- and
    // two-digit days
    {"rsyslog buggyday",
     "<38> Mar  7 19:06:53 example tag: testmessage (only date actually tested)", 38,
     "2026-03-07T19:06:53", "example", "tag", "", "testmessage (only date actually tested)"},
    {"rsyslog buggyday",
     "<38> Mar 17 19:06:53 example tag: testmessage (only date actually tested)", 38,
     "2026-03-17T19:06:53", "example", "tag", "", "testmessage (only date actually tested)"},
    // rsyslog tests/parsertest-parse-nodate.sh: no timestamp (rsyslog then takes its own host
    // name: no hostname was sent), and a line with neither PRI nor timestamp
    {"rsyslog parse-nodate",
     "<27>xapi: [error|xen3|15|Guest liveness monitor D:bca30ab3f1c1|master_connection] Connection "
     "to master died. I will continue to retry indefinitely (supressing future logging of this "
     "message)",
     27, "", "", "xapi", "",
     "[error|xen3|15|Guest liveness monitor D:bca30ab3f1c1|master_connection] Connection to master "
     "died. I will continue to retry indefinitely (supressing future logging of this message)"},
    {"rsyslog parse-nodate", "This is a message!", 13, "", "This", "is", "", "a message!"},
    // rsyslog tests/parsertest-parse_invld_regex.sh: a zero-padded day and a year in the stamp
    {"rsyslog parse_invld_regex", "<175>Feb 08 2008 23:47:31 hostname tag This is a message", 175,
     "2008-02-08T23:47:31", "hostname", "tag", "", "This is a message"},
    // rsyslog tests/hostname-with-slash-pmrfc5424.sh (and -dflt-slash-valid.sh): RFC 5424
    // HOSTNAME is any PRINTUSASCII, '/' included
    {"rsyslog hostname-with-slash",
     "<167>1 2003-03-01T01:00:00.000Z hostname1/hostname2 tcpflood - tag [tcpflood@32473 "
     "MSGNUM=\"0\"] data",
     167, "2003-03-01T01:00:00.000Z", "hostname1/hostname2", "tcpflood", "", "data"},
    // rsyslog tests/empty-app-name.sh: %programname% ends at '/', so a tag that starts with
    // one has an empty programname
    {"rsyslog empty-app-name", "<133>Aug  6 16:57:54 host /no-app-name msgh ...x", 133,
     "2026-08-06T16:57:54", "host", "", "", "msgh ...x", "/no-app-name"},

    // go-syslog rfc3164/machine_test.go, the valid cases (go-syslog's stamp has no year: the
    // arrival's year is expected here, as logfold places a yearless stamp)
    {"go-syslog 3164",
     "<34>Jan 12 06:30:00 xxx apache: 1.2.3.4 - - [12/Jan/2011:06:29:59 +0100] \"GET "
     "/foo/bar.html HTTP/1.1\" 301 96 \"-\" \"Mozilla/5.0 (Windows; U; Windows NT 5.1; fr; "
     "rv:1.9.2.12) Gecko/20101026 Firefox/3.6.12 ( .NET CLR 3.5.30729)\" PID 18904 Time Taken 0",
     34, "2026-01-12T06:30:00", "xxx", "apache", "",
     "1.2.3.4 - - [12/Jan/2011:06:29:59 +0100] \"GET /foo/bar.html HTTP/1.1\" 301 96 \"-\" "
     "\"Mozilla/5.0 (Windows; U; Windows NT 5.1; fr; rv:1.9.2.12) Gecko/20101026 Firefox/3.6.12 "
     "( .NET CLR 3.5.30729)\" PID 18904 Time Taken 0"},
    {"go-syslog 3164", "<34>Aug  7 06:30:00 xxx aaa: message from 1.2.3.4", 34,
     "2026-08-07T06:30:00", "xxx", "aaa", "", "message from 1.2.3.4"},
    {"go-syslog 3164",
     "<85>Jan 24 15:50:41 ip-172-31-30-110 sudo[6040]: ec2-user : TTY=pts/0 ; PWD=/var/log ; "
     "USER=root ; COMMAND=/bin/tail secure",
     85, "2026-01-24T15:50:41", "ip-172-31-30-110", "sudo", "6040",
     "ec2-user : TTY=pts/0 ; PWD=/var/log ; USER=root ; COMMAND=/bin/tail secure"},
    {"go-syslog 3164", "<166>Jul  6 20:33:28 ABC-1-234567 Some message here", 166,
     "2026-07-06T20:33:28", "ABC-1-234567", "", "", "Some message here"},
    {"go-syslog 3164",
     "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8", 34,
     "2026-10-11T22:14:15", "mymachine", "su", "", "'su root' failed for lonvick on /dev/pts/8"},
    {"go-syslog 3164", "<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!", 13, "2026-02-05T17:32:18",
     "10.0.0.99", "", "", "Use the BFG!"},
    {"go-syslog 3164",
     "<165>Aug 24 05:34:00 mymachine myproc[10]: %% It's time to make the do-nuts.  %%  "
     "Ingredients: Mix=OK, Jelly=OK # Devices: Mixer=OK, Jelly_Injector=OK, Frier=OK # Transport: "
     "Conveyer1=OK, Conveyer2=OK # %%",
     165, "2026-08-24T05:34:00", "mymachine", "myproc", "10",
     "%% It's time to make the do-nuts.  %%  Ingredients: Mix=OK, Jelly=OK # Devices: Mixer=OK, "
     "Jelly_Injector=OK, Frier=OK # Transport: Conveyer1=OK, Conveyer2=OK # %%"},
    {"go-syslog 3164", "<0>Oct 22 10:52:01 10.1.2.3 sched[0]: That's All Folks!", 0,
     "2026-10-22T10:52:01", "10.1.2.3", "sched", "0", "That's All Folks!"},
    // WithAllowSkipPri: go-syslog expects PRI 0 where rsyslog assumes 13
    {"go-syslog 3164", "Oct 22 10:52:01 10.1.2.3 sched[0]: That's All Folks!", 0,
     "2026-10-22T10:52:01", "10.1.2.3", "sched", "0", "That's All Folks!"},

    // go-syslog rfc5424/machine_test.go, the valid cases
    {"go-syslog 5424", "<1>1 - - - - - -", 1, "", "", "", "", ""},
    {"go-syslog 5424", "<0>1 - - - - - -", 0, "", "", "", "", ""},
    {"go-syslog 5424",
     "<29>1 2016-02-21T04:32:57+00:00 web1 someservice - - [origin x-service=\"someservice\"][meta "
     "sequenceId=\"14125553\"] 127.0.0.1 - - 1456029177 \"GET /v1/ok HTTP/1.1\" 200 145 \"-\" "
     "\"hacheck 0.9.0\" 24306 127.0.0.1:40124 575",
     29, "2016-02-21T04:32:57+00:00", "web1", "someservice", "",
     "127.0.0.1 - - 1456029177 \"GET /v1/ok HTTP/1.1\" 200 145 \"-\" \"hacheck 0.9.0\" 24306 "
     "127.0.0.1:40124 575"},
    {"go-syslog 5424", "<1>100 - host-name - - - -", 1, "", "host-name", "", "", ""},
    {"go-syslog 5424", "<1>101 - host-name app-name - - -", 1, "", "host-name", "app-name", "", ""},
    {"go-syslog 5424", "<1>102 - host-name app-name proc-id - -", 1, "", "host-name", "app-name",
     "proc-id", ""},
    {"go-syslog 5424", "<1>103 - host-name app-name proc-id msg-id -", 1, "", "host-name",
     "app-name", "proc-id", ""},
    {"go-syslog 5424",
     "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOM'su root' failed for "
     "lonvick on /dev/pts/8",
     34, "2003-10-11T22:14:15.003Z", "mymachine.example.com", "su", "",
     "BOM'su root' failed for lonvick on /dev/pts/8"},
    {"go-syslog 5424",
     "<187>222 - mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8", 187,
     "", "mymachine.example.com", "su", "", "'su root' failed for lonvick on /dev/pts/8"},
    {"go-syslog 5424",
     "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% Time to make the "
     "do-nuts.",
     165, "2003-08-24T05:14:15.000003-07:00", "192.0.2.1", "myproc", "8710",
     "%% Time to make the do-nuts."},
    {"go-syslog 5424", "<165>2 2003-08-24T05:14:15.000003-07:00 - - - - -", 165,
     "2003-08-24T05:14:15.000003-07:00", "", "", "", ""},
    {"go-syslog 5424", "<165>222 2003-08-24T05:14:15.000003-07:00 - - - - - ", 165,
     "2003-08-24T05:14:15.000003-07:00", "", "", "", ""},
    {"go-syslog 5424", "<78>1 2016-01-15T00:04:01+00:00 host1 CROND 10391 - [sdid] some_message",
     78, "2016-01-15T00:04:01+00:00", "host1", "CROND", "10391", "some_message"},
    {"go-syslog 5424",
     "<78>1 2016-01-15T00:04:01+00:00 host1 CROND 10391 - [sdid x=\"\xE2\x8C\x98\"] some_message",
     78, "2016-01-15T00:04:01+00:00", "host1", "CROND", "10391", "some_message"},
    {"go-syslog 5424",
     "<78>2 2016-01-15T00:04:01+00:00 host1 CROND 10391 - [sdid x=\"hey \\\\u2318 hey\"] "
     "some_message",
     78, "2016-01-15T00:04:01+00:00", "host1", "CROND", "10391", "some_message"},
    {"go-syslog 5424",
     "<29>50 2016-01-15T01:00:43Z hn S - - [meta es=\"\\\\valid\"] 127.0.0.1 - - 1452819643 "
     "\"GET\"",
     29, "2016-01-15T01:00:43Z", "hn", "S", "", "127.0.0.1 - - 1452819643 \"GET\""},
    {"go-syslog 5424",
     "<29>53 2016-01-15T01:00:43Z hn S - - [meta one=\"\\\\one\"][other two=\"\\\\two\" "
     "double=\"\\\\a\\\\b\"] 127.0.0.1 - - 1452819643 \"GET\"",
     29, "2016-01-15T01:00:43Z", "hn", "S", "", "127.0.0.1 - - 1452819643 \"GET\""},
    {"go-syslog 5424",
     "<29>55 2016-01-15T01:00:43Z hn S - - [meta es=\"at the \\\\end\"] 127.0.0.1 - - 1452819643 "
     "\"GET\"",
     29, "2016-01-15T01:00:43Z", "hn", "S", "", "127.0.0.1 - - 1452819643 \"GET\""},
    {"go-syslog 5424",
     "<29>50 2016-01-15T01:00:43Z hn S - - [meta es=\"\t5\xE1\xBD\x8Ag\xCC\x80"
     "9!\xE2\x84\x83"
     "\xE1\xBE\xADGa b\"] 127.0.0.1 - - 1452819643 \"GET\"",
     29, "2016-01-15T01:00:43Z", "hn", "S", "", "127.0.0.1 - - 1452819643 \"GET\""},
    {"go-syslog 5424",
     "<29>50 2016-01-15T01:00:43Z hn S - - [meta "
     "gr=\"\xCE\xBA\xE1\xBD\xB9\xCF\x83\xCE\xBC\xCE\xB5\" "
     "es=\"\xC3\xB1\"][beta pr=\"\xE2\x82\xA1\"] \xF0\x90\x8C\xBC \"GET\"",
     29, "2016-01-15T01:00:43Z", "hn", "S", "", "\xF0\x90\x8C\xBC \"GET\""},
    {"go-syslog 5424",
     "<165>3 2003-10-11T22:14:15.003Z example.com evnts - ID27 [exampleSDID@32473 iut=\"3\" "
     "eventSource=\"Application\" eventID=\"1011\"][examplePriority@32473 class=\"high\"]",
     165, "2003-10-11T22:14:15.003Z", "example.com", "evnts", "", ""},
    {"go-syslog 5424",
     "<165>4 2003-10-11T22:14:15.003Z mymachine.it e - 1 [ex@32473 iut=\"3\" eventSource=\"A\"] An "
     "application event log entry...",
     165, "2003-10-11T22:14:15.003Z", "mymachine.it", "e", "", "An application event log entry..."},
    {"go-syslog 5424",
     "<29>1 2016-01-15T01:00:43Z some-host-name SEKRETPROGRAM prg - [origin "
     "x-service=\"svcname\"][meta sequenceId=\"1\"] 127.0.0.1 - - 1452819643 \"GET\"",
     29, "2016-01-15T01:00:43Z", "some-host-name", "SEKRETPROGRAM", "prg",
     "127.0.0.1 - - 1452819643 \"GET\""},
    {"go-syslog 5424", "<1>1 - - - - - [id pk=\"\"]", 1, "", "", "", "", ""},
    {"go-syslog 5424",
     "<29>2 2016-01-15T01:00:43Z some-host-name SEKRETPROGRAM prg - [meta escape=\"\\]\"] some "
     "\"mex\"",
     29, "2016-01-15T01:00:43Z", "some-host-name", "SEKRETPROGRAM", "prg", "some \"mex\""},
    {"go-syslog 5424",
     "<29>2 2016-01-15T01:00:43Z some-host-name SEKRETPROGRAM prg - [meta escape=\"\\\\\"]", 29,
     "2016-01-15T01:00:43Z", "some-host-name", "SEKRETPROGRAM", "prg", ""},
    {"go-syslog 5424",
     "<29>2 2016-01-15T01:00:43Z some-host-name SEKRETPROGRAM prg - [meta escape=\"\\\"\"]", 29,
     "2016-01-15T01:00:43Z", "some-host-name", "SEKRETPROGRAM", "prg", ""},
    {"go-syslog 5424",
     "<29>2 2016-01-15T01:00:43Z some-host-name SEKRETPROGRAM prg - [meta "
     "escape=\"\\]\\\"\\\\\\\\\\]\\\"\"]",
     29, "2016-01-15T01:00:43Z", "some-host-name", "SEKRETPROGRAM", "prg", ""},
    {"go-syslog 5424",
     "<191>999 2018-12-31T23:59:59.999999-23:59 abcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnop"
     "qrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvz"
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabc abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdef abc"
     "defghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghil"
     "mnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzab abcdefghilmnop"
     "qrstuvzabcdefghilm -",
     191, "2018-12-31T23:59:59.999999-23:59",
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnop"
     "qrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvz"
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabc",
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdef",
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzab",
     ""},
    {"go-syslog 5424",
     "<191>999 2018-12-31T23:59:59.999999-23:59 abcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnop"
     "qrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvz"
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabc abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdef abc"
     "defghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghil"
     "mnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzab abcdefghilmnop"
     "qrstuvzabcdefghilm [an@id key1=\"val1\" key2=\"val2\"][another@id key1"
     "=\"val1\"] Some message \"GET\"",
     191, "2018-12-31T23:59:59.999999-23:59",
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnop"
     "qrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvz"
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabc",
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdef",
     "abcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzabcdefg"
     "hilmnopqrstuvzabcdefghilmnopqrstuvzabcdefghilmnopqrstuvzab",
     "Some message \"GET\""},
};

TimeUs TimeOf(std::string_view text) {
  std::string s(text);
  if (s.back() != 'Z' && s.find('+', 19) == std::string::npos &&
      s.find('-', 19) == std::string::npos) {
    s += 'Z';
  }
  const std::optional<TimeUs> t = ParseRfc3339(s);
  EXPECT_TRUE(t.has_value()) << text;
  return t.value_or(0);
}

// go-syslog's RFC 3164 stamps carry no year (its tests expect year 0), so its cases are
// compared without the year: a whole number of years (365 or 366 days) apart also agrees.
bool SameTime(const Case& c, TimeUs got) {
  const TimeUs want = TimeOf(c.time);
  if (got == want) return true;
  if (c.source != "go-syslog 3164") return false;
  constexpr TimeUs kDay = 86400LL * 1000000;
  const TimeUs apart = got > want ? got - want : want - got;
  return apart == 365 * kDay || apart == 366 * kDay;
}

// Field by field; returns the first field that differs, or "" when all agree.
std::string Differs(const Case& c, const LogRecord& r) {
  const int facility = c.pri < 0 ? -1 : c.pri / 8;
  const int severity = c.pri < 0 ? -1 : c.pri % 8;
  if (r.facility != facility || r.severity != severity) return "pri";
  if (c.time.empty() ? r.has_timestamp : (!r.has_timestamp || !SameTime(c, r.timestamp_us))) {
    return "time";
  }
  if (r.hostname != c.host) return "host=" + r.hostname;
  if (r.app_name != c.app) return "app=" + r.app_name;
  if (r.tag != c.tag) return "tag=" + r.tag;
  if (c.procid != "*" && r.procid != c.procid) return "procid=" + r.procid;
  if (r.message != c.message) return "message=" + r.message;
  if (r.outcome != ParseOutcome::kOk) return std::string(ParseOutcomeName(r.outcome));
  return "";
}

// The suite a case counts in: "rsyslog", "go-syslog 3164" or "go-syslog 5424".
std::string_view SuiteOf(std::string_view source) {
  return source.starts_with("rsyslog") ? std::string_view("rsyslog") : source;
}

TEST(SyslogReferenceCasesTest, AgreeFieldByFieldExceptDocumentedDifferences) {
  const SyslogParser parser;
  struct Tally {
    std::string_view suite;
    int min_percent;  // issue #21: at least 95 % of the valid cases, field by field
    int cases = 0, agree = 0;
  };
  // go-syslog's RFC 3164 table is held only to the documented list: each of its differences
  // is a case where go-syslog and rsyslog disagree and logfold follows rsyslog.
  Tally tallies[] = {{"rsyslog", 95}, {"go-syslog 3164", 0}, {"go-syslog 5424", 95}};
  std::vector<std::string_view> differing;
  for (const Case& c : kCases) {
    LogRecord r;
    parser.Parse(c.line, kArrival, r);
    const std::string diff = Differs(c, r);
    Tally* tally = nullptr;
    for (Tally& t : tallies) {
      if (t.suite == SuiteOf(c.source)) tally = &t;
    }
    ASSERT_NE(tally, nullptr) << c.source;
    ++tally->cases;
    if (diff.empty()) {
      ++tally->agree;
      continue;
    }
    bool documented = false;
    for (std::string_view d : kDocumentedDifferences) documented |= d == c.line;
    EXPECT_TRUE(documented) << c.source << ": " << c.line << "\n  differs in " << diff;
    differing.push_back(c.line);
  }
  // A documented difference that no longer differs is stale: README and list must follow.
  for (std::string_view d : kDocumentedDifferences) {
    EXPECT_NE(std::find(differing.begin(), differing.end(), d), differing.end())
        << "agrees now, remove it from the documented differences: " << d;
  }
  for (const Tally& t : tallies) {
    std::printf("%.*s: %d/%d valid cases agree field by field\n", static_cast<int>(t.suite.size()),
                t.suite.data(), t.agree, t.cases);
    EXPECT_GT(t.cases, 0) << t.suite;
    EXPECT_GE(t.agree * 100, t.cases * t.min_percent)
        << t.suite << ": " << t.agree << " of " << t.cases << " agree";
  }
  // rsyslog's testbench: 43 of 44 (the one left is the plain line kept whole, documented).
  EXPECT_GE(tallies[0].agree, 43);
  EXPECT_EQ(tallies[0].cases, 44);
  int cases = 0, agree = 0;
  for (const Tally& t : tallies) {
    cases += t.cases;
    agree += t.agree;
  }
  EXPECT_GE(agree * 100, cases * 95) << agree << " of " << cases << " agree over all tables";
}

}  // namespace
}  // namespace logfold
