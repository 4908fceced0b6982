#!/usr/bin/env python3
"""Labels the held-out logs of tests/quality/unseen (real programs run on this machine, see
produce/ and README.md) in the scorers' Loghub format, from an ordered list of regexes per
system written from what each line means: one event is one format string of the program's
source, and different enumerated actions, methods, statuses or query types are different
events (GET vs DELETE, 200 vs 500, query[A] vs query[MX]).

  label.py sample RAW_DIR OUT_DIR  - <Sys>/<Sys>_raw.log -> <Sys>/<Sys>_2k.log (at most 2,000
                                     lines in their order: the most frequent events are thinned
                                     first, deterministically) plus the labelled csv
  label.py label [DIR]             - re-label every DIR/<Sys>/<Sys>_2k.log (default: here)
  label.py check [DIR]             - exit 1 if any committed csv is not what the rules give

A line that no rule matches is an error: every line gets a considered label.
"""
import collections
import csv
import io
import os
import random
import re
import sys

LIMIT = 2000
V = "<*>"


def sql_shape_spaced(sql):
    """sql_shape after spaces around comparison signs are made one (`qty=1` and `qty = -1`
    are the same statement's shape): for MariaDB's logs, whose statements are typed both ways."""
    return sql_shape(re.sub(r"\s*([=<>]+)\s*", r" \1 ", sql))


def sql_shape(sql):
    """SQL texts are one event when equal after literals (numbers, strings) and identifiers
    holding a digit become placeholders: the statement's shape, not its arguments."""
    s = re.sub(r"'[^']*'", "?", sql.strip())
    s = re.sub(r"(?<![\w.])-?\d+(\.\d+)?\b", "?", s)
    s = re.sub(r"\b[A-Za-z_]*\d[A-Za-z0-9_]*\b", "?", s)
    s = re.sub(r"\s+", " ", s)
    return s


class System:
    def __init__(self, header, rules, continuation=None, by_field=None):
        # header: regex whose group 'content' is the message; lines it does not match are
        # continuation lines of a multi-line message only if `continuation` matches them.
        self.header = re.compile(header)
        self.continuation = re.compile(continuation) if continuation else None
        self.rules = [(re.compile(r), t) for r, t in rules]
        # by_field: {header field value: template function of the content}, for lines whose
        # meaning the header states (PostgreSQL's STATEMENT: lines carry the failed SQL).
        self.by_field = by_field or {}

    def content(self, line):
        """(message, header field or None)"""
        m = self.header.match(line)
        if m:
            return m.group("content"), m.groupdict().get("field")
        if self.continuation and self.continuation.match(line):
            return line.strip(), None
        raise ValueError("no header: %r" % line)

    def label(self, content, field=None):
        if field in self.by_field:
            return self.by_field[field](content)
        for regex, template in self.rules:
            m = regex.fullmatch(content.rstrip())
            if m:
                return template(m) if callable(template) else template
        raise ValueError("no rule: %r" % content)


IP = r"\d+\.\d+\.\d+\.\d+"
N = r"-?\d+(?:\.\d+)?"

POSTGRES = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+ \[\d+\] (?P<field>[A-Z]+):  (?P<content>.*)$",
    continuation=r"^\t",
    by_field={"STATEMENT": lambda c: "STATEMENT " + sql_shape(c)},
    rules=[
        (r"connection received: host=\S+ port=\d+", "connection received: host=<*> port=<*>"),
        (r"connection received: host=\[local\]", "connection received: host=[local]"),
        (r"connection authenticated: identity=\"\S+\" method=\S+ \(\S+\)",
         "connection authenticated: identity=<*> method=<*> (<*>)"),
        (r"connection authorized: user=\S+ database=\S+ application_name=\S+",
         "connection authorized: user=<*> database=<*> application_name=<*>"),
        (r"disconnection: session time: \S+ user=\S+ database=\S+ host=\S+( port=\d+)?",
         "disconnection: session time: <*> user=<*> database=<*> host=<*> port=<*>"),
        (r"password authentication failed for user \"\S+\"",
         "password authentication failed for user <*>"),
        (r"database \"\S+\" does not exist", "database <*> does not exist"),
        (r"Role \"\S+\" does not exist\.", "Role <*> does not exist."),
        (r"Connection matched pg_hba.conf line \d+: .*",
         "Connection matched pg_hba.conf line <*>: <*>"),
        (r"table \"\S+\" does not exist", "table <*> does not exist"),
        (r"relation \"\S+\" does not exist at character \d+",
         "relation <*> does not exist at character <*>"),
        (r"column \"\S+\" does not exist at character \d+",
         "column <*> does not exist at character <*>"),
        (r"syntax error at or near \"\S+\" at character \d+",
         "syntax error at or near <*> at character <*>"),
        (r"new row for relation \"\S+\" violates check constraint \"\S+\"",
         "new row for relation <*> violates check constraint <*>"),
        (r"invalid input syntax for type \w+: \".*\" at character \d+",
         "invalid input syntax for type <*>: <*> at character <*>"),
        (r"insert or update on table \"\S+\" violates foreign key constraint \"\S+\"",
         "insert or update on table <*> violates foreign key constraint <*>"),
        (r"duplicate key value violates unique constraint \"\S+\"",
         "duplicate key value violates unique constraint <*>"),
        (r"division by zero", "division by zero"),
        (r"deadlock detected", "deadlock detected"),
        (r"Key \(.*\)=\(.*\) is not present in table \"\S+\"\.",
         "Key (<*>)=(<*>) is not present in table <*>."),
        (r"Key \(.*\)=\(.*\) already exists\.", "Key (<*>)=(<*>) already exists."),
        (r"Failing row contains \(.*\)\.", "Failing row contains (<*>)."),
        (r"Process holding the lock: \d+\. Wait queue: .*",
         "Process holding the lock: <*>. Wait queue: <*>"),
        (r"Process \d+ waits for \w+ on transaction \d+; blocked by process \d+\.",
         "Process <*> waits for <*> on transaction <*>; blocked by process <*>."),
        (r"Process \d+: (.*)", lambda m: "Process <*>: " + sql_shape(m.group(1))),
        (r"process \d+ detected deadlock while waiting for \w+ on transaction \d+ after \S+ ms",
         "process <*> detected deadlock while waiting for <*> on transaction <*> after <*> ms"),
        (r"process \d+ still waiting for \w+ on transaction \d+ after \S+ ms",
         "process <*> still waiting for <*> on transaction <*> after <*> ms"),
        (r"process \d+ acquired \w+ on transaction \d+ after \S+ ms",
         "process <*> acquired <*> on transaction <*> after <*> ms"),
        (r"while updating tuple \(.*\) in relation \"\S+\"",
         "while updating tuple (<*>) in relation <*>"),
        (r"while locking tuple \(.*\) in relation \"\S+\"",
         "while locking tuple (<*>) in relation <*>"),
        (r"temporary file: path \"\S+\", size \d+", "temporary file: path <*>, size <*>"),
        (r"duration: \S+ ms", "duration: <*> ms"),
        (r"duration: \S+ ms  statement: (.*)",
         lambda m: "duration: <*> ms statement: " + sql_shape(m.group(1))),
        (r"statement: (.*)", lambda m: "statement: " + sql_shape(m.group(1))),
        (r"automatic analyze of table \"\S+\"", "automatic analyze of table <*>"),
        (r"automatic vacuum of table \"\S+\": index scans: \d+",
         "automatic vacuum of table <*>: index scans: <*>"),
        (r"automatic aggressive vacuum of table \"\S+\": index scans: \d+",
         "automatic aggressive vacuum of table <*>: index scans: <*>"),
        (r"skipping analyze of \"\S+\" --- lock not available",
         "skipping analyze of <*> --- lock not available"),
        (r"skipping vacuum of \"\S+\" --- lock not available",
         "skipping vacuum of <*> --- lock not available"),
        (r"pages: \d+ removed, \d+ remain, \d+ scanned \(\S+ of total\)",
         "pages: <*> removed, <*> remain, <*> scanned (<*> of total)"),
        (r"tuples: \d+ removed, \d+ remain, \d+ are dead but not yet removable",
         "tuples: <*> removed, <*> remain, <*> are dead but not yet removable"),
        (r"tuples missed: \d+ dead from \d+ pages not removed due to cleanup lock contention",
         "tuples missed: <*> dead from <*> pages not removed due to cleanup lock contention"),
        (r"removable cutoff: \d+, which was \d+ XIDs old when operation ended",
         "removable cutoff: <*>, which was <*> XIDs old when operation ended"),
        (r"new relfrozenxid: \d+, which is \d+ XIDs ahead of previous value",
         "new relfrozenxid: <*>, which is <*> XIDs ahead of previous value"),
        (r"new relminmxid: \d+, which is \d+ MXIDs ahead of previous value",
         "new relminmxid: <*>, which is <*> MXIDs ahead of previous value"),
        (r"index scan not needed: \d+ pages from table \(\S+ of total\) had \d+ dead item identifiers removed",
         "index scan not needed: <*> pages from table (<*> of total) had <*> dead item identifiers removed"),
        (r"index scan needed: \d+ pages from table \(\S+ of total\) had \d+ dead item identifiers removed",
         "index scan needed: <*> pages from table (<*> of total) had <*> dead item identifiers removed"),
        (r"index \"\S+\": pages: \d+ in total, \d+ newly deleted, \d+ currently deleted, \d+ reusable",
         "index <*>: pages: <*> in total, <*> newly deleted, <*> currently deleted, <*> reusable"),
        (r"avg read rate: \S+ MB/s, avg write rate: \S+ MB/s",
         "avg read rate: <*> MB/s, avg write rate: <*> MB/s"),
        (r"buffer usage: \d+ hits, \d+ misses, \d+ dirtied",
         "buffer usage: <*> hits, <*> misses, <*> dirtied"),
        (r"WAL usage: \d+ records, \d+ full page images, \d+ bytes",
         "WAL usage: <*> records, <*> full page images, <*> bytes"),
        (r"system usage: CPU: user: \S+ s, system: \S+ s, elapsed: \S+ s",
         "system usage: CPU: user: <*> s, system: <*> s, elapsed: <*> s"),
        (r"checkpoint starting: .*", "checkpoint starting: <*>"),
        (r"checkpoint complete: .*", "checkpoint complete: <*>"),
        (r"starting PostgreSQL .*", "starting PostgreSQL <*>"),
        (r"listening on IPv\d address \"\S+\", port \d+", "listening on IPv<*> address <*>, port <*>"),
        (r"listening on Unix socket \"\S+\"", "listening on Unix socket <*>"),
        (r"database system was shut down at .*", "database system was shut down at <*>"),
        (r"database system is ready to accept connections",
         "database system is ready to accept connections"),
        (r"received fast shutdown request", "received fast shutdown request"),
        (r"aborting any active transactions", "aborting any active transactions"),
        (r"background worker \".*\" \(PID \d+\) exited with exit code \d+",
         "background worker <*> (PID <*>) exited with exit code <*>"),
        (r"shutting down", "shutting down"),
        (r"database system is shut down", "database system is shut down"),
        (r"See server log for query details\.", "See server log for query details."),
    ])

NGINX = System(
    r"^\S+ \S+ \S+ \[[^\]]+\] (?P<content>.*)$",
    rules=[
        (r"\"(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH) \S+ HTTP/[\d.]+\" (\d+) \d+ \".*\" \".*\"",
         lambda m: "\"%s <*> HTTP/<*>\" %s <*> <*> <*>" % (m.group(1), m.group(2))),
        (r"\"(.*)\" (\d+) \d+ \".*\" \".*\"",
         lambda m: "\"<*>\" %s <*> <*> <*>" % m.group(2)),
    ])

def with_method(template):
    """nginx's `request: "%V"` holds the request line: its method is part of the event (GET and
    PATCH are different events, as in the access log); an invalid one is `<*>`."""
    def label(m):
        r = re.search(r'request: "([A-Z]+) ', m.group(0))
        return template.format((r.group(1) + " <*>") if r else "<*>")
    return label


NGINX_ERROR = System(
    r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[\w+\] \d+#\d+: (?P<content>.*)$",
    rules=[
        (r"\*\d+ client \S+ closed keepalive connection",
         "*<*> client <*> closed keepalive connection"),
        (r"\*\d+ open\(\) \"\S+\" failed \(2: No such file or directory\), .*",
         with_method('*<*> open() <*> failed (2: No such file or directory), client: <*>, server: <*>, request: "{}", host: <*>')),
        (r"\*\d+ open\(\) \"\S+\" failed \(13: Permission denied\), .*",
         with_method('*<*> open() <*> failed (13: Permission denied), client: <*>, server: <*>, request: "{}", host: <*>')),
        (r"\*\d+ directory index of \"\S+\" is forbidden, .*",
         with_method('*<*> directory index of <*> is forbidden, client: <*>, server: <*>, request: "{}", host: <*>')),
        (r"\*\d+ connect\(\) failed \(111: Connection refused\) while connecting to upstream, .*",
         with_method('*<*> connect() failed (111: Connection refused) while connecting to upstream, client: <*>, server: <*>, request: "{}", upstream: <*>, host: <*>')),
        (r"\*\d+ upstream timed out \(110: Connection timed out\) while connecting to upstream, .*",
         "*<*> upstream timed out (110: Connection timed out) while connecting to upstream, <*>"),
        (r"\*\d+ client intended to send too large body: \d+ bytes, .*",
         with_method('*<*> client intended to send too large body: <*> bytes, client: <*>, server: <*>, request: "{}", host: <*>')),
        (r"\*\d+ client sent invalid method while reading client request line, .*",
         with_method('*<*> client sent invalid method while reading client request line, client: <*>, server: <*>, request: "{}"')),
        (r"\*\d+ limiting requests, excess: \S+ by zone \"\S+\", .*",
         "*<*> limiting requests, excess: <*> by zone <*>, <*>"),
        (r"\*\d+ (.*)", lambda m: "*<*> OTHER " + m.group(1)),
        (r"using the \"\w+\" event method", "using the <*> event method"),
        (r"nginx/\S+", "nginx/<*>"),
        (r"built by .*", "built by <*>"),
        (r"OS: .*", "OS: <*>"),
        (r"getrlimit\(RLIMIT_NOFILE\): \d+:\d+", "getrlimit(RLIMIT_NOFILE): <*>:<*>"),
        (r"start worker processes", "start worker processes"),
        (r"start worker process \d+", "start worker process <*>"),
        (r"signal \d+ \(SIGQUIT\) received from \d+, shutting down",
         "signal <*> (SIGQUIT) received from <*>, shutting down"),
        (r"signal \d+ \(SIGCHLD\) received from \d+", "signal <*> (SIGCHLD) received from <*>"),
        (r"signal process started", "signal process started"),
        (r"gracefully shutting down", "gracefully shutting down"),
        (r"exiting", "exiting"),
        (r"exit", "exit"),
        (r"worker process \d+ exited with code \d+", "worker process <*> exited with code <*>"),
    ])

REDIS = System(
    r"^\d+:[A-Z] \d+ \w+ \d+ \d\d:\d\d:\d\d\.\d+ [.*#-] (?P<content>.*)$",
    rules=[
        (r"Accepted \S+:\d+", "Accepted <*>:<*>"),
        (r"Client closed connection .*", "Client closed connection <*>"),
        (r"DB \d+: \d+ keys \(\d+ volatile\) in \d+ slots HT\.",
         "DB <*>: <*> keys (<*> volatile) in <*> slots HT."),
        (r"DB saved on disk", "DB saved on disk"),
        (r"MASTER <-> REPLICA sync started", "MASTER <-> REPLICA sync started"),
        (r"Connecting to MASTER \S+", "Connecting to MASTER <*>"),
        (r"Error condition on socket for SYNC: .*", "Error condition on socket for SYNC: <*>"),
        (r"Fork CoW for RDB: current \d+ MB, peak \d+ MB, average \d+ MB",
         "Fork CoW for RDB: current <*> MB, peak <*> MB, average <*> MB"),
        (r"Fork CoW for AOF rewrite: current \d+ MB, peak \d+ MB, average \d+ MB",
         "Fork CoW for AOF rewrite: current <*> MB, peak <*> MB, average <*> MB"),
        (r"Background saving terminated with success", "Background saving terminated with success"),
        (r"Background saving started by pid \d+", "Background saving started by pid <*>"),
        (r"Background AOF rewrite signal handler took \d+us",
         "Background AOF rewrite signal handler took <*>us"),
        (r"Successfully renamed the temporary AOF base file \S+ into \S+",
         "Successfully renamed the temporary AOF base file <*> into <*>"),
        (r"Successfully created the temporary AOF base file \S+",
         "Successfully created the temporary AOF base file <*>"),
        (r"Removing the history file \S+ in the background",
         "Removing the history file <*> in the background"),
        (r"Creating AOF incr file \S+ on background rewrite",
         "Creating AOF incr file <*> on background rewrite"),
        (r"Creating AOF base file \S+ on server start", "Creating AOF base file <*> on server start"),
        (r"Creating AOF incr file \S+ on server start", "Creating AOF incr file <*> on server start"),
        (r"Background append only file rewriting started by pid \d+",
         "Background append only file rewriting started by pid <*>"),
        (r"Background AOF rewrite terminated with success",
         "Background AOF rewrite terminated with success"),
        (r"Background AOF rewrite finished successfully",
         "Background AOF rewrite finished successfully"),
        (r"monotonic clock: .*", "monotonic clock: <*>"),
        (r"Running mode=\w+, port=\d+\.", "Running mode=<*>, port=<*>."),
        (r"Removing the pid file\.", "Removing the pid file."),
        (r"Ready to accept connections \w+", "Ready to accept connections <*>"),
        (r"Ready to accept connections", "Ready to accept connections"),
        (r"Calling fsync\(\) on the AOF file\.", "Calling fsync() on the AOF file."),
        (r"oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
         "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo"),
        (r"WARNING Memory overcommit must be enabled! .*",
         "WARNING Memory overcommit must be enabled! <*>"),
        (r"WARNING .*", lambda m: m.group(0)),
        (r"User requested shutdown\.\.\.", "User requested shutdown..."),
        (r"Server initialized", "Server initialized"),
        (r"Redis version=\S+, bits=\d+, commit=\S+, modified=\d+, pid=\d+, just started",
         "Redis version=<*>, bits=<*>, commit=<*>, modified=<*>, pid=<*>, just started"),
        (r"Redis is now ready to exit, bye bye\.\.\.", "Redis is now ready to exit, bye bye..."),
        (r"Configuration loaded", "Configuration loaded"),
        (r"Saving the final RDB snapshot before exiting\.",
         "Saving the final RDB snapshot before exiting."),
        (r"Reading RDB base file on AOF loading\.\.\.", "Reading RDB base file on AOF loading..."),
        (r"RDB memory usage when created \S+ Mb", "RDB memory usage when created <*> Mb"),
        (r"RDB is base AOF", "RDB is base AOF"),
        (r"RDB age \d+ seconds", "RDB age <*> seconds"),
        (r"Opening AOF incr file \S+ on server start", "Opening AOF incr file <*> on server start"),
        (r"Opening AOF base file \S+ on server start", "Opening AOF base file <*> on server start"),
        (r"REPLICAOF \S+ enabled \(user request from .*\)",
         "REPLICAOF <*> enabled (user request from <*>)"),
        (r"MASTER MODE enabled \(user request from .*\)",
         "MASTER MODE enabled (user request from <*>)"),
        (r"Loading RDB produced by version \S+", "Loading RDB produced by version <*>"),
        (r"Done loading RDB, keys loaded: \d+, keys expired: \d+\.",
         "Done loading RDB, keys loaded: <*>, keys expired: <*>."),
        (r"Discarding previously cached master state\.", "Discarding previously cached master state."),
        (r"DB loaded from incr file \S+: \S+ seconds", "DB loaded from incr file <*>: <*> seconds"),
        (r"DB loaded from base file \S+: \S+ seconds", "DB loaded from base file <*>: <*> seconds"),
        (r"DB loaded from append only file: \S+ seconds",
         "DB loaded from append only file: <*> seconds"),
        (r"Before turning into a replica, using my own master parameters to synthesize a cached master: .*",
         "Before turning into a replica, using my own master parameters to synthesize a cached master: <*>"),
        (r"Setting secondary replication ID to \w+, valid up to offset: \d+\. New replication ID is \w+",
         "Setting secondary replication ID to <*>, valid up to offset: <*>. New replication ID is <*>"),
        (r"(.*)", lambda m: "OTHER " + m.group(1)),
    ])

DNSMASQ = System(
    r"^\w{3} [ \d]\d \d\d:\d\d:\d\d dnsmasq\[\d+\]: (?P<content>.*)$",
    rules=[
        (r"\d+ \S+ query\[(\w+)\] \S+ from \S+", lambda m: "<*> <*> query[%s] <*> from <*>" % m.group(1)),
        (r"\d+ \S+ forwarded \S+ to \S+", "<*> <*> forwarded <*> to <*>"),
        (r"\d+ \S+ reply \S+ is (NXDOMAIN|NODATA|NODATA-IPv[46]|REFUSED|SERVFAIL)",
         lambda m: "<*> <*> reply <*> is " + m.group(1)),
        (r"\d+ \S+ reply \S+ is \S+", "<*> <*> reply <*> is <*>"),
        (r"\d+ \S+ cached \S+ is (NXDOMAIN|NODATA|NODATA-IPv[46]|REFUSED)",
         lambda m: "<*> <*> cached <*> is " + m.group(1)),
        (r"\d+ \S+ cached \S+ is \S+", "<*> <*> cached <*> is <*>"),
        (r"\d+ \S+ config \S+ is (NXDOMAIN|NODATA|NODATA-IPv[46])",
         lambda m: "<*> <*> config <*> is " + m.group(1)),
        (r"\d+ \S+ config \S+ is \S+", "<*> <*> config <*> is <*>"),
        (r"\d+ \S+ /\S+ \S+ is \S+", "<*> <*> <*> <*> is <*>"),
        (r"started, version \S+ cachesize \d+", "started, version <*> cachesize <*>"),
        (r"compile time options: .*", "compile time options: <*>"),
        (r"using nameserver \S+ for domain \S+", "using nameserver <*> for domain <*>"),
        (r"using nameserver \S+", "using nameserver <*>"),
        (r"using only locally-known addresses for \S+", "using only locally-known addresses for <*>"),
        (r"using standard nameservers for \S+", "using standard nameservers for <*>"),
        (r"read \S+ - \d+ names", "read <*> - <*> names"),
        (r"read \S+ - \d+ addresses", "read <*> - <*> addresses"),
        (r"cleared cache", "cleared cache"),
        (r"time \d+", "time <*>"),
        (r"cache size \d+, \d+/\d+ cache insertions re-used unexpired cache entries\.",
         "cache size <*>, <*>/<*> cache insertions re-used unexpired cache entries."),
        (r"queries forwarded \d+, queries answered locally \d+",
         "queries forwarded <*>, queries answered locally <*>"),
        (r"queries for authoritative zones \d+", "queries for authoritative zones <*>"),
        (r"pool memory in use \d+, max \d+, allocated \d+",
         "pool memory in use <*>, max <*>, allocated <*>"),
        (r"child processes for TCP requests: in use \d+, highest since last SIGUSR1 \d+, max allowed \d+\.",
         "child processes for TCP requests: in use <*>, highest since last SIGUSR1 <*>, max allowed <*>."),
        (r"server \S+: queries sent \d+, retried \d+, failed \d+, nxdomain replies \d+, avg\. latency \d+ms",
         "server <*>: queries sent <*>, retried <*>, failed <*>, nxdomain replies <*>, avg. latency <*>ms"),
        (r"server \S+: queries sent \d+, retried or failed \d+",
         "server <*>: queries sent <*>, retried or failed <*>"),
        (r"DNSSEC per-query subqueries HWM \d+", "DNSSEC per-query subqueries HWM <*>"),
        (r"DNSSEC per-query crypto work HWM \d+", "DNSSEC per-query crypto work HWM <*>"),
        (r"DNSSEC per-RRSet signature fails HWM \d+", "DNSSEC per-RRSet signature fails HWM <*>"),
        (r"Host +Address +Flags +Expires +Source", "Host Address Flags Expires Source"),
        (r"-+ -+ -+ -+ -+", "----"),
        # a row of the cache dump (SIGUSR1): name, address or target, flags, expiry, source
        (r"(Host +Address +Flags +Expires +Source|-{10,} .*)", lambda m: m.group(1)[:4]),
        (r"\S+ {2,}.*", "<*> <*> <*> <*> <*>"),
        (r"exiting on receipt of SIGTERM", "exiting on receipt of SIGTERM"),
        (r"(.*)", lambda m: "OTHER " + m.group(1)),
    ])

SSHD = System(
    r"^\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ \S+\[\d+\]: (?P<content>.*)$",
    rules=[
        (r"Connection from \S+ port \d+ on \S+ port \d+ rdomain \"\"",
         "Connection from <*> port <*> on <*> port <*> rdomain \"\""),
        (r"pam_systemd\(sshd:session\): Failed to connect to system bus: .*",
         "pam_systemd(sshd:session): Failed to connect to system bus: <*>"),
        (r"pam_limits\(sshd:session\): Could not set limit for '\w+' to soft=\S+ hard=\S+: .*",
         "pam_limits(sshd:session): Could not set limit for <*> to soft=<*> hard=<*>: <*>"),
        (r"pam_limits\(sshd:session\): Could not set limit for '\w+' to soft=\S+, hard=\S+: .*",
         "pam_limits(sshd:session): Could not set limit for <*> to soft=<*>, hard=<*>: <*>"),
        (r"pam_env\(sshd:session\): deprecated reading of user environment enabled",
         "pam_env(sshd:session): deprecated reading of user environment enabled"),
        (r"User child is on pid \d+", "User child is on pid <*>"),
        (r"Received disconnect from \S+ port \d+:\d+: .*",
         "Received disconnect from <*> port <*>:<*>: <*>"),
        (r"Accepted key \S+ \S+ found at \S+", "Accepted key <*> <*> found at <*>"),
        (r"pam_unix\(sshd:session\): session opened for user \S+ by \S+",
         "pam_unix(sshd:session): session opened for user <*> by <*>"),
        (r"pam_unix\(sshd:session\): session closed for user \S+",
         "pam_unix(sshd:session): session closed for user <*>"),
        (r"Starting session: command for \S+ from \S+ port \d+ id \d+",
         "Starting session: command for <*> from <*> port <*> id <*>"),
        (r"Close session: user \S+ from \S+ port \d+ id \d+",
         "Close session: user <*> from <*> port <*> id <*>"),
        (r"Disconnected from user \S+ \S+ port \d+", "Disconnected from user <*> <*> port <*>"),
        (r"pam_unix\(sshd:auth\): check pass; user unknown",
         "pam_unix(sshd:auth): check pass; user unknown"),
        (r"pam_unix\(sshd:auth\): authentication failure; logname= uid=\d+ euid=\d+ tty=ssh ruser= rhost=\S+  user=\S+",
         "pam_unix(sshd:auth): authentication failure; logname= uid=<*> euid=<*> tty=ssh ruser= rhost=<*> user=<*>"),
        (r"pam_unix\(sshd:auth\): authentication failure; logname= uid=\d+ euid=\d+ tty=ssh ruser= rhost=\S+ ?",
         "pam_unix(sshd:auth): authentication failure; logname= uid=<*> euid=<*> tty=ssh ruser= rhost=<*>"),
        (r"Postponed publickey for \S+ from \S+ port \d+ ssh2 \[preauth\]",
         "Postponed publickey for <*> from <*> port <*> ssh2 [preauth]"),
        (r"Invalid user \S+ from \S+ port \d+", "Invalid user <*> from <*> port <*>"),
        (r"Failed password for invalid user \S+ from \S+ port \d+ ssh2",
         "Failed password for invalid user <*> from <*> port <*> ssh2"),
        (r"Failed password for \S+ from \S+ port \d+ ssh2",
         "Failed password for <*> from <*> port <*> ssh2"),
        (r"Failed publickey for \S+ from \S+ port \d+ ssh2: .*",
         "Failed publickey for <*> from <*> port <*> ssh2: <*>"),
        (r"Accepted password for \S+ from \S+ port \d+ ssh2",
         "Accepted password for <*> from <*> port <*> ssh2"),
        (r"Accepted publickey for \S+ from \S+ port \d+ ssh2: .*",
         "Accepted publickey for <*> from <*> port <*> ssh2: <*>"),
        (r"Connection closed by invalid user \S+ \S+ port \d+ \[preauth\]",
         "Connection closed by invalid user <*> <*> port <*> [preauth]"),
        (r"Connection closed by authenticating user \S+ \S+ port \d+ \[preauth\]",
         "Connection closed by authenticating user <*> <*> port <*> [preauth]"),
        (r"Connection closed by \S+ port \d+( \[preauth\])?", "Connection closed by <*> port <*>"),
        (r"Disconnecting invalid user \S+ \S+ port \d+: Too many authentication failures \[preauth\]",
         "Disconnecting invalid user <*> <*> port <*>: Too many authentication failures [preauth]"),
        (r"Disconnecting authenticating user \S+ \S+ port \d+: Too many authentication failures \[preauth\]",
         "Disconnecting authenticating user <*> <*> port <*>: Too many authentication failures [preauth]"),
        (r"error: maximum authentication attempts exceeded for invalid user \S+ from \S+ port \d+ ssh2 \[preauth\]",
         "error: maximum authentication attempts exceeded for invalid user <*> from <*> port <*> ssh2 [preauth]"),
        (r"error: maximum authentication attempts exceeded for \S+ from \S+ port \d+ ssh2 \[preauth\]",
         "error: maximum authentication attempts exceeded for <*> from <*> port <*> ssh2 [preauth]"),
        (r"PAM \d+ more authentication failures?; .*", "PAM <*> more authentication failures; <*>"),
        (r"error: kex_exchange_identification: client sent invalid protocol identifier \".*\"",
         "error: kex_exchange_identification: client sent invalid protocol identifier <*>"),
        (r"error: kex_exchange_identification: Connection closed by remote host",
         "error: kex_exchange_identification: Connection closed by remote host"),
        (r"banner exchange: Connection from \S+ port \d+: invalid format",
         "banner exchange: Connection from <*> port <*>: invalid format"),
        (r"Unable to negotiate with \S+ port \d+: no matching key exchange method found\. Their offer: \S+ \[preauth\]",
         "Unable to negotiate with <*> port <*>: no matching key exchange method found. Their offer: <*> [preauth]"),
        (r"new user: name=\S+ UID=\d+, GID=\d+, home=\S+ shell=\S+ from=\S+",
         "new user: name=<*> UID=<*>, GID=<*>, home=<*> shell=<*> from=<*>"),
        (r"new group: name=\S+ GID=\d+", "new group: name=<*> GID=<*>"),
        (r"pam_unix\(chpasswd:chauthtok\): password changed for \S+",
         "pam_unix(chpasswd:chauthtok): password changed for <*>"),
        (r"Server listening on \S+ port \d+\.", "Server listening on <*> port <*>."),
        (r"Received signal \d+; terminating\.", "Received signal <*>; terminating."),
        (r"(.*)", lambda m: "OTHER " + m.group(1)),
    ])

# dpkg's log: one format string per action; the package state after "status" and the action
# word are enumerations, so each state and each action is its own event.
DPKG = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?P<content>.*)$",
    rules=[
        (r"status ([a-z-]+) \S+ \S+", lambda m: "status %s <*> <*>" % m.group(1)),
        (r"(install|upgrade) \S+ \S+ \S+", lambda m: "%s <*> <*> <*>" % m.group(1)),
        (r"(configure|trigproc|remove|purge) \S+ \S+ \S+", lambda m: "%s <*> <*> <*>" % m.group(1)),
        (r"startup (archives|packages) ([\w-]+)", lambda m: "startup %s %s" % (m.group(1), m.group(2))),
        (r"conffile \S+ \w+", "conffile <*> <*>"),
    ])

# produce/pyapp_server.py: Python `logging` with "%(asctime)s %(levelname)-8s [%(threadName)s]
# %(name)s: %(message)s"; the thread name may hold spaces ("Thread-12 (process_request_thread)").
# Traceback lines are lines of their own: "Traceback ..." and `File "...", line N, in f` are one
# event each (one format string of the traceback module), each echoed source line and each
# exception type is its own event (they name a different failure).
PYAPP = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (?P<field>[A-Z]+) +\[[^\]]*\] [\w.]+: (?P<content>.*)$",
    continuation=r"^(Traceback |  |\w+(Error|Exception): )",
    rules=[
        (r"Traceback \(most recent call last\):", "Traceback (most recent call last):"),
        (r"File \"\S+\", line \d+, in \w+", "File <*>, line <*>, in <*>"),
        (r"(\w+Error): (.*)", lambda m: m.group(1) + ": " + re.sub(r"'[^']*'|\d+", V, m.group(2))),
        (r"(raise .*|int\(.*)", lambda m: m.group(1)),
        (r"\S+ - \"(GET|HEAD|POST|PUT|DELETE|PATCH) \S+ HTTP/[\d.]+\" (\d+) -",
         lambda m: "<*> - \"%s <*> HTTP/<*>\" %s -" % (m.group(1), m.group(2))),
        (r"\S+ - \"[^\"]*\" (\d+) -", lambda m: "<*> - \"<*>\" %s -" % m.group(1)),
        (r"\S+ - code (\d+), message (Unsupported method|Bad request syntax) \(.*\)",
         lambda m: "<*> - code %s, message %s (<*>)" % (m.group(1), m.group(2))),
        (r"user \S+ authenticated", "user <*> authenticated"),
        (r"user \S+ (created|updated|deleted) key \S+", lambda m: "user <*> %s key <*>" % m.group(1)),
        (r"user \S+ tried to delete missing key \S+", "user <*> tried to delete missing key <*>"),
        (r"cache hit for key \S+ \(\d+ bytes\)", "cache hit for key <*> (<*> bytes)"),
        (r"cache miss for key \S+", "cache miss for key <*>"),
        (r"missing bearer token from \S+ for (\w+) \S+",
         lambda m: "missing bearer token from <*> for %s <*>" % m.group(1)),
        (r"invalid token for user \S+ from \S+", "invalid token for user <*> from <*>"),
        (r"malformed JSON body for \S+: .*", "malformed JSON body for <*>: <*>"),
        (r"request body too large: \d+ bytes \(limit \d+\) from \S+",
         "request body too large: <*> bytes (limit <*>) from <*>"),
        (r"unhandled error while serving \S+", "unhandled error while serving <*>"),
        (r"no route for (\w+) \S+", lambda m: "no route for %s <*>" % m.group(1)),
        (r"queued job \S+ of kind (\w+) \(queue depth \d+\)",
         lambda m: "queued job <*> of kind %s (queue depth <*>)" % m.group(1)),
        (r"compacted store: \d+ keys kept", "compacted store: <*> keys kept"),
        (r"exported \d+ keys to \S+", "exported <*> keys to <*>"),
        (r"slept \S+ s", "slept <*> s"),
        (r"job \S+ failed", "job <*> failed"),
        (r"job \S+ done in \S+ ms", "job <*> done in <*> ms"),
        (r"unknown job kind \S+, dropped", "unknown job kind <*>, dropped"),
        (r"listening on \S+ with \d+ workers", "listening on <*> with <*> workers"),
        (r"shutting down after \d+ keys", "shutting down after <*> keys"),
        (r"stopped", "stopped"),
    ])

# Apache httpd 2.4 error log: "[date] [module:level] [pid P:tid T] " then the message, which may
# start with "(errno)Reason: ", "file.c(line): " (debug) and "[client ip:port] ", and carries
# the message's AH number. A CGI script's stderr is copied into the log without a header: a line
# of its own, one event per text.
CL = r"\[client \S+\] "
SRC = r"\w+\.c\(\d+\): "
APACHE = System(
    r"^\[[^\]]+\] \[(?P<field>\w+:\w+)\] \[pid \d+(?::tid \d+)?\] (?P<content>.*)$",
    continuation=r"^[^\[]",
    rules=[
        # mod_log appends the request's referer to any message: the same event.
        (r"(.*), referer: \S+", lambda m: APACHE.label(m.group(1))),
        (r"\(32\)Broken pipe: " + CL + r"AH02651: Error writing request body to script \S+",
         "(32)Broken pipe: [client <*>] AH02651: Error writing request body to script <*>"),
        (r"\(104\)Connection reset by peer: " + CL + r"AH00574: ap_content_length_filter: apr_bucket_read\(\) failed",
         "(104)Connection reset by peer: [client <*>] AH00574: ap_content_length_filter: apr_bucket_read() failed"),
        (CL + r"AH00128: File does not exist: \S+", "[client <*>] AH00128: File does not exist: <*>"),
        (r"\(13\)Permission denied: " + CL + r"AH00132: file permissions deny server access: \S+",
         "(13)Permission denied: [client <*>] AH00132: file permissions deny server access: <*>"),
        (CL + r"AH01617: user \S+: authentication failure for \"\S+\": (.*)",
         lambda m: "[client <*>] AH01617: user <*>: authentication failure for <*>: " + m.group(1)),
        (CL + r"AH01618: user \S+ not found: \S+", "[client <*>] AH01618: user <*> not found: <*>"),
        (CL + r"AH01631: user \S+: authorization failure for \"\S+\":",
         "[client <*>] AH01631: user <*>: authorization failure for <*>:"),
        (CL + r"AH01630: client denied by server configuration: \S+",
         "[client <*>] AH01630: client denied by server configuration: <*>"),
        (CL + r"AH01114: HTTP: failed to make connection to backend: \S+",
         "[client <*>] AH01114: HTTP: failed to make connection to backend: <*>"),
        (r"\(111\)Connection refused: AH00957: http: attempt to connect to \S+ \(\S+\) failed",
         "(111)Connection refused: AH00957: http: attempt to connect to <*> (<*>) failed"),
        (SRC + CL + r"AH00944: connecting \S+ to \S+", "<*> [client <*>] AH00944: connecting <*> to <*>"),
        (SRC + CL + r"AH00947: connecting \S+ to \S+ \(\S+\)",
         "<*> [client <*>] AH00947: connecting <*> to <*> (<*>)"),
        (SRC + r"(?:" + CL + r")?AH00942: http: has acquired connection for \(\S+\)",
         "<*> AH00942: http: has acquired connection for (<*>)"),
        (SRC + r"AH00943: http: has released connection for \(\S+\)",
         "<*> AH00943: http: has released connection for (<*>)"),
        (SRC + r"(" + CL + r")?(AH\d+): http: \S+ resolved to \S+",
         lambda m: "<*> %s%s: http: <*> resolved to <*>" % ("[client <*>] " if m.group(1) else "", m.group(2))),
        (SRC + CL + r"AH01143: Running scheme http handler \(attempt \d+\)",
         "<*> [client <*>] AH01143: Running scheme http handler (attempt <*>)"),
        (SRC + r"AH02337: initializing worker \S+ (shared|local)",
         lambda m: "<*> AH02337: initializing worker <*> " + m.group(1)),
        (SRC + r"AH00925: initializing worker \S+ (shared|local)",
         lambda m: "<*> AH00925: initializing worker <*> " + m.group(1)),
        (SRC + r"AH00927: initializing worker \S+ (shared|local)",
         lambda m: "<*> AH00927: initializing worker <*> " + m.group(1)),
        (SRC + r"AH00930: initialized pool in child \d+ for \(\S+\) min=\d+ max=\d+ smax=\d+",
         "<*> AH00930: initialized pool in child <*> for (<*>) min=<*> max=<*> smax=<*>"),
        (CL + r"End of script output before headers: \S+",
         "[client <*>] End of script output before headers: <*>"),
        (CL + r"malformed header from script '\S+': Bad header: .*",
         "[client <*>] malformed header from script <*>: Bad header: <*>"),
        (CL + r"AH01264: stderr from \S+: script not found or unable to stat",
         "[client <*>] AH01264: stderr from <*>: script not found or unable to stat"),
        (CL + r"(AH\d+): invalid URI path \(\S+\)", lambda m: "[client <*>] %s: invalid URI path (<*>)" % m.group(1)),
        (r"AH00490: Server built: \S+", "AH00490: Server built: <*>"),
        (r"AH00094: Command line: .*", "AH00094: Command line: <*>"),
        (r"AH00489: Apache/\S+ \(Debian\) configured -- resuming normal operations",
         "AH00489: Apache/<*> (Debian) configured -- resuming normal operations"),
        (r"AH00493: SIGUSR1 received\.  Doing graceful restart",
         "AH00493: SIGUSR1 received.  Doing graceful restart"),
        (r"AH00484: server reached MaxRequestWorkers setting, .*", "AH00484: server reached MaxRequestWorkers setting, <*>"),
        (r"AH10159: server is within MinSpareThreads of MaxRequestWorkers, .*",
         "AH10159: server is within MinSpareThreads of MaxRequestWorkers, <*>"),
        (r"AH03490: scoreboard is full, not at MaxRequestWorkers\.Increase ServerLimit\.",
         "AH03490: scoreboard is full, not at MaxRequestWorkers.Increase ServerLimit."),
        (r"AH00169: caught SIGTERM, shutting down", "AH00169: caught SIGTERM, shutting down"),
        (r"AH00492: caught SIGWINCH, shutting down gracefully", "AH00492: caught SIGWINCH, shutting down gracefully"),
        (r"AH00491: caught SIGTERM, shutting down", "AH00491: caught SIGTERM, shutting down"),
        (r"AH00558: .*", "AH00558: <*>"),
        (r"AH02282: .*", "AH02282: <*>"),
        (r"AH01909: .*", "AH01909: <*>"),
        (r"oops from script", "oops from script"),
        (r"not a header", "not a header"),
        (r"AH00096: removed PID file \S+ \(pid=\d+\)", "AH00096: removed PID file <*> (pid=<*>)"),
    ])

# MariaDB 10.11's error log (log_warnings=4): "date time thread [Level] message"; InnoDB's
# deadlock dump (innodb_print_all_deadlocks) continues over lines without a header, each a line
# of its own: a record's field dump (` 0: len 4; hex ...; asc ...;;`) is one format string, the
# transaction's SQL text is labelled by its shape (as PostgreSQL's).
MARIADB_ERROR = System(
    r"^\d{4}-\d\d-\d\d [ \d]\d:\d\d:\d\d \d+ \[(?P<field>\w+)\] (?P<content>.*)$",
    continuation=r"^(?!\d{4}-\d\d-\d\d )",
    rules=[
        (r"Access denied for user '[^']*'@'[^']*' \(using password: (YES|NO)\)",
         lambda m: "Access denied for user <*>@<*> (using password: %s)" % m.group(1)),
        (r"Access denied for user '[^']*'@'[^']*' to database '[^']*'",
         "Access denied for user <*>@<*> to database <*>"),
        (r"Aborted connection \d+ to db: '[^']*' user: '[^']*' host: '[^']*' \((.*)\)",
         lambda m: "Aborted connection <*> to db: <*> user: <*> host: <*> (%s)" % m.group(1)),
        (r"Could not read packet: fd: \d+  state: \d+  read_length: \d+  errno: \d+  vio_errno: \d+  length: \d+",
         "Could not read packet: fd: <*> state: <*> read_length: <*> errno: <*> vio_errno: <*> length: <*>"),
        (r"Could not write packet: fd: \d+  state: \d+  errno: \d+  vio_errno: \d+  length: \d+",
         "Could not write packet: fd: <*> state: <*> errno: <*> vio_errno: <*> length: <*>"),
        (r"mariadbd: Got an error (reading|writing) communication packets",
         lambda m: "mariadbd: Got an error %s communication packets" % m.group(1)),
        (r"'(user|proxies_priv)' entry '.*' ignored in --skip-name-resolve mode\.",
         lambda m: "'%s' entry <*> ignored in --skip-name-resolve mode." % m.group(1)),
        (r"Starting MariaDB \S+ source revision \w+ server_uid \S+ as process \d+",
         "Starting MariaDB <*> source revision <*> server_uid <*> as process <*>"),
        (r"InnoDB: Compressed tables use zlib \S+", "InnoDB: Compressed tables use zlib <*>"),
        (r"InnoDB: Number of transaction pools: \d+", "InnoDB: Number of transaction pools: <*>"),
        (r"InnoDB: Using (\w+) instructions", "InnoDB: Using <*> instructions"),
        (r"InnoDB: Using io_uring", "InnoDB: Using io_uring"),
        (r"InnoDB: innodb_buffer_pool_size_max=\w+, innodb_buffer_pool_size=\w+",
         "InnoDB: innodb_buffer_pool_size_max=<*>, innodb_buffer_pool_size=<*>"),
        (r"InnoDB: Completed initialization of buffer pool", "InnoDB: Completed initialization of buffer pool"),
        (r"InnoDB: File system buffers for log disabled \(block size=\d+ bytes\)",
         "InnoDB: File system buffers for log disabled (block size=<*> bytes)"),
        (r"InnoDB: End of log at LSN=\d+", "InnoDB: End of log at LSN=<*>"),
        (r"InnoDB: \d+ rollback segments are active\.", "InnoDB: <*> rollback segments are active."),
        (r"InnoDB: Setting file '\S+' size to \S+\. Physically writing the file full; Please wait \.\.\.",
         "InnoDB: Setting file <*> size to <*>. Physically writing the file full; Please wait ..."),
        (r"InnoDB: File '\S+' size is now \S+\.", "InnoDB: File <*> size is now <*>."),
        (r"InnoDB: log sequence number \d+; transaction id \d+",
         "InnoDB: log sequence number <*>; transaction id <*>"),
        (r"InnoDB: Removed temporary tablespace data file: \"\S+\"",
         "InnoDB: Removed temporary tablespace data file: <*>"),
        (r"InnoDB: Loading buffer pool\(s\) from \S+", "InnoDB: Loading buffer pool(s) from <*>"),
        (r"InnoDB: Dumping buffer pool\(s\) to \S+", "InnoDB: Dumping buffer pool(s) to <*>"),
        (r"InnoDB: Buffer pool\(s\) (load|dump) completed at \d+ +\d+:\d\d:\d\d",
         lambda m: "InnoDB: Buffer pool(s) %s completed at <*>" % m.group(1)),
        (r"InnoDB: Starting crash recovery from checkpoint LSN=\d+",
         "InnoDB: Starting crash recovery from checkpoint LSN=<*>"),
        (r"InnoDB: To recover: \d+ pages", "InnoDB: To recover: <*> pages"),
        (r"InnoDB: Starting shutdown\.\.\.", "InnoDB: Starting shutdown..."),
        (r"InnoDB: FTS optimize thread exiting\.", "InnoDB: FTS optimize thread exiting."),
        (r"InnoDB: Online DDL : (Start|End) of reading clustered index of the table and create temporary files|InnoDB: Online DDL : Start reading clustered index of the table and create temporary files",
         lambda m: m.group(0)),
        (r"InnoDB: Transactions deadlock detected, dumping detailed information\.",
         "InnoDB: Transactions deadlock detected, dumping detailed information."),
        (r"InnoDB:", "InnoDB:"),
        (r"InnoDB: \*\*\* (WAITING FOR THIS LOCK TO BE GRANTED|CONFLICTING WITH):",
         lambda m: m.group(0)),
        (r"InnoDB: \*\*\* WE ROLL BACK TRANSACTION \(\d+\)", "InnoDB: *** WE ROLL BACK TRANSACTION (<*>)"),
        (r"InnoDB: Transaction was aborted due to Deadlock", "InnoDB: Transaction was aborted due to Deadlock"),
        (r"Shutdown completed; log sequence number \d+; transaction id \d+",
         "Shutdown completed; log sequence number <*>; transaction id <*>"),
        (r"Plugin '\w+' is disabled\.", "Plugin <*> is disabled."),
        (r"Server socket created on IP: '\S+', port: '\d+'\.",
         "Server socket created on IP: <*>, port: <*>."),
        (r"Reading of all Master_info entries succeeded", "Reading of all Master_info entries succeeded"),
        (r"Added new Master_info '' to hash table", "Added new Master_info '' to hash table"),
        (r"mariadbd: ready for connections\.", "mariadbd: ready for connections."),
        (r"Version: '\S+'  socket: '\S+'  port: \d+  .*", "Version: <*> socket: <*> port: <*> <*>"),
        (r"Using PAUSE multiplier \d+", "Using PAUSE multiplier <*>"),
        (r"mariadbd \(initiated by: .*\): Normal shutdown",
         "mariadbd (initiated by: <*>): Normal shutdown"),
        (r"mariadbd: Shutdown complete", "mariadbd: Shutdown complete"),
        # the deadlock dump's lines without a header
        (r"\*\*\* \(\d+\) TRANSACTION:", "*** (<*>) TRANSACTION:"),
        (r"TRANSACTION \d+, ACTIVE \d+ sec (.*)", lambda m: "TRANSACTION <*>, ACTIVE <*> sec " + m.group(1)),
        (r"mysql tables in use \d+, locked \d+", "mysql tables in use <*>, locked <*>"),
        (r"LOCK WAIT \d+ lock struct\(s\), heap size \d+, \d+ row lock\(s\), undo log entries \d+",
         "LOCK WAIT <*> lock struct(s), heap size <*>, <*> row lock(s), undo log entries <*>"),
        (r"MariaDB thread id \d+, OS thread handle \d+, query id \d+ \S+ \S+ (\w+)",
         lambda m: "MariaDB thread id <*>, OS thread handle <*>, query id <*> <*> <*> " + m.group(1)),
        (r"RECORD LOCKS space id \d+ page no \d+ n bits \d+ index \S+ of table \S+ trx id \d+ lock_mode (\w+) locks rec but not gap( waiting)?",
         lambda m: "RECORD LOCKS space id <*> page no <*> n bits <*> index <*> of table <*> trx id <*> lock_mode %s locks rec but not gap%s" % (m.group(1), m.group(2) or "")),
        (r"Record lock, heap no \d+ PHYSICAL RECORD: n_fields \d+; compact format; info bits \d+",
         "Record lock, heap no <*> PHYSICAL RECORD: n_fields <*>; compact format; info bits <*>"),
        (r"\d+: len \d+; hex \w+; asc .*;;", "<*>: len <*>; hex <*>; asc <*>;;"),
        (r"\d+: SQL NULL;", "<*>: SQL NULL;"),
        (r"(UPDATE|INSERT|DELETE|SELECT) .*", lambda m: sql_shape_spaced(m.group(0))),
    ])

# MariaDB's general query log: "[yymmdd h:mm:ss]<tab>id Command<tab>argument" (the time only
# when it changed). The command (Connect, Query, Quit, Init DB...) is the event's type; a
# Query is labelled by its SQL text's shape (as PostgreSQL's statements); the server's banner
# at each start has no header.
MARIADB_GENERAL = System(
    r"^(?:\d{6} [ \d]\d:\d\d:\d\d)?\t+ *\d+ (?P<content>[A-Z][a-z]+(?: DB)?\t.*)$",
    continuation=r"^(mariadbd, Version|Tcp port|Time\s)",
    rules=[
        (r"Connect\t\S+@\S+ on \S* using (TCP/IP|Socket)",
         lambda m: "Connect <*>@<*> on <*> using " + m.group(1)),
        (r"(Connect|Init DB)\tAccess denied for user '[^']*'@'[^']*' \(using password: (YES|NO)\)",
         lambda m: "%s Access denied for user <*>@<*> (using password: %s)" % (m.group(1), m.group(2))),
        (r"(Connect|Init DB)\tAccess denied for user '[^']*'@'[^']*' to database '[^']*'",
         lambda m: "%s Access denied for user <*>@<*> to database <*>" % m.group(1)),
        (r"Init DB\t\S+", "Init DB <*>"),
        (r"Quit\s*", "Quit"),
        (r"Shutdown\s*", "Shutdown"),
        (r"Query\t(.*)", lambda m: "Query " + sql_shape_spaced(m.group(1))),
        (r"mariadbd, Version: \S+ \(.*\)\. started with:", "mariadbd, Version: <*> (<*>). started with:"),
        (r"Tcp port: \d+  Unix socket: \S+", "Tcp port: <*> Unix socket: <*>"),
        (r"Time\s+Id Command\s+Argument", "Time Id Command Argument"),
    ])

# clickhouse-server 18.16's own log (level debug): "date time [ thread ] {query id} <Level>
# Logger: message", the logger a name or "db.table (Component)". An exception's text is the
# event (its kind, with values as variables); where it is logged (a query's "(from ...) (in
# query: ...)" or a handler's) is part of it. A stack trace's frames are one format string; each
# node of a dumped query pipeline (lines without a header) is its own event by the node's type.
CH_EXCEPTIONS = [
    (r"Unknown user \S+", "Unknown user <*>"),
    (r"Unknown identifier: \S+\. Note that there is no tables \(FROM clause\) in your query",
     "Unknown identifier: <*>. Note that there is no tables (FROM clause) in your query"),
    (r"Unknown identifier: \S+", "Unknown identifier: <*>"),
    (r"Table \S+ doesn't exist\.", "Table <*> doesn't exist."),
    (r"Number of arguments for function \w+ doesn't match: passed \d+, should be \d+",
     "Number of arguments for function <*> doesn't match: passed <*>, should be <*>"),
    (r"Cannot parse string '.*' as (\w+): syntax error at position \d+ \(parsed just '.*'\)",
     lambda m: "Cannot parse string <*> as %s: syntax error at position <*> (parsed just <*>)" % m.group(1)),
    (r"Bad get: has \w+, requested \w+", "Bad get: has <*>, requested <*>"),
    (r"Query was cancelled", "Query was cancelled"),
]


def ch_exception(m):
    text, rest = m.group(2), m.group(3)
    for regex, template in CH_EXCEPTIONS:
        e = re.fullmatch(regex, text)
        if e:
            kind = template(e) if callable(template) else template
            break
    else:
        raise ValueError("no exception rule: %r" % text)
    where = " (from <*>) (in query: <*>), Stack trace:" if "(in query: " in rest else ", Stack trace:"
    return "Code: %s, e.displayText() = DB::Exception: %s, e.what() = DB::Exception%s" % (
        m.group(1), kind, where)


CLICKHOUSE = System(
    r"^\d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d\.\d+ \[ \d+ \] \{[^}]*\} <(?P<field>\w+)> [^:]*: (?P<content>.*)$",
    continuation=r"^(?!\d{4}\.\d\d\.\d\d )",
    rules=[
        (r"Code: (\d+), e\.displayText\(\) = DB::Exception: (.*), e\.what\(\) = DB::Exception(.*)", ch_exception),
        (r"Starting ClickHouse \S+ with revision \d+", "Starting ClickHouse <*> with revision <*>"),
        (r"starting up", "starting up"),
        (r"shutting down", "shutting down"),
        (r"Set max number of file descriptors to \d+ \(was \d+\)\.",
         "Set max number of file descriptors to <*> (was <*>)."),
        (r"Initializing DateLUT\.", "Initializing DateLUT."),
        (r"Configuration parameter '\w+' doesn't exist or exists and empty\. Will use '\S+' as replica host\.",
         "Configuration parameter <*> doesn't exist or exists and empty. Will use <*> as replica host."),
        (r"Loading metadata\.", "Loading metadata."),
        (r"Loaded metadata\.", "Loaded metadata."),
        (r"Listening tcp: \S+", "Listening tcp: <*>"),
        (r"Listening http://\S+", "Listening http://<*>"),
        (r"Listening interserver http: \S+", "Listening interserver http: <*>"),
        (r"It looks like the process has no CAP_NET_ADMIN capability, .*",
         "It looks like the process has no CAP_NET_ADMIN capability, <*>"),
        (r"Available RAM = \S+ \w+; physical cores = \d+; threads = \d+\.",
         "Available RAM = <*>; physical cores = <*>; threads = <*>."),
        (r"Ready for connections\.", "Ready for connections."),
        (r"Loading config `\S+'", "Loading config <*>"),
        (r"Create BackgroundProcessingPool with \d+ threads", "Create BackgroundProcessingPool with <*> threads"),
        (r"Connected ClickHouse client version \S+, revision: \d+, user: \S+\.",
         "Connected ClickHouse client version <*>, revision: <*>, user: <*>."),
        (r"Done processing connection\.", "Done processing connection."),
        (r"Done processing query", "Done processing query"),
        (r"Processed in \S+ sec\.", "Processed in <*> sec."),
        (r"Peak memory usage \((for query|total)\): \S+ \w+\.",
         lambda m: "Peak memory usage (%s): <*>." % m.group(1)),
        (r"Query pipeline:", "Query pipeline:"),
        (r"\(from \S+\) (.*)", lambda m: "(from <*>) " + sql_shape(m.group(1))),
        (r"Read \d+ rows, \S+ \w+ in \S+ sec\., \d+ rows/sec\., \S+ \w+/sec\.",
         "Read <*> rows, <*> in <*> sec., <*> rows/sec., <*>/sec."),
        (r"Selected \d+ parts by date, \d+ parts by key, \d+ marks to read from \d+ ranges",
         "Selected <*> parts by date, <*> parts by key, <*> marks to read from <*> ranges"),
        (r"Key condition: .*", "Key condition: <*>"),
        (r"Removing part from filesystem \S+", "Removing part from filesystem <*>"),
        (r"Selected MergeAlgorithm: (\w+)", lambda m: "Selected MergeAlgorithm: " + m.group(1)),
        (r"Merge sorted \d+ rows, containing \d+ columns \(\d+ merged, \d+ gathered\) in \S+ sec\., \S+ rows/sec\., \S+ MB/sec\.",
         "Merge sorted <*> rows, containing <*> columns (<*> merged, <*> gathered) in <*> sec., <*> rows/sec., <*> MB/sec."),
        (r"Selected \d+ parts from \S+ to \S+", "Selected <*> parts from <*> to <*>"),
        (r"Merging \d+ parts: from \S+ to \S+ into \S+", "Merging <*> parts: from <*> to <*> into <*>"),
        (r"Merge sorted \d+ blocks, \d+ rows in \S+ sec\., \S+ rows/sec\., \S+ MB/sec\.",
         "Merge sorted <*> blocks, <*> rows in <*> sec., <*> rows/sec., <*> MB/sec."),
        (r"Added mutation: \S+", "Added mutation: <*>"),
        (r"MergeTreeWhereOptimizer: condition `.*` moved to PREWHERE",
         "MergeTreeWhereOptimizer: condition <*> moved to PREWHERE"),
        (r"Loading data parts", "Loading data parts"),
        # fixed texts of the start and the stop: each its own event
        ("|".join(re.escape(t) for t in [
            "Received termination signal (Terminated)", "Received termination signal.",
            "Waiting for current connections to close.", "Closed all listening sockets.",
            "Closed connections.", "Shutting down storages.", "Shutted down storages.",
            "Destroyed global context.", "Stop SignalListener thread", "Starting up tables."]),
         lambda m: m.group(0)),
        (r"Uninitializing subsystem: (.*)", lambda m: "Uninitializing subsystem: " + m.group(1)),
        (r"Total \d+ tables\.", "Total <*> tables."),
        (r"Loaded data parts \(\d+ items\)", "Loaded data parts (<*> items)"),
        (r"\d+\. \S+\(.*\) \[0x[0-9a-f]+\]", "<*>. <*>(<*>) [<*>]"),
        (r"([A-Z]\w+)( × \d+)?", lambda m: "pipeline " + m.group(1)),
    ])

# Apache Kafka 3.9's server log (log4j "[%d] %p %m (%c)%n", INFO): the broker's messages are
# too many to list one by one (about 200 in a short run), so an event is the message's shape:
# its log prefix ("[GroupCoordinator 1]: ", an instance's identity) and every variable become
# <*> - numbers and anything holding a digit, quoted text, paths, 22-character ids, the names
# produce/kafka.sh chose (topics, groups), and the arguments of a few shared helpers whose
# format string takes a name ("Waiting for {}", "initializing {} with a snapshot", "{}: event
# failed", a channel manager's name, a configuration's key and value) - and a run of variables separated by commas (a list,
# "Set(a-0, a-1)") is one. Other words stay (states, listener types, error codes, results:
# different events). The trailing logger "(%c)" is header, not event: one format string is
# logged by many classes (a fetcher manager's, a thread's "Starting"). The multi-line
# "KafkaConfig values:" dump's "\tkey = value" rows are one event (one format string for every
# row, as dnsmasq's cache dump), its closing " (logger)" line another.
KAFKA_NAMES = r"\b(orders|payments|audit|scratch|billing|reporting|missing-topic|__consumer_offsets|__cluster_metadata)\b"


def kafka_shape(message):
    s = re.sub(r"^\[[^\]]*\]:? ?", "[<*>] ", message)
    # a configuration's key and value, letters only or not, are a format string's variables
    s = re.sub(r"(which set configuration) \S+ to \S+", r"\1 <*> to <*>", s)
    s = re.sub(r"(with new configuration :) .*", r"\1 <*>", s)
    s = re.sub(r"^(\[<\*>\] (?:Finished w|W)aiting for) .*", r"\1 <*>", s)
    s = re.sub(r"(initializing) .* (with a snapshot at offset)", r"\1 <*> \2", s)
    s = re.sub(r"(for endpoint : ListenerName)\(\w+\)", r"\1(<*>)", s)
    s = re.sub(r"(Node to controller channel manager for) \S+ (shutdown)", r"\1 <*> \2", s)
    s = re.sub(r"^\[<\*>\] \w+: (event (?:unable|failed))", r"[<*>] <*>: \1", s)
    s = re.sub(r"'[^']*'|\"[^\"]*\"", V, s)
    s = re.sub(KAFKA_NAMES, V, s)
    s = re.sub(r"(?<![\w<])[A-Za-z0-9_-]{22}(?![\w>])", V, s)
    s = re.sub(r"/[\w./-]+", V, s)
    s = re.sub(r"[\w.\-:@$]*\d[\w.\-:@$]*", V, s)
    s = re.sub(r"(?:[\w.\-:@$/]*<\*>)+[\w.\-:@$/]*", V, s)
    s = re.sub(r"<\*>(?:, ?<\*>)+", V, s)
    return s


class KafkaLog(System):
    def content(self, line):
        m = re.match(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\] [A-Z]+ (.*?)(?: \(([\w.$]+)\))?$", line)
        if m:
            return m.group(1), m.group(2) or "-"
        if re.match(r"^\t[\w.]+ = ", line):
            return line.strip(), "config row"
        if re.match(r"^ \([\w.$]+\)$", line):
            return line.strip(), "dump end"
        if re.match(r"^[\w.]+(Exception|Error): ", line):
            return line.strip(), "exception"
        raise ValueError("no header: %r" % line)

    def label(self, content, field=None):
        if field == "config row":
            return "<*> = <*>"
        if field == "dump end":
            return "(<*>)"
        if field == "exception":
            t, msg = content.split(": ", 1)
            return t + ": " + kafka_shape(msg)
        return kafka_shape(content)


KAFKA = KafkaLog(r"^$", rules=[])

# Headless Chromium's log (--enable-logging=stderr --v=1): "[pid:tid:MMDD/HHMMSS.us:LEVEL:
# file.cc:line] message". Every LOG/VLOG statement names its source location in the header,
# which is its format string: the event is that location, with the error code the message
# holds (`Page load failed: net::ERR_NAME_NOT_RESOLVED` and `...ERR_TOO_MANY_REDIRECTS` are two
# events of one statement); two locations that print the same text (after numbers, hex,
# quoted text and dotted or CamelCase names become <*>) are one event, as no reader of the message could tell them apart. Lines
# without a header: the histogram dump at exit ("Histogram: <name> recorded N samples...",
# each bucket row, each gap row: one event each, one format string for every histogram), the
# rows of a multi-line context dump ("  context_type: WEBUI": the field, and its value when an
# enumeration in capitals), and a library's own line on stderr. A page's console message
# ("[...:INFO:CONSOLE:1] "text", source: URL (1)") is the page script's statement: its text.
class ChromiumLog(System):
    HEADER = re.compile(r"^\[\d+:\d+:\d{4}/\d{6}\.\d+:(?P<field>[A-Z]+\d*):(?P<loc>[^\]:]+:\d+)\] ?(?P<content>.*)$")
    ROWS = [
        (r"Histogram: \S+ recorded \d+ samples, mean = \S+ \(flags = 0x[0-9a-f]+\)",
         "Histogram: <*> recorded <*> samples, mean = <*> (flags = <*>)"),
        (r"Histogram: \S+ recorded \d+ samples, mean = \S+", "Histogram: <*> recorded <*> samples, mean = <*>"),
        (r"Histogram: \S+ recorded \d+ samples \(flags = 0x[0-9a-f]+\)",
         "Histogram: <*> recorded <*> samples (flags = <*>)"),
        (r"-?\d+ *[-O]* +\(\d+ = [\d.]+%\)( \{[\d.]+%\})?", "<*> <*> (<*> = <*>%) {<*>%}"),
        (r"-?\d+ *\.\.\.", "<*> ..."),
        (r" +([\w ]+): *([A-Z_]+)", lambda m: "%s: %s" % (m.group(1).strip(), m.group(2))),
        (r" +([\w ]+):.*", lambda m: "%s: <*>" % m.group(1).strip()),
        (r"\S+\.so[.\d]*: cannot open shared object file: No such file or directory",
         "<*>: cannot open shared object file: No such file or directory"),
    ]

    @staticmethod
    def shape(content):
        s = re.sub(r"'[^']*'|\"[^\"]*\"", V, content)
        s = re.sub(r"\S*\d\S*", V, s)
        # dotted and CamelCase names (D-Bus signals, metric names) are a statement's arguments
        return re.sub(r"\S*(?:[a-z]\.[A-Za-z]|[a-z][A-Z])\S*", V, s)

    def prepare(self, lines):
        """Locations printing the same text shape are one event: the first location's name."""
        parent = {}

        def find(x):
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x
        first = {}
        for line in lines:
            m = self.HEADER.match(line)
            if m:
                loc, sh = m.group("loc"), self.shape(m.group("content"))
                if len(re.findall(r"[A-Za-z]{2,}", sh.replace(V, ""))) < 2:
                    continue  # too little text left to say two statements print the same
                other = first.setdefault(sh, loc)
                a, b = sorted((find(loc), find(other)))
                parent[b] = a
        self.alias = {loc: find(loc) for loc in parent}

    def content(self, line):
        m = self.HEADER.match(line)
        if m:
            return m.group("content"), m.group("loc")
        return line.rstrip(), None

    def label(self, content, field=None):
        if field is not None and field.startswith("CONSOLE:"):
            # a page's console message: each script statement's text is its own event
            text = re.match(r'"(.*)", source: ', content)
            return "[CONSOLE] " + re.sub(r"\d+", V, text.group(1) if text else content)
        if field is not None:
            codes = re.findall(r"\bERR_[A-Z0-9_]+\b", content)
            return " ".join(["[%s] <*>" % self.alias.get(field, field)] + codes)
        for regex, template in self.ROWS:
            m = re.fullmatch(regex, content)
            if m:
                return template(m) if callable(template) else template
        raise ValueError("no rule: %r" % content)


CHROMIUM = ChromiumLog(r"^$", rules=[])

# Postfix through rsyslogd: each daemon's format strings. A delivery's `status=` is an
# enumeration (sent, deferred, bounced) and its reason in parentheses is the event too (it comes
# from its own format string: `delivered to mailbox`, `connect to %s: %m`, `host %s said: %s (in
# reply to %s command)`), with the error text, DNS record type and SMTP command kept; the remote
# server's reply text is a variable. A rejection's action (reject, discard, hold), SMTP stage,
# reply code and reason text are the event (`Relay access denied`, `User unknown in local
# recipient table` and each access table's text); `orig_to=`, `orig_id=` and the `(N bytes)` of
# one format string are optional parts of it, and `disconnect from` with its list of command
# counters is one event.
PF_ID = r"(?:[0-9A-F]{6,}|NOQUEUE)"


def postfix_reason(reason):
    fixed = [
        (r"delivered to mailbox|temporary failure|user unknown|this domain is retired|try again later",
         None),
        (r"delivered to file: \S+", "delivered to file: <*>"),
        (r"delivered to command: .*", "delivered to command: <*>"),
        (r"\d{3} \d\.\d\.\d Ok: queued as [0-9A-F]+", "<*> <*> Ok: queued as <*>"),
        (r"Command died with status \d+: .*", "Command died with status <*>: <*>"),
        (r"cannot update mailbox \S+ for user \S+\. (.*)",
         lambda m: "cannot update mailbox <*> for user <*>. " + m.group(1)),
        (r"connect to \S+: (.*)", lambda m: "connect to <*>: " + m.group(1)),
        (r"delivery temporarily suspended: (.*)",
         lambda m: "delivery temporarily suspended: " + postfix_reason(m.group(1))),
        (r"host \S+ said: \d{3} \d\.\d\.\d <[^>]*>: (.*) \(in reply to (.*) command\)",
         lambda m: "host <*> said: <*> <*> <*>: %s (in reply to %s command)" % m.groups()),
        (r"host \S+ said: (.*) \(in reply to (.*) command\)",
         lambda m: "host <*> said: <*> (in reply to %s command)" % m.group(2)),
        (r"Host or domain name not found\. Name service error for name=\S+ type=(\w+): (.*)",
         lambda m: "Host or domain name not found. Name service error for name=<*> type=%s: %s"
         % m.groups()),
    ]
    for regex, template in fixed:
        m = re.fullmatch(regex, reason)
        if m:
            if template is None:
                return reason
            return template(m) if callable(template) else template
    raise ValueError("no rule for the delivery reason: %r" % reason)


POSTFIX = System(
    r"^\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ postfix/[\w/-]+\[\d+\]: (?P<content>.*)$",
    rules=[
        (r"connect from \S+", "connect from <*>"),
        (r"disconnect from \S+( \S+=\S+)*", "disconnect from <*> <*>"),
        (r"[0-9A-F]+: client=\S+", "<*>: client=<*>"),
        (r"[0-9A-F]+: message-id=.*", "<*>: message-id=<*>"),
        (r"[0-9A-F]+: from=<[^>]*>, size=\d+, nrcpt=\d+ \(queue active\)",
         "<*>: from=<*>, size=<*>, nrcpt=<*> (queue active)"),
        (r"[0-9A-F]+: removed", "<*>: removed"),
        (r"[0-9A-F]+: from=<[^>]*>, status=expired, returned to sender",
         "<*>: from=<*>, status=expired, returned to sender"),
        (r"[0-9A-F]+: sender non-delivery notification: [0-9A-F]+",
         "<*>: sender non-delivery notification: <*>"),
        (r"[0-9A-F]+: sender delivery status notification: [0-9A-F]+",
         "<*>: sender delivery status notification: <*>"),
        (r"[0-9A-F]+: uid=\d+ from=<[^>]*>( orig_id=[0-9A-F]+)?", "<*>: uid=<*> from=<*>"),
        (r"[0-9A-F]+: to=<[^>]*>, (?:orig_to=<[^>]*>, )?relay=\S+, delay=\S+, delays=\S+, dsn=\S+, status=(\w+) \((.*)\)",
         lambda m: "<*>: to=<*>, relay=<*>, delay=<*>, delays=<*>, dsn=<*>, status=%s (%s)"
         % (m.group(1), postfix_reason(m.group(2)))),
        (PF_ID + r": (reject|discard|hold|warn|filter|redirect): (\S+) from \S+: (\d{3} \d\.\d\.\d )?<[^>]*>: (.*?); from=<[^>]*> to=<[^>]*> proto=(\w+) helo=<[^>]*>",
         lambda m: "<*>: %s: %s from <*>: %s<*>: %s; from=<*> to=<*> proto=%s helo=<*>"
         % (m.group(1), m.group(2), m.group(3) or "", m.group(4), m.group(5))),
        (r"[0-9A-F]+: (reject|warning|discard|hold|filter|redirect): (header|body) .* from \S+; from=<[^>]*> to=<[^>]*> proto=(\w+) helo=<[^>]*>(?:: (.*))?",
         lambda m: "<*>: %s: %s <*> from <*>; from=<*> to=<*> proto=%s helo=<*>%s"
         % (m.group(1), m.group(2), m.group(3), ": " + m.group(4) if m.group(4) else "")),
        (r"(Anonymous|Untrusted|Trusted|Verified) TLS connection established (from|to) \S+: \S+ with cipher \S+ \(\d+/\d+ bits\).*",
         lambda m: "%s TLS connection established %s <*>: <*> with cipher <*> (<*>/<*> bits) <*>"
         % m.groups()),
        (r"connect to \S+: (.*)", lambda m: "connect to <*>: " + m.group(1)),
        (r"warning: non-SMTP command from \S+: .*", "warning: non-SMTP command from <*>: <*>"),
        (r"improper command pipelining after (\S+) from \S+: .*",
         lambda m: "improper command pipelining after %s from <*>: <*>" % m.group(1)),
        (r"lost connection after (\S+)(?: \(\d+ bytes\))? from \S+",
         lambda m: "lost connection after %s from <*>" % m.group(1)),
        (r"too many errors after (\S+)(?: \(\d+ bytes\))? from \S+",
         lambda m: "too many errors after %s from <*>" % m.group(1)),
        (r"timeout after (\S+)(?: \(\d+ bytes\))? from \S+",
         lambda m: "timeout after %s from <*>" % m.group(1)),
        (r"warning: [0-9A-F]+: queue file size limit exceeded",
         "warning: <*>: queue file size limit exceeded"),
        (r"warning: mail_stream_cleanup: close error", "warning: mail_stream_cleanup: close error"),
        (r"(Requeued|Released from hold|Deleted|Placed on hold): \d+ messages?",
         lambda m: "%s: <*> messages" % m.group(1)),
        (r"daemon started -- version \S+, configuration \S+",
         "daemon started -- version <*>, configuration <*>"),
        (r"reload -- version \S+, configuration \S+", "reload -- version <*>, configuration <*>"),
        (r"terminating on signal \d+", "terminating on signal <*>"),
        (r"(starting|stopping|refreshing) the Postfix mail system",
         lambda m: "%s the Postfix mail system" % m.group(1)),
        (r"statistics: max (connection rate|connection count|message rate|recipient rate|newtls rate|newtls request rate|cache size) \S+ (for \(\S+\) )?at \w{3} [ \d]\d \d\d:\d\d:\d\d",
         lambda m: "statistics: max %s <*> %sat <*>" % (m.group(1), "for (<*>) " if m.group(2) else "")),
        (r"statistics: start interval \w{3} [ \d]\d \d\d:\d\d:\d\d", "statistics: start interval <*>"),
        (r"statistics: (domain|address) lookup hits=\d+ miss=\d+ success=\d+%",
         lambda m: "statistics: %s lookup hits=<*> miss=<*> success=<*>%%" % m.group(1)),
        (r"statistics: max simultaneous domains=\d+ addresses=\d+ connection=\d+",
         "statistics: max simultaneous domains=<*> addresses=<*> connection=<*>"),
    ])

# Squid's native access log (`time elapsed client code/status bytes method URL user
# hierarchy/peer type`, one format string): the cache result with the HTTP status
# (TCP_MISS/200, TCP_DENIED/403), the method and the hierarchy code are enumerations, so each
# combination is its own event; an invalid request's method is a variable, as in nginx's log.
SQUID = System(
    r"^\d+\.\d{3} +(?P<content>\S.*)$",
    rules=[
        (r"\d+ \S+ ([A-Z_]+/\d{3}) \d+ (GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH|CONNECT|PURGE) \S+ \S+ ([A-Z_]+)/\S+ \S+",
         lambda m: "<*> <*> %s <*> %s <*> <*> %s/<*> <*>" % m.groups()),
        (r"\d+ \S+ ([A-Z_]+/\d{3}) \d+ \S+ \S+ \S+ ([A-Z_]+)/\S+ \S+",
         lambda m: "<*> <*> %s <*> <*> <*> <*> %s/<*> <*>" % m.groups()),
    ])

# Tomcat 10.1 through JULI's OneLineFormatter (`date time LEVEL [thread] class.method message`;
# the header ends at the source method): one event per message of Tomcat's LocalStrings (each
# lifecycle action its own: Initializing, Starting, Pausing, Stopping, Destroying) and per
# format string of the two web apps of produce/tomcat/ (`Payment declined ...: card expired`
# and `...: insufficient funds` are two string literals; `via card` and `via paypal` are two
# enumerated values, so two events). Lines without the header continue a multi-line message,
# each its own line: a stack frame `at ...` is one event, as `... N more`; an exception line is
# its type's event (`Caused by:` its own); each JSP source line Jasper echoes (`N: text`) is
# its text's event (its indentation does not count), as PyApp's traceback lines.
TOMCAT = System(
    r"^\d\d-\w{3}-\d{4} \d\d:\d\d:\d\d\.\d{3} [A-Z]+ \[[^\]]*\] \S+ (?P<content>.*)$",
    continuation=r".",
    rules=[
        (r"(Server version name|Server built|Server version number|OS Name|OS Version|Architecture|Java Home|JVM Version|JVM Vendor|CATALINA_BASE|CATALINA_HOME): +.*",
         lambda m: "%s: <*>" % m.group(1)),
        (r"Command line argument: .*", "Command line argument: <*>"),
        (r"(Initializing|Starting|Pausing|Stopping|Destroying) ProtocolHandler \[.*\]",
         lambda m: "%s ProtocolHandler [<*>]" % m.group(1)),
        (r"Server initialization in \[\d+\] milliseconds", "Server initialization in [<*>] milliseconds"),
        (r"Server startup in \[\d+\] milliseconds", "Server startup in [<*>] milliseconds"),
        (r"(Starting|Stopping) service \[.*\]", lambda m: "%s service [<*>]" % m.group(1)),
        (r"Starting Servlet engine: \[.*\]", "Starting Servlet engine: [<*>]"),
        (r"Deploying web application archive \[.*\]", "Deploying web application archive [<*>]"),
        (r"Deployment of web application archive \[.*\] has finished in \[[\d,]+\] ms",
         "Deployment of web application archive [<*>] has finished in [<*>] ms"),
        (r"Undeploying context \[.*\]", "Undeploying context [<*>]"),
        (r"Reloading Context with name \[.*\] has started", "Reloading Context with name [<*>] has started"),
        (r"Reloading Context with name \[.*\] is completed", "Reloading Context with name [<*>] is completed"),
        (r"At least one JAR was scanned for TLDs yet contained no TLDs\..*",
         "At least one JAR was scanned for TLDs yet contained no TLDs. <*>"),
        (r"Creation of SecureRandom instance for session ID generation using \[.*\] took \[\d+\] milliseconds\.",
         "Creation of SecureRandom instance for session ID generation using [<*>] took [<*>] milliseconds."),
        (r"A valid shutdown command was received via the shutdown port\. Stopping the Server instance\.",
         "A valid shutdown command was received via the shutdown port. Stopping the Server instance."),
        (r"Servlet\.service\(\) for servlet \[\w+\] in context with path \[\S*\] threw exception \[An exception occurred processing \[\S+\] at line \[\d+\]",
         "Servlet.service() for servlet [<*>] in context with path [<*>] threw exception [An exception occurred processing [<*>] at line [<*>]"),
        (r"Servlet\.service\(\) for servlet \[\w+\] in context with path \[\S*\] threw exception \[org\.apache\.jasper\.JasperException: Unable to compile class for JSP:",
         "Servlet.service() for servlet [<*>] in context with path [<*>] threw exception [org.apache.jasper.JasperException: Unable to compile class for JSP:"),
        (r"Servlet\.service\(\) for servlet \[\w+\] in context with path \[\S*\] threw exception \[([\w.$]+)(:.*)?\] with root cause",
         lambda m: "Servlet.service() for servlet [<*>] in context with path [<*>] threw exception [%s: <*>] with root cause" % m.group(1)),
        (r"Parse fatal error at line \[\d+\] column \[\d+\]", "Parse fatal error at line [<*>] column [<*>]"),
        (r"Parse error in application web\.xml file at \[.*\]", "Parse error in application web.xml file at [<*>]"),
        (r"Occurred at line \[\d+\] column \[\d+\]", "Occurred at line [<*>] column [<*>]"),
        (r"Marking this application unavailable due to previous error\(s\)",
         "Marking this application unavailable due to previous error(s)"),
        (r"One or more components marked the context as not correctly configured",
         "One or more components marked the context as not correctly configured"),
        (r"Context \[.*\] startup failed due to previous errors", "Context [<*>] startup failed due to previous errors"),
        (r"More than the maximum number of request parameters \(GET plus POST\) for a single request \(\[\d+\]\) were detected\..*",
         "More than the maximum number of request parameters (GET plus POST) for a single request ([<*>]) were detected. <*>"),
        (r"Error parsing HTTP request header", "Error parsing HTTP request header"),
        (r"The web application \[.*\] appears to have started a thread named \[.*\] but has failed to stop it\..*",
         "The web application [<*>] appears to have started a thread named [<*>] but has failed to stop it. <*>"),
        # the web apps of produce/tomcat/
        (r"Order \d+ placed by \S+ for \d+ items, total \S+ EUR", "Order <*> placed by <*> for <*> items, total <*> EUR"),
        (r"Payment declined for order \d+: (card expired|insufficient funds)",
         lambda m: "Payment declined for order <*>: " + m.group(1)),
        (r"Payment captured for order \d+ via (card|paypal)",
         lambda m: "Payment captured for order <*> via " + m.group(1)),
        (r"Item \S+ out of stock, requested \d+", "Item <*> out of stock, requested <*>"),
        (r"Login failed for user \S+ from \S+ \(bad password\)", "Login failed for user <*> from <*> (bad password)"),
        (r"User \S+ logged in from \S+", "User <*> logged in from <*>"),
        (r"Session \S+ closed for user \S+", "Session <*> closed for user <*>"),
        (r"Catalog cache refreshed: \d+ entries in \d+ ms", "Catalog cache refreshed: <*> entries in <*> ms"),
        (r"Checkout failed for order \d+", "Checkout failed for order <*>"),
        (r"Rejected request without API key from \S+", "Rejected request without API key from <*>"),
        (r"Slow backend call for key \S+ took \d+ ms", "Slow backend call for key <*> took <*> ms"),
        (r"Served items for key \S+", "Served items for key <*>"),
        # continuation lines
        (r"at \S+\(.*\)", "at <*>"),
        (r"\.\.\. \d+ more", "... <*> more"),
        (r"Caused by: ([\w.$]+)(?:[:;].*)?", lambda m: "Caused by: %s: <*>" % m.group(1)),
        (r"([\w.$]+(?:Exception|Error))(?:[:;] .*)?", lambda m: "%s: <*>" % m.group(1)),
        (r"Note: further occurrences of (.*) will be logged at DEBUG level\.",
         lambda m: "Note: further occurrences of %s will be logged at DEBUG level." % m.group(1)),
        (r"Stacktrace:\] with root cause", "Stacktrace:] with root cause"),
        (r"Stacktrace:", "Stacktrace:"),
        (r"An error occurred at line: \[\d+\] in the jsp file: \[\S+\]",
         "An error occurred at line: [<*>] in the jsp file: [<*>]"),
        (r"Type mismatch: cannot convert from \S+ to \S+", "Type mismatch: cannot convert from <*> to <*>"),
        (r"\d+: (.*)", lambda m: "<*>: " + " ".join(m.group(1).split())),
    ])

# HAProxy through rsyslogd: the HTTP log (`client [accept date] frontend backend/server
# timers status bytes cookies termination-state conns queues "request"`) is one format string
# whose status, termination state (`----`, `SC--`, `PR--`, `CD--`, `sH--`; two letters in the TCP log) and request method
# are enumerations, each combination its own event (an invalid request's method is a
# variable); the TCP log the same without status and request. Health checks: the outcome, the
# check's reason, its info text, HTTP code and the server's resulting state (`status: 1/2
# DOWN`) are the event; each server state change its own.
HAPROXY = System(
    r"^\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ haproxy\[\d+\]: (?P<content>.*)$",
    rules=[
        (r"\S+ \[[^\]]+\] \S+ \S+ \S+ (-?\d+) \d+ \S+ \S+ (\S{4}) \S+ \S+ \"(?:(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH) .*|.*)\"",
         lambda m: "<*> [<*>] <*> <*> <*> %s <*> <*> <*> %s <*> <*> \"%s <*>\""
         % (m.group(1), m.group(2), m.group(3) or "<*>")),
        (r"\S+ \[[^\]]+\] \S+ \S+ \S+ \d+ ([A-Za-z-]{2}) \S+ \S+",
         lambda m: "<*> [<*>] <*> <*> <*> <*> %s <*> <*>" % m.group(1)),
        (r"Health check for (?:backup )?server \S+ (failed|succeeded), reason: ([^,]+), (info: \".*\", )?(code: \d+, )?check duration: \d+ms, status: \d+/\d+ (\w+)\.",
         lambda m: "Health check for server <*> %s, reason: %s, %s%scheck duration: <*>, status: <*> %s."
         % (m.group(1), m.group(2), m.group(3) or "", m.group(4) or "", m.group(5))),
        (r"Server \S+ is DOWN\. \d+ active and \d+ backup servers left\. \d+ sessions active, \d+ requeued, \d+ remaining in queue\.",
         "Server <*> is DOWN. <*> active and <*> backup servers left. <*> sessions active, <*> requeued, <*> remaining in queue."),
        (r"Server \S+ is going DOWN for maintenance\. \d+ active and \d+ backup servers left\. \d+ sessions active, \d+ requeued, \d+ remaining in queue\.",
         "Server <*> is going DOWN for maintenance. <*> active and <*> backup servers left. <*> sessions active, <*> requeued, <*> remaining in queue."),
        (r"Server \S+ is UP\. \d+ active and \d+ backup servers online\. \d+ sessions requeued, \d+ total in queue\.",
         "Server <*> is UP. <*> active and <*> backup servers online. <*> sessions requeued, <*> total in queue."),
        (r"Server \S+ enters drain state\. \d+ active and \d+ backup servers online\. \d+ sessions requeued, \d+ total in queue\.",
         "Server <*> enters drain state. <*> active and <*> backup servers online. <*> sessions requeued, <*> total in queue."),
        (r"Server \S+ is UP/READY \(leaving forced maintenance\)\.", "Server <*> is UP/READY (leaving forced maintenance)."),
        (r"Server \S+ is UP \(leaving forced drain\)\.", "Server <*> is UP (leaving forced drain)."),
        (r"backend \S+ has no server available!", "backend <*> has no server available!"),
        (r"Proxy \S+ started\.", "Proxy <*> started."),
        (r"Proxy \S+ stopped \(cumulated conns: FE: \d+, BE: \d+\)\.", "Proxy <*> stopped (cumulated conns: FE: <*>, BE: <*>)."),
        (r"Stopping (frontend|backend|proxy) \S+ in \d+ ms\.", lambda m: "Stopping %s <*> in <*> ms." % m.group(1)),
    ])


# BIND 9's named: one event per format string of named's source. A query's type, a failed
# query's reason, a resolver error's text, a TSIG error code, an rndc command's verb and a
# transfer's kind (AXFR, AXFR-style IXFR) are enumerations: each value its own event. The
# client's address, its `/key NAME` signer, names, zones, serials and sizes are variables; a
# query's flags (`+E(0)K`, `-S`) are one variable.
BCLIENT = r"client @0x[0-9a-f]+ \S+#\d+(?:/key \S+)?"
BIND9 = System(
    r"^\d\d-\w{3}-\d{4} \d\d:\d\d:\d\d\.\d{3} [\w-]+: \w+: (?P<content>.*)$",
    rules=[
        (BCLIENT + r" \(\S+\): query: \S+ IN (\w+) \S+ \(\S+\)",
         lambda m: "client @<*> <*> (<*>): query: <*> IN %s <*> (<*>)" % m.group(1)),
        (BCLIENT + r" \(\S+\): query failed \(([^)]+)\) for \S+ at query\.c:\d+",
         lambda m: "client @<*> <*> (<*>): query failed (%s) for <*> at query.c:<*>" % m.group(1)),
        (BCLIENT + r" \(\S+\): query \(cache\) '\S+' denied \(allow-query-cache did not match\)",
         "client @<*> <*> (<*>): query (cache) <*> denied (allow-query-cache did not match)"),
        (BCLIENT + r" \(\S+\): zone transfer '\S+' denied",
         "client @<*> <*> (<*>): zone transfer <*> denied"),
        (BCLIENT + r" \(\S+\): transfer of '\S+': (AXFR|AXFR-style IXFR|IXFR) started(?: \(serial \d+\))?",
         lambda m: "client @<*> <*> (<*>): transfer of <*>: %s started (serial <*>)" % m.group(1)),
        (BCLIENT + r" \(\S+\): transfer of '\S+': (AXFR|AXFR-style IXFR|IXFR) ended: \d+ messages, \d+ records, \d+ bytes, \S+ secs \(\d+ bytes/sec\)(?: \(serial \d+\))?",
         lambda m: "client @<*> <*> (<*>): transfer of <*>: %s ended: <*> messages, <*> records, <*> bytes, <*> secs (<*> bytes/sec) (serial <*>)" % m.group(1)),
        (BCLIENT + r" \(\S+\): transfer of '\S+': IXFR delta size \(\d+ bytes\) exceeds the maximum ratio to database size \(\d+ bytes\), falling back to AXFR",
         "client @<*> <*> (<*>): transfer of <*>: IXFR delta size (<*> bytes) exceeds the maximum ratio to database size (<*> bytes), falling back to AXFR"),
        (BCLIENT + r" \(\S+\): transfer of '\S+': IXFR version not in journal, falling back to AXFR",
         "client @<*> <*> (<*>): transfer of <*>: IXFR version not in journal, falling back to AXFR"),
        (BCLIENT + r": signer \"\S+\" approved", "client @<*> <*>: signer <*> approved"),
        (BCLIENT + r": update '\S+' denied", "client @<*> <*>: update <*> denied"),
        (BCLIENT + r": request has invalid signature: TSIG \S+: tsig verify failure \((\w+)\)",
         lambda m: "client @<*> <*>: request has invalid signature: TSIG <*>: tsig verify failure (%s)" % m.group(1)),
        (BCLIENT + r": updating zone '\S+': adding an RR at '\S+' \S+ .*",
         "client @<*> <*>: updating zone <*>: adding an RR at <*> <*> <*>"),
        (BCLIENT + r": updating zone '\S+': deleting rrset at '\S+' \S+",
         "client @<*> <*>: updating zone <*>: deleting rrset at <*> <*>"),
        (BCLIENT + r": updating zone '\S+': update unsuccessful: \S+: '([^']+)' prerequisite not satisfied \((\w+)\)",
         lambda m: "client @<*> <*>: updating zone <*>: update unsuccessful: <*>: '%s' prerequisite not satisfied (%s)" % m.groups()),
        (BCLIENT + r": updating zone '\S+': update failed: dynamic update temporarily disabled because the zone is frozen\.  Use 'rndc thaw' to re-enable updates\. \(REFUSED\)",
         "client @<*> <*>: updating zone <*>: update failed: dynamic update temporarily disabled because the zone is frozen. Use 'rndc thaw' to re-enable updates. (REFUSED)"),
        (BCLIENT + r": received notify for zone '\S+'", "client @<*> <*>: received notify for zone <*>"),
        (r"automatic empty zone: \S+", "automatic empty zone: <*>"),
        (r"(.+) resolving '\S+': \S+#\d+", lambda m: "%s resolving <*>: <*>" % m.group(1)),
        (r"shut down hung fetch while resolving '\S+'", "shut down hung fetch while resolving <*>"),
        (r"resolver priming query complete: (.+)",
         lambda m: "resolver priming query complete: " + m.group(1)),
        (r"managed-keys-zone: Unable to fetch DNSKEY set '\S+': (.+)",
         lambda m: "managed-keys-zone: Unable to fetch DNSKEY set <*>: " + m.group(1)),
        (r"managed-keys-zone: loaded serial \d+", "managed-keys-zone: loaded serial <*>"),
        (r"zone \S+ sending notifies \(serial \d+\)", "zone <*> sending notifies (serial <*>)"),
        (r"zone \S+ refresh: failure trying primary \S+ \(source \S+\): (.+)",
         lambda m: "zone <*> refresh: failure trying primary <*> (source <*>): " + m.group(1)),
        (r"zone \S+( \((?:un)?signed\))?: reconfiguring zone keys", "zone <*>: reconfiguring zone keys"),
        (r"zone \S+( \((?:un)?signed\))?: next key event: \S+ \S+", "zone <*>: next key event: <*>"),
        (r"zone \S+( \((?:un)?signed\))?: loaded serial \d+( \(DNSSEC signed\))?",
         "zone <*>: loaded serial <*>"),
        (r"zone \S+( \((?:un)?signed\))?: receive_secure_serial: (.+)",
         lambda m: "zone <*>: receive_secure_serial: " + m.group(2)),
        (r"zone \S+ not loaded due to errors\.", "zone <*> not loaded due to errors."),
        (r"zone \S+ loading from master file \S+ failed: (.+)",
         lambda m: "zone <*> loading from master file <*> failed: " + m.group(1)),
        (r"zone \S+ zone serial \(\d+\) unchanged\. zone may fail to transfer to secondaries\.",
         "zone <*> zone serial (<*>) unchanged. zone may fail to transfer to secondaries."),
        (r"zone \S+ transferred serial \d+", "zone <*> transferred serial <*>"),
        (r"zone \S+ Transfer started\.", "zone <*> Transfer started."),
        (r"zone \S+ notify from \S+: serial \d+", "zone <*> notify from <*>: serial <*>"),
        (r"transfer of '\S+' from \S+: connected using \S+", "transfer of <*> from <*>: connected using <*>"),
        (r"transfer of '\S+' from \S+: Transfer status: (.+)",
         lambda m: "transfer of <*> from <*>: Transfer status: " + m.group(1)),
        (r"transfer of '\S+' from \S+: Transfer completed: \d+ messages, \d+ records, \d+ bytes, \S+ secs \(\d+ bytes/sec\)(?: \(serial \d+\))?",
         "transfer of <*> from <*>: Transfer completed: <*> messages, <*> records, <*> bytes, <*> secs (<*> bytes/sec) (serial <*>)"),
        (r"dns_rdata_fromtext: \S+: near '\S+': (.+)",
         lambda m: "dns_rdata_fromtext: <*>: near <*>: " + m.group(1)),
        (r"received control channel command '(\S+)(?: .*)?'",
         lambda m: "received control channel command '%s <*>'" % m.group(1)),
        (r"(freezing|thawing) zone '\S+': (\w+)", lambda m: "%s zone <*>: %s" % m.groups()),
        (r"using default UDP/IPv[46] port range: \[\d+, \d+\]", "using default UDP/IPv<*> port range: [<*>, <*>]"),
        (r"obtaining root key for view \S+ from '\S+'", "obtaining root key for view <*> from <*>"),
        (r"the working directory is now '\S+'", "the working directory is now <*>"),
        (r"sizing zone task pool based on \d+ zones", "sizing zone task pool based on <*> zones"),
        (r"reading built-in trust anchors from file '\S+'", "reading built-in trust anchors from file <*>"),
        (r"looking for GeoIP2 databases in '\S+'", "looking for GeoIP2 databases in <*>"),
        (r"loading configuration from '\S+'", "loading configuration from <*>"),
        (r"no longer listening on \S+", "no longer listening on <*>"),
        (r"stopping command channel on \S+", "stopping command channel on <*>"),
        (r"dumpdb started: .*", "dumpdb started: <*>"),
        (r"keymgr: DNSKEY \S+ \((\w+)\) created for policy \S+",
         lambda m: "keymgr: DNSKEY <*> (%s) created for policy <*>" % m.group(1)),
        (r"Fetching \S+ \((\w+)\) from key repository\.",
         lambda m: "Fetching <*> (%s) from key repository." % m.group(1)),
        (r"DNSKEY \S+ \((\w+)\) is now (\w+)", lambda m: "DNSKEY <*> (%s) is now %s" % m.groups()),
        (r"(running|all zones loaded|exiting|shutting down: flushing changes|reloading configuration succeeded|reloading zones succeeded|flushing caches in all views succeeded|scheduled loading new zones|any newly configured zones are now loaded|dumpstats complete|dumpdb complete|received SIGHUP signal to reload zones|query logging is now on|query logging is now off)",
         lambda m: m.group(1)),
    ])


# Prometheus (go-kit logfmt): the header is `ts=`, `caller=` (the log call's wrapper, not always
# the call site) and `level=`, wherever `level=` stands; the message is the other fields in
# their order. One event per `msg` text (a constant of its log call); a failure's `err` text
# comes from a format string of its own, so its kind is part of the event (a refused
# connection, an unknown host, a timeout, each HTTP status, each parse error). Lines without
# `msg` (the start-up facts) are one event per key. Job names, targets, paths, ids, durations
# and counts are variables.
class LogfmtSystem(System):
    def content(self, line):
        m = self.header.match(line)
        if not m:
            raise ValueError("no header: %r" % line)
        return re.sub(r"(^| )level=\w+(?= |$)", "", m.group("content")).strip(), None


def prom_err(err):
    kinds = [
        (r"Get \\\"\S+\\\": dial tcp \S+: connect: connection refused", "dial: connection refused"),
        (r"Post \\\"\S+\\\": dial tcp \S+: connect: connection refused", "post: connection refused"),
        (r"Get \\\"\S+\\\": dial tcp: lookup \S+ on \S+: no such host", "lookup: no such host"),
        (r"Get \\\"\S+\\\": context deadline exceeded", "context deadline exceeded"),
        (r"Get \\\"\S+\\\": context canceled", "get: context canceled"),
        (r"context canceled", "context canceled"),
        (r"server returned HTTP status (\d+ [\w ]+)", None),
        (r"invalid metric type \\\"\S+\\\"", "invalid metric type <*>"),
        (r"strconv\.ParseFloat: parsing \\\"\S+\\\": invalid syntax", "strconv.ParseFloat: parsing <*>: invalid syntax"),
        (r"sample limit exceeded", "sample limit exceeded"),
        (r"found duplicate series for the match group .*", "found duplicate series for the match group <*>"),
        (r"unexpected end of JSON input", "unexpected end of JSON input"),
        (r"\S+: \d+:\d+: group \\\"\S+\\\", rule \d+, \\\"\S+\\\": could not parse expression: \d+:\d+: parse error: (.+)",
         None),
        (r"error loading rules, previous rule set restored", "error loading rules, previous rule set restored"),
        (r"one or more errors occurred while applying the new configuration \(.*\)",
         "one or more errors occurred while applying the new configuration (<*>)"),
        (r"couldn't load configuration \(.*\): parsing YAML file \S+: (not a valid duration string): .*", None),
    ]
    for regex, kind in kinds:
        m = re.fullmatch(regex, err)
        if m:
            return kind if kind is not None else m.group(1)
    raise ValueError("no err kind: %r" % err)


PROM_FAILURES = ("Scrape failed|Append failed|Error sending alert|Error reading file|Failed to send "
                 "batch, retrying|non-recoverable error|loading groups failed|Failed to apply "
                 "configuration|Error reloading config|Evaluating rule failed")
PROM_MESSAGES = [
    "Out of bounds metric", "Error on ingesting samples that are too old or are too far into the future",
    "Starting provider", "Discoverer channel closed", "Loading configuration file", "write block",
    "Stopping file discovery...", "Processing segment", "File discovery stopped",
    "Completed loading of configuration file", "WAL segment loaded", "Snapshotting block",
    "Head GC completed", "Found healthy block", "Deleting obsolete block",
    "file_sd refresh found file that should be removed", "WAL replay completed", "Tailing WAL",
    "TSDB started", "TSDB options", "TLS is disabled.", "Starting scraped metadata watcher",
    "Starting rule manager...", "Starting WAL watcher", "Starting TSDB ...",
    "Starting Prometheus Server", "Start listening for connections",
    "Server is ready to receive web requests.", "Replaying on-disk memory mappable chunks if any",
    "Replaying WAL, this may take a while", "Replaying WAL",
    "On-disk memory mappable chunks replay completed", "Listening on", "Done replaying WAL",
    "WAL watcher stopped", "WAL checkpoint complete", "Stopping scrape manager...",
    "Stopping scrape discovery manager...", "Stopping rule manager...", "Stopping remote storage...",
    "Stopping notify discovery manager...", "Stopping notification manager...",
    "Stopping metadata watcher...", "See you next time!", "Scraped metadata watcher stopped",
    "Scrape manager stopped", "Scrape discovery manager stopped", "Rule manager stopped",
    "Remote storage stopped.", "Reading checkpoint", "Read series references from checkpoint",
    "Notify discovery manager stopped", "Notifier manager stopped",
    "Failed to flush all samples on shutdown", "Creating checkpoint",
    "runShard timer ticked, sending buffered data", "compact blocks", "WAL checkpoint loaded",
    "Received termination request via web service, exiting gracefully...",
    "Received SIGTERM, exiting gracefully...", "New checkpoint detected",
]
PROMETHEUS = LogfmtSystem(
    r"^ts=\S+ caller=\S+ (?P<content>.*)$",
    rules=[
        (r'.*\bmsg="(%s)".* err="(.*)"' % PROM_FAILURES,
         lambda m: 'msg="%s" err="%s"' % (m.group(1), prom_err(m.group(2)))),
        (r'.*\bmsg="(%s)"( .*)?' % "|".join(re.escape(t) for t in PROM_MESSAGES),
         lambda m: 'msg="%s"' % m.group(1)),
        (r"(build_context|host_details|fd_limits|vm_limits|fs_type)=.*", lambda m: m.group(1) + "=<*>"),
    ])


# OpenStack Placement through oslo.log: the header is the time, the pid, the level, the logger
# and the request context in brackets (`[None req-... admin admin - - - -]`, `[-]`); a debug
# line's trailing `function /path.py:N` (oslo's debug suffix) is header too. One event per
# format string of Placement, oslo.* and SQLAlchemy. The request log's method and status, a
# resource class (`VCPU`, `MEMORY_MB`), a policy rule's name and an API error's text (each
# from a format string of its own) are enumerations, each value its own event. The
# configuration dump's `option = value` rows are one event (one format string for every row).
# Header-less lines of a multi-line message (a JSON-schema dump) and a traceback's source and
# marker lines are one event per text (numbers aside), as PyApp's.
class OsloSystem(System):
    def content(self, line):
        line = re.sub(r" \S+ /\S+\.py:\d+$", "", line)
        m = self.header.match(line)
        if m:
            return m.group("content"), None
        return line.strip(), "continuation"

    def label(self, content, field=None):
        # a header-less line is its format's event where a rule knows it (SQLAlchemy's error
        # text is printed with and without the header), else its text's event
        try:
            return System.label(self, content)
        except ValueError:
            if field != "continuation":
                raise
            return re.sub(r"\d+", V, content)


PLACEMENT_ERRORS = [
    (r"consumer generation conflict - expected \S+ but got \S+",
     "consumer generation conflict - expected <*> but got <*>"),
    (r"Unable to allocate inventory: Unable to create allocation for '(\w+)' on resource provider '\S+'\. The requested amount would exceed the capacity\.",
     None),
    (r"resource provider generation conflict", "resource provider generation conflict"),
    (r"Malformed JSON: Expecting property name enclosed in double quotes: line \d+ column \d+ \(char \d+\)",
     "Malformed JSON: Expecting property name enclosed in double quotes: line <*> column <*> (char <*>)"),
    (r"The trait is invalid\. A valid trait must be no longer than \d+ characters, start with the prefix \"CUSTOM_\" and use following characters: .*",
     "The trait is invalid. A valid trait must be no longer than <*> characters, start with the prefix \"CUSTOM_\" and use following characters: <*>"),
    (r"No such trait\(s\): \S+\.", "No such trait(s): <*>."),
    (r"Invalid resource class in resources parameter: No such resource class \S+\.",
     "Invalid resource class in resources parameter: No such resource class <*>."),
    (r"Conflicting resource provider name: \S+ already exists\.",
     "Conflicting resource provider name: <*> already exists."),
    (r"Unable to delete resource provider \S+: Resource provider has allocations\.",
     "Unable to delete resource provider <*>: Resource provider has allocations."),
    (r"Inventory for '[^']+' on resource provider '\S+' in use\.",
     "Inventory for <*> on resource provider <*> in use."),
    (r"JSON does not validate: '\w+' is a required property",
     "JSON does not validate: <*> is a required property"),
    (r"Unable to allocate inventory: Inventory for '[^']+' on resource provider '\S+' invalid\.",
     "Unable to allocate inventory: Inventory for <*> on resource provider <*> invalid."),
    (r"No resource provider with uuid \S+ found: No resource provider with uuid \S+ found",
     "No resource provider with uuid <*> found: No resource provider with uuid <*> found"),
    (r"No resource provider with uuid \S+ found for delete",
     "No resource provider with uuid <*> found for delete"),
    (r"Allocation for resource provider '\S+' that does not exist\.",
     "Allocation for resource provider <*> that does not exist."),
]


def placement_error(m):
    text = m.group(1)
    for regex, template in PLACEMENT_ERRORS:
        e = re.fullmatch(regex, text)
        if e:
            if template is None:
                template = "Unable to allocate inventory: Unable to create allocation for '%s' on resource provider <*>. The requested amount would exceed the capacity." % e.group(1)
            return "Placement API returning an error response: " + template
    raise ValueError("no error rule: %r" % text)


def text_event(m):
    return re.sub(r"\d+", V, m.group(0).strip())


PLACEMENT = OsloSystem(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \d+ [A-Z]+ \S+ (?:\[[^\]]*\] )?(?P<content>.*)$",
    rules=[
        (r"\S+ \"(\w+) \S+\" status: (\d+) len: \d+ microversion: \S+",
         lambda m: "<*> \"%s <*>\" status: %s len: <*> microversion: <*>" % m.groups()),
        (r"Starting request: \S+ \"(\w+) \S+\"", lambda m: "Starting request: <*> \"%s <*>\"" % m.group(1)),
        (r"getting providers with \d+ (\w+)", lambda m: "getting providers with <*> " + m.group(1)),
        (r"found \d+ providers with available \d+ (\w+)",
         lambda m: "found <*> providers with available <*> " + m.group(1)),
        (r"found no providers with \d+ (\w+)", lambda m: "found no providers with <*> " + m.group(1)),
        (r"found \d+ providers after filtering by previous result",
         "found <*> providers after filtering by previous result"),
        (r"found \d+ providers after applying initial aggregate and trait filters",
         "found <*> providers after applying initial aggregate and trait filters"),
        (r"found \d+ providers after applying required traits filter \(.*\)",
         "found <*> providers after applying required traits filter (<*>)"),
        (r"found \d+ providers after applying required aggregates filter \(.*\)",
         "found <*> providers after applying required aggregates filter (<*>)"),
        (r"found no providers matching aggregates .*", "found no providers matching aggregates <*>"),
        (r"Merging candidates yields \d+ allocation requests and \d+ provider summaries",
         "Merging candidates yields <*> allocation requests and <*> provider summaries"),
        (r"RequestGroup\(.*\) \(suffix '.*'\) returned \d+ matches",
         "RequestGroup(<*>) (suffix <*>) returned <*> matches"),
        (r"Supplied project or user ID for consumer \S+ was different than existing record\. Updating consumer record\.",
         "Supplied project or user ID for consumer <*> was different than existing record. Updating consumer record."),
        (r"Placement API returning an error response: (.*)", placement_error),
        (r"Deleted auto-created consumer with consumer UUID \S+ after failed allocation",
         "Deleted auto-created consumer with consumer UUID <*> after failed allocation"),
        (r"Over capacity for (\w+) on resource provider \S+\. Needed: \d+, Used: \d+, Capacity: \S+",
         lambda m: "Over capacity for %s on resource provider <*>. Needed: <*>, Used: <*>, Capacity: <*>" % m.group(1)),
        (r"Policy check for (\S+) failed with credentials .*",
         lambda m: "Policy check for %s failed with credentials <*>" % m.group(1)),
        (r"Setting aggregates for provider \S+\. Successfully (associated|disassociated) aggregate \S+\.",
         lambda m: "Setting aggregates for provider <*>. Successfully %s aggregate <*>." % m.group(1)),
        (r"_ensure_aggregate\(\) did not find aggregate \S+\. Attempting to create it\.",
         "_ensure_aggregate() did not find aggregate <*>. Attempting to create it."),
        (r"_ensure_aggregate\(\) created new aggregate \S+ \(id=\d+\)\.",
         "_ensure_aggregate() created new aggregate <*> (id=<*>)."),
        (r"Successfully wrote allocations \[.*\]", "Successfully wrote allocations [<*>]"),
        (r"Successfully deleted allocations \[.*\]", "Successfully deleted allocations [<*>]"),
        (r"Synced traits from os_traits into API DB: .*", "Synced traits from os_traits into API DB: <*>"),
        (r"Synced resource_classes from os_resource_classes: .*",
         "Synced resource_classes from os_resource_classes: <*>"),
        (r"Found existing resource classes in db: .*", "Found existing resource classes in db: <*>"),
        (r"(Acquiring|Acquired|Releasing) lock \"\S+\"( .*)?", lambda m: m.group(1) + " lock <*>"),
        (r"\*{20,}", "****"),
        (r"={20,}", "===="),
        (r"Configuration options gathered from:", "Configuration options gathered from:"),
        (r"command line args: \[.*\]", "command line args: [<*>]"),
        (r"config files: \[.*\]", "config files: [<*>]"),
        (r"[\w.]+ +=( .*)?", "<*> = <*>"),
        (r"Unhandled error: ([\w.]+): .*", lambda m: "Unhandled error: %s: <*>" % m.group(1)),
        (r"Traceback \(most recent call last\):", "Traceback (most recent call last):"),
        (r"  File \".*\", line \d+, in \S+", "File <*>, line <*>, in <*>"),
        (r"\s*\^+", "^^^^"),
        (r"The above exception was the direct cause of the following exception:",
         "The above exception was the direct cause of the following exception:"),
        (r"([\w.]+(?:Error|Exception|NonExistentTable)): (.*)", lambda m: m.group(1) + ": <*>"),
        (r"\[SQL: .*", "[SQL: <*>"),
        (r"FROM \w+\]", "FROM <*>]"),
        (r"\(Background on this error at: \S+\)", "(Background on this error at: <*>)"),
        (r"    .*", text_event),
        (r"", "(blank)"),
    ])


# An operating system's syslog (Debian 12's sudo, su, runuser, cron, atd, shadow's tools, PAM)
# through rsyslogd: the header is the time, the host and the program's tag. One event per
# format string. A PAM module's service and type (`pam_unix(su:session)`) and a limit's name are
# variables of one format string; a sudo refusal's reason (`command not allowed`, `user NOT in
# sudoers`, `N incorrect password attempts`), a crontab action (`REPLACE`, `LIST`, `DELETE`),
# cron's own notices, an opened or closed session and each shadow tool's message are events.
DEBIAN_SYSLOG = System(
    r"^\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.-]+(?:\[\d+\])?: (?P<content>.*)$",
    rules=[
        (r"pam_unix\(\S+\): session opened for user \S+\(uid=\d+\) by \S*\(uid=\d+\)",
         "pam_unix(<*>): session opened for user <*>(uid=<*>) by <*>(uid=<*>)"),
        (r"pam_unix\(\S+\): session closed for user \S+", "pam_unix(<*>): session closed for user <*>"),
        (r"pam_unix\(\S+\): authentication failure; logname=\S* uid=\d+ euid=\d+ tty=\S* ruser=\S* rhost=\S* +user=\S+",
         "pam_unix(<*>): authentication failure; logname=<*> uid=<*> euid=<*> tty=<*> ruser=<*> rhost=<*> user=<*>"),
        (r"pam_unix\(\S+\): password changed for \S+", "pam_unix(<*>): password changed for <*>"),
        (r"pam_unix\(\S+\): new password not acceptable", "pam_unix(<*>): new password not acceptable"),
        (r"pam_unix\(\S+\): conversation failed", "pam_unix(<*>): conversation failed"),
        (r"pam_unix\(\S+\): auth could not identify password for \[\S+\]",
         "pam_unix(<*>): auth could not identify password for [<*>]"),
        (r"pam_limits\(\S+\): Could not set limit for '\w+' to soft=\S+ hard=\S+: Operation not permitted; uid=\d+,euid=\d+",
         "pam_limits(<*>): Could not set limit for <*> to soft=<*> hard=<*>: Operation not permitted; uid=<*>,euid=<*>"),
        (r"pam_systemd\(\S+\): Failed to connect to system bus: .*",
         "pam_systemd(<*>): Failed to connect to system bus: <*>"),
        (r"pam_env\(\S+\): deprecated reading of user environment enabled",
         "pam_env(<*>): deprecated reading of user environment enabled"),
        (r"\s*\S+ : (command not allowed|user NOT in sudoers) ; (?:TTY=\S+ ; )?PWD=\S+ ; USER=\S+ ; COMMAND=.*",
         lambda m: "<*> : %s ; PWD=<*> ; USER=<*> ; COMMAND=<*>" % m.group(1)),
        (r"\s*\S+ : \d+ incorrect password attempts? ; (?:TTY=\S+ ; )?PWD=\S+ ; USER=\S+ ; COMMAND=.*",
         "<*> : <*> incorrect password attempts ; PWD=<*> ; USER=<*> ; COMMAND=<*>"),
        (r"\s*\S+ : (?:TTY=\S+ ; )?PWD=\S+ ; USER=\S+ ; COMMAND=.*",
         "<*> : PWD=<*> ; USER=<*> ; COMMAND=<*>"),
        (r"\(to \S+\) \S+ on \S+", "(to <*>) <*> on <*>"),
        (r"FAILED SU \(to \S+\) \S+ on \S+", "FAILED SU (to <*>) <*> on <*>"),
        (r"\(\S+\) CMD \(.*\)", "(<*>) CMD (<*>)"),
        (r"\(\S+\) (REPLACE|LIST|DELETE|RELOAD|BEGIN EDIT|END EDIT) \(\S+\)",
         lambda m: "(<*>) %s (<*>)" % m.group(1)),
        (r"\(CRON\) INFO \(pidfile fd = \d+\)", "(CRON) INFO (pidfile fd = <*>)"),
        (r"\(CRON\) (STARTUP \(fork ok\)|INFO \(Skipping @reboot jobs -- not system startup\)|INFO \(Running @reboot jobs\))",
         lambda m: "(CRON) " + m.group(1)),
        (r"\(CRON\) info \(No MTA installed, discarding output\)", "(CRON) info (No MTA installed, discarding output)"),
        (r"new group: name=\S+, GID=\d+", "new group: name=<*>, GID=<*>"),
        (r"new user: name=\S+, UID=\d+, GID=\d+, home=\S+, shell=\S+, from=\S+",
         "new user: name=<*>, UID=<*>, GID=<*>, home=<*>, shell=<*>, from=<*>"),
        (r"group added to /etc/group: name=\S+, GID=\d+", "group added to /etc/group: name=<*>, GID=<*>"),
        (r"group added to /etc/gshadow: name=\S+", "group added to /etc/gshadow: name=<*>"),
        (r"add '\S+' to group '\S+'", "add <*> to group <*>"),
        (r"add '\S+' to shadow group '\S+'", "add <*> to shadow group <*>"),
        (r"delete '\S+' from group '\S+'", "delete <*> from group <*>"),
        (r"delete '\S+' from shadow group '\S+'", "delete <*> from shadow group <*>"),
        (r"delete user '\S+'", "delete user <*>"),
        (r"removed group '\S+' owned by '\S+'", "removed group <*> owned by <*>"),
        (r"removed shadow group '\S+' owned by '\S+'", "removed shadow group <*> owned by <*>"),
        (r"failed adding user '\S+', exit code: \d+", "failed adding user <*>, exit code: <*>"),
        (r"lock user '\S+' password", "lock user <*> password"),
        (r"unlock user '\S+' password", "unlock user <*> password"),
        (r"change user '\S+' shell from '\S+' to '\S+'", "change user <*> shell from <*> to <*>"),
        (r"password for '\S+' changed by '\S+'", "password for <*> changed by <*>"),
        (r"changed password expiry for \S+", "changed password expiry for <*>"),
        (r"changed user '\S+' shell to '\S+'", "changed user <*> shell to <*>"),
        (r"changed user '\S+' information", "changed user <*> information"),
        (r"user \S+ added by \S+ to group \S+", "user <*> added by <*> to group <*>"),
        (r"user \S+ removed by \S+ from group \S+", "user <*> removed by <*> from group <*>"),
        (r"group changed in /etc/group \(group \S+, new name: \S+\)",
         "group changed in /etc/group (group <*>, new name: <*>)"),
        (r"group changed in /etc/gshadow \(group \S+, new name: \S+\)",
         "group changed in /etc/gshadow (group <*>, new name: <*>)"),
        (r"group '\S+' removed from /etc/group", "group <*> removed from /etc/group"),
        (r"group '\S+' removed from /etc/gshadow", "group <*> removed from /etc/gshadow"),
        (r"group '\S+' removed", "group <*> removed"),
        (r"\[origin software=\"rsyslogd\" swVersion=\"\S+\" x-pid=\"\d+\" x-info=\"\S+\"\] (start|exiting on signal \d+\.)",
         lambda m: "[origin software=\"rsyslogd\" swVersion=<*> x-pid=<*> x-info=<*>] " + re.sub(r"\d+", V, m.group(1))),
    ])

# Samba's smbd log (`debug prefix timestamp`, `debug pid`): the header is the time, the debug
# level and the pid; a message's further lines (the JSON audit record, start-up facts) come
# without it, indented.
SAMBA = System(
    r"^\[\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+, +\d+, pid=\d+\] {3}(?P<content>.*)$",
    continuation=r"^  \S",
    rules=[
        # an NT status, a strerror text, an exit reason, an authentication type are
        # enumerations: each value its own event
        (r"smbd_smb2_request_error_ex: smbd_smb2_request_error_ex: idx\[\d+\] status\[(\w+)\] \|\| at \S+:\d+",
         lambda m: "smbd_smb2_request_error_ex: smbd_smb2_request_error_ex: idx[<*>] status[%s] || at <*>" % m.group(1)),
        (r"Allowed connection from \S+ \(\S+\)", "Allowed connection from <*> (<*>)"),
        (r"Forcing Primary Group to '.*' for \S+", "Forcing Primary Group to <*> for <*>"),
        (r"chdir_current_service: vfs_ChDir\(\S+\) failed: (.*)\. Current token: uid=\d+, gid=\d+, \d+ groups:( \d+)*",
         lambda m: "chdir_current_service: vfs_ChDir(<*>) failed: %s. Current token: uid=<*>, gid=<*>, <*> groups: <*>" % m.group(1)),
        (r"Got NTLMSSP neg_flags=0x[0-9a-f]+", "Got NTLMSSP neg_flags=<*>"),
        (r"string_to_sid: SID \S+ is not in a valid format", "string_to_sid: SID <*> is not in a valid format"),
        (r"Initialising default vfs hooks", "Initialising default vfs hooks"),
        (r"Initialising custom vfs hooks from \[.*\]", "Initialising custom vfs hooks from [<*>]"),
        (r"Failed to fetch domain sid for \S+", "Failed to fetch domain sid for <*>"),
        (r"NTLMSSP Sign/Seal - Initialising with flags:", "NTLMSSP Sign/Seal - Initialising with flags:"),
        (r"Registered MSG_REQ_POOL_USAGE", "Registered MSG_REQ_POOL_USAGE"),
        (r"Registered MSG_REQ_DMALLOC_MARK and LOG_CHANGED", "Registered MSG_REQ_DMALLOC_MARK and LOG_CHANGED"),
        (r"init_oplocks: initializing messages\.", "init_oplocks: initializing messages."),
        (r"Server exit \((.*)\)", lambda m: "Server exit (%s)" % m.group(1)),
        (r"Selected protocol \S+", "Selected protocol <*>"),
        (r"GENSEC backend '\S+' registered", "GENSEC backend <*> registered"),
        (r"lp_load_ex: refreshing parameters", "lp_load_ex: refreshing parameters"),
        (r"adding IPC service", "adding IPC service"),
        (r"Processing section \"\[\S+\]\"", "Processing section <*>"),
        (r"Initialising global parameters", "Initialising global parameters"),
        (r"make_connection_snum: Connect path is '\S+' for service \[\S+\]",
         "make_connection_snum: Connect path is <*> for service [<*>]"),
        (r"make_connection_snum: canonicalize_connect_path failed for service \S+, path \S+",
         "make_connection_snum: canonicalize_connect_path failed for service <*>, path <*>"),
        (r"\S+ \(\S+\) closed connection to service \S+", "<*> (<*>) closed connection to service <*>"),
        # `signed ` / `encrypted ` is a separate optional piece of one message
        (r"\S+ \(\S+\) (?:signed |encrypted )?connect to service \S+ initially as user \S+ \(uid=\d+, gid=\d+\) \(pid \d+\)",
         "<*> (<*>) connect to service <*> initially as user <*> (uid=<*>, gid=<*>) (pid <*>)"),
        (r"fcntl_getlock: fd \d+ is returned info \d+ pid \d+", "fcntl_getlock: fd <*> is returned info <*> pid <*>"),
        (r"smbd_do_qfsinfo: level = \d+", "smbd_do_qfsinfo: level = <*>"),
        (r"smbd_dirptr_get_entry mask=\[.*\] found .* fname=.* \(.*\)",
         "smbd_dirptr_get_entry mask=[<*>] found <*> fname=<*> (<*>)"),
        (r"get_referred_path: \|\S+\| in dfs path \S+ is not a dfs root\.",
         "get_referred_path: |<*>| in dfs path <*> is not a dfs root."),
        (r"\S+ closed file .* \(numopen=\d+\) (\w+)", lambda m: "<*> closed file <*> (numopen=<*>) " + m.group(1)),
        (r"\S+ opened file .* read=\w+ write=\w+ \(numopen=\d+\)",
         "<*> opened file <*> read=<*> write=<*> (numopen=<*>)"),
        (r"check_ntlm_password:  mapped user is: \[.*\]\\\[.*\]@\[.*\]",
         "check_ntlm_password:  mapped user is: [<*>]\\[<*>]@[<*>]"),
        (r"check_ntlm_password:  Checking password for unmapped user \[.*\]\\\[.*\]@\[.*\] with the new password interface",
         "check_ntlm_password:  Checking password for unmapped user [<*>]\\[<*>]@[<*>] with the new password interface"),
        (r"check_ntlm_password:  authentication for user \[.*\] -> \[.*\] -> \[.*\] succeeded",
         "check_ntlm_password:  authentication for user [<*>] -> [<*>] -> [<*>] succeeded"),
        (r"check_ntlm_password:  Authentication for user \[.*\] -> \[.*\] FAILED with error (\w+), authoritative=\d+",
         lambda m: "check_ntlm_password:  Authentication for user [<*>] -> [<*>] FAILED with error %s, authoritative=<*>" % m.group(1)),
        (r"Got user=\[.*\] domain=\[.*\] workstation=\[.*\] len1=\d+ len2=\d+",
         "Got user=[<*>] domain=[<*>] workstation=[<*>] len1=<*> len2=<*>"),
        (r"auth_check_ntlm_password: \S+ authentication for user \[.*\] succeeded",
         "auth_check_ntlm_password: <*> authentication for user [<*>] succeeded"),
        (r"Auth: \[.*\] user \[.*\]\\\[.*\] at \[.*\] with \[(\S+)\] status \[(\w+)\] workstation \[.*\] remote host \[\S+\] became \[.*\]\\\[.*\] \[\S+\]\. local host \[\S+\]",
         lambda m: "Auth: [<*>] user [<*>]\\[<*>] at [<*>] with [%s] status [%s] workstation [<*>] remote host [<*>] became [<*>]\\[<*>] [<*>]. local host [<*>]" % m.groups()),
        (r"Auth: \[.*\] user \[.*\]\\\[.*\] at \[.*\] with \[(\S+)\] status \[(\w+)\] workstation \[.*\] remote host \[\S+\] mapped to \[.*\]\\\[.*\]\. local host \[\S+\]",
         lambda m: "Auth: [<*>] user [<*>]\\[<*>] at [<*>] with [%s] status [%s] workstation [<*>] remote host [<*>] mapped to [<*>]\\[<*>]. local host [<*>]" % m.groups()),
        # the audit record in JSON: one format for every record; its type and status name the event
        (r"\{\"timestamp\": \"[^\"]+\", \"type\": \"(\w+)\", .*\"status\": \"(\w+)\".*\}",
         lambda m: "{\"timestamp\": <*>, \"type\": \"%s\", ... \"status\": \"%s\", ...}" % m.groups()),
        (r"Adding homes service for user '\S+' using home directory: '\S+'",
         "Adding homes service for user <*> using home directory: <*>"),
        (r"smb2: fnum \d+, file .*, length=\d+ offset=\d+ wrote=\d+",
         "smb2: fnum <*>, file <*>, length=<*> offset=<*> wrote=<*>"),
        (r"smbd_smb2_read: fnum \d+, file .*, length=\d+ offset=\d+ read=\d+",
         "smbd_smb2_read: fnum <*>, file <*>, length=<*> offset=<*> read=<*>"),
        (r"smbd_do_setfilepathinfo: .* \(fnum \d+\) info_level=\d+ totdata=\d+",
         "smbd_do_setfilepathinfo: <*> (fnum <*>) info_level=<*> totdata=<*>"),
        (r"rename_internals_fsp: succeeded doing rename on .* -> .*",
         "rename_internals_fsp: succeeded doing rename on <*> -> <*>"),
        (r"check_sam_security: Couldn't find user '\S+' in passdb\.", "check_sam_security: Couldn't find user <*> in passdb."),
        (r"No such user \S+ \[\S+\] - using guest account", "No such user <*> [<*>] - using guest account"),
        (r"sam_account_ok: Account for user '\S+' was disabled\.", "sam_account_ok: Account for user <*> was disabled."),
        (r"gensec_spnego_server_negTokenTarg_step: SPNEGO\(\S+\) login failed: (\w+)",
         lambda m: "gensec_spnego_server_negTokenTarg_step: SPNEGO(<*>) login failed: " + m.group(1)),
        (r"ntlm_password_check: NTLMv2 password check failed", "ntlm_password_check: NTLMv2 password check failed"),
        (r"ntlm_password_check: Lanman passwords NOT PERMITTED for user \S+",
         "ntlm_password_check: Lanman passwords NOT PERMITTED for user <*>"),
        (r"ntlm_password_check: LM password and LMv2 failed for user \S+, and NT MD4 password in LM field not permitted",
         "ntlm_password_check: LM password and LMv2 failed for user <*>, and NT MD4 password in LM field not permitted"),
        (r"create_connection_session_info failed: (\w+)", lambda m: "create_connection_session_info failed: " + m.group(1)),
        (r"create_connection_session_info: user '\S+' \(from session setup\) not permitted to access this share \(\S+\)",
         "create_connection_session_info: user <*> (from session setup) not permitted to access this share (<*>)"),
        (r"create_connection_session_info: guest user \(from session setup\) not permitted to access this share \(\S+\)",
         "create_connection_session_info: guest user (from session setup) not permitted to access this share (<*>)"),
        (r"find_service\(\) failed to find service \S+", "find_service() failed to find service <*>"),
        (r"checking for home directory \S+ gave \S+", "checking for home directory <*> gave <*>"),
        (r"smbd_smb2_tree_connect: couldn't find service \S+", "smbd_smb2_tree_connect: couldn't find service <*>"),
        (r"process_usershare_file: stat of \S+ failed\. (.*)",
         lambda m: "process_usershare_file: stat of <*> failed. " + m.group(1)),
        (r"idmap range not specified for domain '\S+'", "idmap range not specified for domain <*>"),
        (r"Forced user \S+", "Forced user <*>"),
        (r"added interface \S+ ip=\S+ bcast=\S* netmask=\S+", "added interface <*> ip=<*> bcast=<*> netmask=<*>"),
        (r"Copyright Andrew Tridgell and the Samba Team \d+-\d+", "Copyright Andrew Tridgell and the Samba Team <*>"),
        (r"waiting for connections", "waiting for connections"),
        (r"uid=\d+ gid=\d+ euid=\d+ egid=\d+", "uid=<*> gid=<*> euid=<*> egid=<*>"),
        (r"smbd version \S+ started\.", "smbd version <*> started."),
        (r"rpc_worker_exited: No worker with PID \d+", "rpc_worker_exited: No worker with PID <*>"),
        (r"pid_to_procid: messaging_dgm_get_unique failed: (.*)",
         lambda m: "pid_to_procid: messaging_dgm_get_unique failed: " + m.group(1)),
        (r"loaded services", "loaded services"),
        (r"Standard input is not a socket, assuming -D option", "Standard input is not a socket, assuming -D option"),
        (r"Becoming a daemon\.", "Becoming a daemon."),
        (r"INFO: Profiling turned OFF from pid \d+", "INFO: Profiling turned OFF from pid <*>"),
        (r"tdb\(\S+\): tdb_open_ex: could not open file \S+: (.*)",
         lambda m: "tdb(<*>): tdb_open_ex: could not open file <*>: " + m.group(1)),
        (r"Could not open tdb: (.*)", lambda m: "Could not open tdb: " + m.group(1)),
    ])

# CUPS's cupsd error_log at `LogLevel debug` prints a few hundred different messages in a short
# run, most of them from the filters and backends a job runs (each writes `DEBUG: ...` lines
# that cupsd logs under `[Job N]`): too many to write a regex for each, so, as for Kafka, one
# rule states the event. The header is the level letter and the time. The message's
# `[Job N]` / `[Client N]` prefix is a variable. Dumps of one format string are one event
# each: a job's `envp[N]=`/`argv[N]=` rows, the IPP backend's attribute rows (`name type
# value`, `name (N values)`, `[N] = value`, `---- group ----`), a filter's argv and
# Ghostscript's command line, a driver's `pdl=` list, `cupsdWriteClient`'s state dump,
# `cupsdMarkDirty`'s flags, and an option set with `Setting <option> to "..."`. Otherwise an
# event is the message's shape: quoted text, URIs, paths, media types, anything holding a
# digit and the names the driver chose (queues, users, documents, the host) become `<*>`, and
# other words stay, so an IPP operation (`Create-Job`, `Cancel-Jobs`), an IPP or HTTP status
# (`successful-ok`, `client-error-not-found`, `Unauthorized`), an HTTP method, an event
# cupsd discards (`job-completed`), a printer-state reason added or removed (`STATE:
# +connecting-to-device`), a log level a state message is set at, a busy state, how a filter
# ended (`exited with no errors` / `stopped with status N`) and an error text are each their
# own event.
CUPS_NAMES = re.compile(
    r"(?<![\w./-])(office|loop|sock|deadipp|deadlpd|temp\d+|nosuchqueue\d+|root|printuser|lp|"
    r"localhost|vm|hello\.ps|broken\.pdf|random\.bin|text\d\.txt)(?![\w/-])")
CUPS_ATTR_TYPES = ("integer|keyword|enum|boolean|nameWithoutLanguage|textWithoutLanguage|"
                   "nameWithLanguage|textWithLanguage|uri|uriScheme|mimeMediaType|"
                   "rangeOfInteger|naturalLanguage|charset|resolution|dateTime|collection|"
                   "octetString|memberAttrName|no-value|unknown")
CUPS_DUMPS = [
    (r"envp\[\d+\]=\".*\"", "envp[<*>]=<*>"),
    (r"argv\[\d+\]=\".*\"", "argv[<*>]=<*>"),
    (r"\[\d+\] = .*", "[<*>] = <*>"),
    (r"---- [\w-]+ ----", "---- <*> ----"),
    (r"[\w-]+ (?:\d*setOf )?(?:%s)(?: .*)?" % CUPS_ATTR_TYPES, "<*> <*> <*>"),
    (r"[\w-]+ \(\d+ values\)", "<*> (<*> values)"),
    (r"\S+ argv\[\d+\] = .*", "<*> argv[<*>] = <*>"),
    (r"Ghostscript command line: .*", "Ghostscript command line: <*>"),
    (r"\S+: pdl='.*'", "<*>: pdl=<*>"),
    (r"cupsdWriteClient error=.*", "cupsdWriteClient error=<*>, used=<*>, state=<*>, data_encoding=<*>, "
     "data_remaining=<*>, response=<*>, pipe_pid=<*>, file=<*>"),
    (r"cupsdMarkDirty\(\S+\)", "cupsdMarkDirty(<*>)"),
    (r"Setting [\w-]+ to \".*\"\.\.\.", "Setting <*> to <*>..."),
    (r"\S+ \(\S+ to \S+, cost \d+\)", "<*> (<*> to <*>, cost <*>)"),
    (r"([A-Z][A-Za-z]*(?:-[A-Za-z]+)+)(?: \w+://\S*)?", lambda m: m.group(1) + " <*>"),
    # the URI is a variable, `no URI` when the request has none
    (r"Returning (IPP|HTTP) (\S+) for (\S+) \(.*\) from \S+?(\.?)",
     lambda m: "Returning %s %s for %s (<*>) from <*>%s" % m.groups()),
    (r"cupsdSetBusyState: newbusy=\"(.*)\", busy=\"(.*)\"",
     lambda m: "cupsdSetBusyState: newbusy=\"%s\", busy=\"%s\"" % m.groups()),
]
CUPS_DUMPS = [(re.compile(r), t) for r, t in CUPS_DUMPS]


def cups_event(m):
    rest = m.group(2)
    prefix = re.sub(r"\d+", V, m.group(1) or "")
    for regex, template in CUPS_DUMPS:
        d = regex.fullmatch(rest)
        if d:
            return prefix + (template(d) if callable(template) else template)
    shape = re.sub(r"\\?\"[^\"]*\\?\"|'[^']*'", V, rest)
    shape = re.sub(r"\b\w+://[^\s)]+", V, shape)
    shape = re.sub(r"(?<![\w<])/[^\s)]*", V, shape)
    shape = re.sub(r"\b[a-z][\w.+-]*/[\w.+/-]+", V, shape)
    shape = CUPS_NAMES.sub(V, shape)
    shape = re.sub(r"[^\s,;()\[\]=]*\d[^\s,;()\[\]]*", V, shape)
    shape = re.sub(r"<\*>(?:[.:,]?<\*>)+", V, shape)
    return prefix + shape


CUPS = System(
    r"^(?P<field>[DIWECAX]) \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] (?P<content>.*)$",
    rules=[(r"(\[(?:Job|Client) \d+\] )?(.*)", cups_event)])
# Mosquitto (its own log file, `log_type all`, Debian's default `epoch: ` stamps): one event per
# format string of mosquitto 2.0. The MQTT packet type a line sends or receives (PUBLISH,
# PUBACK, PUBREC, SUBACK, PINGREQ, ...) is an enumeration, each its own event, and so is a
# return or reason code (`CONNACK ... (0, 5)` refuses a client that `(0, 0)` accepts; `rc0`,
# `RC:0`); a CONNACK's session-present flag, the publish flags (`d0, q1, r0`), message ids,
# client ids, topics, addresses and sizes are variables. An error's text (strerror) is part
# of the event. A subscription's detail lines (`client qos topic`, `\ttopic (QoS n)`, a will's
# `\ttopic`) are one event each.
MOSQUITTO = System(
    r"^\d+: (?P<content>.*)$",
    rules=[
        (r"New connection from \S+ on port \d+\.", "New connection from <*> on port <*>."),
        (r"New client connected from \S+ as \S+ \(p\d+, c\d+, k\d+(?:, u'[^']*')?\)\.",
         "New client connected from <*> as <*> (p<*>, c<*>, k<*>, u<*>)."),
        (r"No will message specified\.", "No will message specified."),
        (r"Will message specified \(\d+ bytes\) \(r\d+, q\d+\)\.",
         "Will message specified (<*> bytes) (r<*>, q<*>)."),
        (r"(Sending|Received|Denied|Dropped too large) PUBLISH (to|from) \S+ \(d\d+, q\d+, r\d+, m\d+, '.*', \.\.\. \(\d+ bytes\)\)",
         lambda m: "%s PUBLISH %s <*> (d<*>, q<*>, r<*>, m<*>, <*>, ... (<*> bytes))" % m.groups()),
        (r"Sending (\w+) to \S+ \(m\d+, rc(\d+)\)",
         lambda m: "Sending %s to <*> (m<*>, rc%s)" % m.groups()),
        (r"Sending (\w+) to \S+ \(m\d+\)", lambda m: "Sending %s to <*> (m<*>)" % m.group(1)),
        (r"Sending CONNACK to \S+ \(\d+, (\d+)\)",
         lambda m: "Sending CONNACK to <*> (<*>, %s)" % m.group(1)),
        (r"Sending (\w+) to \S+", lambda m: "Sending %s to <*>" % m.group(1)),
        (r"Received (\w+) from \S+ \(Mid: \d+, RC:(\d+)\)",
         lambda m: "Received %s from <*> (Mid: <*>, RC:%s)" % m.groups()),
        (r"Received (\w+) from \S+ \(Mid: \d+\)", lambda m: "Received %s from <*> (Mid: <*>)" % m.group(1)),
        (r"Received (\w+) from \S+", lambda m: "Received %s from <*>" % m.group(1)),
        (r"Received CONNACK on connection \S+\.", "Received CONNACK on connection <*>."),
        (r"Client \S+ (disconnected\.|disconnected, not authorised\.|closed its connection\.|disconnected due to protocol error\.|already connected, closing old connection\.|has exceeded timeout, disconnecting\.)",
         lambda m: "Client <*> " + m.group(1)),
        (r"Socket error on client \S+, disconnecting\.", "Socket error on client <*>, disconnecting."),
        (r"Outgoing messages are being dropped for client \S+\.",
         "Outgoing messages are being dropped for client <*>."),
        (r"\S+ \d+ \S+", "<*> <*> <*>"),
        (r"\t\S+ \(QoS \d+\)", "\t<*> (QoS <*>)"),
        (r"\t\S+", "\t<*>"),
        (r"Connecting bridge \(step \d+\) \S+ \(\S+\)", "Connecting bridge (step <*>) <*> (<*>)"),
        (r"Error creating bridge: (.*)\.", lambda m: "Error creating bridge: %s." % m.group(1)),
        (r"Error in epoll re-registering to (EPOLLOUT|EPOLLIN): (.*)",
         lambda m: "Error in epoll re-registering to %s: %s" % m.groups()),
        (r"Bridge \S+ sending CONNECT", "Bridge <*> sending CONNECT"),
        (r"Bridge \S+ doing local SUBSCRIBE on topic \S+", "Bridge <*> doing local SUBSCRIBE on topic <*>"),
        (r"Bridge \S+ sending UNSUBSCRIBE \(Mid: \d+, Topic: \S+\)",
         "Bridge <*> sending UNSUBSCRIBE (Mid: <*>, Topic: <*>)"),
        (r"Bridge \S+ sending SUBSCRIBE \(Mid: \d+, Topic: \S+, QoS: \d+, Options: 0x[0-9a-f]+\)",
         "Bridge <*> sending SUBSCRIBE (Mid: <*>, Topic: <*>, QoS: <*>, Options: <*>)"),
        (r"Saving in-memory database to \S+\.", "Saving in-memory database to <*>."),
        (r"mosquitto version \S+ (starting|running|terminating)",
         lambda m: "mosquitto version <*> " + m.group(1)),
        (r"Config loaded from \S+\.", "Config loaded from <*>."),
        (r"Opening ipv\d listen socket on port \d+\.", "Opening ipv<*> listen socket on port <*>."),
        (r"(Reloading config\.|Note: It is recommended to replace `message_size_limit` with `max_packet_size`\.)",
         lambda m: m.group(1)),
    ])


# Unbound (its own log file, verbosity 2 with query, reply, local-action and SERVFAIL logging;
# the header is the epoch stamp in brackets, `unbound[pid:thread]` and the level): one event per
# format string of unbound 1.17. A question's type (`A IN`, `MX IN`, `TYPE0 CLASS0`) is an
# enumeration on the lines that report a question (the query, the reply, a local zone's action,
# the iterator's and the trust anchor's steps), each its own event, and so are a reply's rcode
# (NOERROR, NXDOMAIN, SERVFAIL, REFUSED), a local zone's type (`static`, `refuse`,
# `always_nxdomain`, `redirect`, ...), the iterator's response classification (`ANSWER`,
# `nodata ANSWER`, `THROWAWAY`), a SERVFAIL's and a validation failure's reason text and an
# unbound-control command's verb. Names, zones, addresses, ports, times, counts and a reply's
# cached flag are variables, and so is the question a failure names in `<...>` (the failure's
# reason is its event).
UB_Q = r"\S+ (\S+) (\S+)"  # name type class


def ub_q(m, i=1):
    return "%s %s" % (m.group(i), m.group(i + 1))


UNBOUND = System(
    r"^\[\d+\] unbound\[\d+:\d+\] (?:info|notice|error|warning|debug|fatal error): (?P<content>.*)$",
    rules=[
        (r"\d+\.\d+\.\d+\.\d+ " + UB_Q, lambda m: "<*> <*> %s" % ub_q(m)),
        (r"\d+\.\d+\.\d+\.\d+ " + UB_Q + r" ([A-Z]+) [\d.]+ \d+ \d+",
         lambda m: "<*> <*> %s %s <*> <*> <*>" % (ub_q(m), m.group(3))),
        (r"\S+ (static|refuse|always_nxdomain|redirect|always_refuse|inform|always_nodata|deny|transparent|inform_deny|always_transparent|typetransparent|nodefault) \S+@\d+ " + UB_Q,
         lambda m: "<*> %s <*> <*> %s" % (m.group(1), ub_q(m, 2))),
        (r"(resolving|response for|sending query:|processQueryTargets:|iterator operate: query) " + UB_Q,
         lambda m: "%s <*> %s" % (m.group(1), ub_q(m, 2))),
        (r"reply from <\S+> \S+#\d+", "reply from <<*>> <*>"),
        (r"query response was (.*)", lambda m: "query response was " + m.group(1)),
        (r"SERVFAIL <[^>]*>: all the configured stub or forward servers failed, at zone \S+ (from \S+ got \w+|.*)",
         lambda m: "SERVFAIL <<*>>: all the configured stub or forward servers failed, at zone <*> "
         + re.sub(r"^from \S+ got", "from <*> got", m.group(1))),
        (r"validation failure <[^>]*>: key for validation \S+ is marked as invalid because of a previous validation failure <[^>]*>: no DNSKEY rrset from \S+ for trust anchor \S+ while building chain of trust",
         "validation failure <<*>>: key for validation <*> is marked as invalid because of a previous validation failure <<*>>: no DNSKEY rrset from <*> for trust anchor <*> while building chain of trust"),
        (r"validation failure <[^>]*>: no DNSKEY rrset from \S+ for trust anchor \S+ while building chain of trust",
         "validation failure <<*>>: no DNSKEY rrset from <*> for trust anchor <*> while building chain of trust"),
        (r"prime trust anchor", "prime trust anchor"),
        (r"generate keytag query \S+ " + r"(\S+) (\S+)", lambda m: "generate keytag query <*> %s" % ub_q(m)),
        (r"failed to prime trust anchor -- could not fetch DNSKEY rrset \S+ (\S+) (\S+)",
         lambda m: "failed to prime trust anchor -- could not fetch DNSKEY rrset <*> %s" % ub_q(m)),
        (r"Could not establish a chain of trust to keys for \S+ (\S+) (\S+)",
         lambda m: "Could not establish a chain of trust to keys for <*> %s" % ub_q(m)),
        (r"control cmd:  (\w+)(?: .*)?", lambda m: "control cmd: %s <*>" % m.group(1)),
        (r"new control connection from \S+ port \d+", "new control connection from <*> port <*>"),
        (r"server stats for thread \d+: \d+ queries, \d+ answers from cache, \d+ recursions, \d+ prefetch, \d+ rejected by ip ratelimiting",
         "server stats for thread <*>: <*> queries, <*> answers from cache, <*> recursions, <*> prefetch, <*> rejected by ip ratelimiting"),
        (r"server stats for thread \d+: requestlist max \d+ avg [\d.]+ exceeded \d+ jostled \d+",
         "server stats for thread <*>: requestlist max <*> avg <*> exceeded <*> jostled <*>"),
        (r"mesh has \d+ recursion states \(\d+ with reply, \d+ detached\), \d+ waiting replies, \d+ recursion replies sent, \d+ replies dropped, \d+ states jostled out",
         "mesh has <*> recursion states (<*> with reply, <*> detached), <*> waiting replies, <*> recursion replies sent, <*> replies dropped, <*> states jostled out"),
        (r"average recursion processing time [\d.e-]+ sec", "average recursion processing time <*> sec"),
        (r"histogram of recursion processing times", "histogram of recursion processing times"),
        (r"\[25%\]=\S+ median\[50%\]=\S+ \[75%\]=\S+", "[25%]=<*> median[50%]=<*> [75%]=<*>"),
        (r"lower\(secs\) upper\(secs\) recursions", "lower(secs) upper(secs) recursions"),
        (r"\s*[\d.]+\s+[\d.]+ \d+", "<*> <*> <*>"),
        (r"init module \d+: \w+", "init module <*>: <*>"),
        (r"(start of service|service stopped) \(unbound \S+\)\.", lambda m: "%s (unbound <*>)." % m.group(1)),
        (r"Restart of unbound \S+\.", "Restart of unbound <*>."),
        (r"sending to target: <\S+> \S+#\d+", "sending to target: <<*>> <*>"),
        (r"iterator\[module \d+\] operate: extstate:(\w+) event:(\w+)",
         lambda m: "iterator[module <*>] operate: extstate:%s event:%s" % m.groups()),
        (r"cache memory msg=\d+ rrset=\d+ infra=\d+ val=\d+ subnet=\d+",
         "cache memory msg=<*> rrset=<*> infra=<*> val=<*> subnet=<*>"),
        (r"ip_ratelimit exceeded \S+ \d+ \S+ (\S+) (\S+)",
         lambda m: "ip_ratelimit exceeded <*> <*> <*> %s %s" % m.groups()),
    ])


# etcd 3.4 (`--logger zap`: one JSON object a line on stderr; member m1 at `debug`, so gRPC's own
# log comes through zap too): `level`, `ts` and `caller` are header, the message is the rest of
# the object in its order (`{"msg":...,"key":value,...}`). One event per `msg` text, which is a
# constant of etcd's call, or a format string where raft and gRPC print their values into it
# (member ids, terms, indexes, addresses, pointers and quoted names are variables; a raft
# configuration or peer list is one). Fields are variables except those holding an
# enumeration, whose value is part of the event: a stream's type, a gRPC request's method
# (`response type`), an alarm, a configuration change's kind, a round tripper's and a raft
# message's type; and an `error` field's kind (its text with ids, addresses and numbers as
# variables: `connection refused`, `context canceled`, `auth: permission denied`), since it
# comes from a format string of its own. A raft progress's state (`StateProbe`) is part of an
# unreachable peer's event, its flags are not.
ETCD_ENUMS = ("stream-reader-type", "stream-writer-type", "stream-type", "response type", "alarm",
              "raft-conf-change", "round-tripper-name", "type")


def etcd_shape(text):
    t = re.sub(r'"[^"]*"', V, text)
    t = re.sub(r"\b0x[0-9a-f]+\b", V, t)
    t = re.sub(r"\b\d+\.\d+\.\d+\.\d+(:\d+)?(->\d+\.\d+\.\d+\.\d+:\d+)?\b", V, t)
    t = re.sub(r"\b(?=[0-9a-f]*\d)[0-9a-f]{6,}\b", V, t)
    t = re.sub(r"\b\d+(\.\d+)?\b", V, t)
    t = re.sub(r"<\*>(?:[ ,]+<\*>)+", V, t)
    return t


class EtcdSystem(System):
    def content(self, line):
        m = re.match(r'^\{"level":"\w+","ts":"[^"]*","caller":"[^"]*",(?P<content>.*)$', line)
        if m:
            return "{" + m.group("content"), None
        return System.content(self, line)

    def label(self, content, field=None):
        if not content.startswith("{"):
            return System.label(self, content)
        import json
        d = json.loads(content)
        msg = d.get("msg", "")
        m = re.fullmatch(r"\S+ switched to configuration .*", msg)
        if m:
            msg = "<*> switched to configuration <*>"
        elif re.fullmatch(r"\S+ failed to send message to \S+ because it is unreachable \[(\w+) .*\]", msg):
            msg = re.sub(r".*\[(\w+) .*", r"<*> failed to send message to <*> because it is unreachable [\1 <*>]", msg)
        elif msg.startswith("newRaft "):
            msg = etcd_shape(re.sub(r"\[peers: \[[^\]]*\]", "[peers: [<*>]", msg))
        elif msg.startswith("[core]ccResolverWrapper: sending update to cc: "):
            msg = "[core]ccResolverWrapper: sending update to cc: <*>"
        else:
            msg = etcd_shape(msg)
        parts = ["msg=" + msg]
        for k in ETCD_ENUMS:
            if k in d:
                parts.append("%s=%s" % (k, d[k]))
        if "error" in d:
            parts.append("error=" + etcd_shape(str(d["error"])))
        return " ".join(parts)


ETCD = EtcdSystem(
    r"^[A-Z]+: \d{4}/\d\d/\d\d \d\d:\d\d:\d\d (?P<content>.*)$",
    rules=[
        (r"\[core\] grpc: Server\.Serve failed to create ServerTransport:  (.*)",
         lambda m: "[core] grpc: Server.Serve failed to create ServerTransport: " + etcd_shape(m.group(1))),
    ])


# A Linux kernel's console (`Kernel`) prints a few hundred different messages from as many
# drivers in one boot, too many to write a regex for each, so label.py states one rule, as for
# Kafka. The header is the `[seconds.micros]` stamp. Dumps of one format string are one event
# each: a stack frame (`? name+0x1/0x2 [module]`), the `Code:` bytes, `RIP:`, each row of
# register names (their values are variables), a zone's free-page list, a row of the OOM
# killer's task table. Otherwise an event is the message's shape: quoted text, paths and
# anything holding a digit (addresses, numbers, device instances such as eth0 or br3)
# become `<*>`, and so do the names of disks (vda), memory zones (DMA32, Normal) and the
# program a message names (`comm ls:`, `Comm: faults`); other words stay, so a trap's kind
# (`divide error`, `invalid opcode`), a bridge port's state (`blocking`, `forwarding`), a
# link entering or leaving promiscuous mode, a SysRq action, an e820 range's type and each
# line of a multi-line report (Mem-Info's rows) are their own events.
# messages whose varying part is a word (a table's, a family's, a governor's name) or a
# resource printed by `%pR`: one format string each
KERNEL_FORMATS = [(re.compile(r), t) for r, t in [
    (r"ACPI: [A-Z0-9]{4} 0x[0-9A-F]+ [0-9A-F]+(?: \(.*\))?", "ACPI: <*> <*> <*>"),
    (r"ACPI: Reserving [A-Z0-9]{4} table memory at \[mem .*\]", "ACPI: Reserving <*> table memory at [mem <*>]"),
    (r"ACPI: PCI: Interrupt link \w+ configured for IRQ \d+", "ACPI: PCI: Interrupt link <*> configured for IRQ <*>"),
    (r"ACPI: \\\S+: Enabled at IRQ \d+", "ACPI: <*>: Enabled at IRQ <*>"),
    (r"ACPI: Added _OSI\(.*\)", "ACPI: Added _OSI(<*>)"),
    (r"evm: security\.\S+", "evm: <*>"),
    (r"DMA: preallocated \d+ KiB \S+ pool for atomic allocations", "DMA: preallocated <*> KiB <*> pool for atomic allocations"),
    (r"NET: Registered \S+ protocol family", "NET: Registered <*> protocol family"),
    (r".+ hash table entries: \d+ \(order:? -?\d+, \d+ bytes(?:, \w+)?\)", "<*> hash table entries: <*> (order: <*>, <*> bytes, <*>)"),
    (r"clocksource: \S+: mask: 0x[0-9a-f]+ max_cycles: 0x[0-9a-f]+, max_idle_ns: \d+ ns",
     "clocksource: <*>: mask: <*> max_cycles: <*>, max_idle_ns: <*> ns"),
    (r"\t\w+ variant of Tasks RCU enabled\.", "<*> variant of Tasks RCU enabled."),
    (r"Key type \S+ registered", "Key type <*> registered"),
    (r"cpuidle: using governor \S+", "cpuidle: using governor <*>"),
    (r"serio: .+ port at \S+ irq \d+", "serio: <*> port at <*> irq <*>"),
    (r"Freeing .+ memory: \d+K", "Freeing <*> memory: <*>"),
    (r"pci \S+: (?:BAR \d+|ROM) \[.*\]", "pci <*>: <*> [<*>]"),
    (r"pci \S+: (?:BAR \d+|ROM) \[.*\]: assigned", "pci <*>: <*> [<*>]: assigned"),
    (r"pci_bus \S+: root bus resource \[.*\]", "pci_bus <*>: root bus resource [<*>]"),
    (r"pci_bus \S+: resource \d+ \[.*\]", "pci_bus <*>: resource <*> [<*>]"),
    (r" +\w+ +empty", "<*> empty"),
    (r" +\w+ +\[mem .*\]", "<*> [mem <*>]"),
]]


def kernel_event(m):
    s = m.group("msg").rstrip()
    for regex, template in KERNEL_FORMATS:
        if regex.fullmatch(s):
            return template
    if re.fullmatch(r" (?:\? )?\S+\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[\w+\])?", s):
        return " <*>"
    if s.startswith("Code: "):
        return "Code: <*>"
    if re.fullmatch(r"RIP: [0-9a-f]{4}:.*", s):
        return "RIP: <*>"
    if re.fullmatch(r"(?:[A-Z][A-Z0-9_]*: [0-9a-f]+(?::[0-9a-f]+)? ?)+", s):
        return re.sub(r": [0-9a-f]+(?::[0-9a-f]+)?", ": <*>", s)
    if re.fullmatch(r"Node \d+ \w+: .* = \d+kB", s):
        return "Node <*> <*>: <*> = <*>kB"
    if re.fullmatch(r"\[ *\d+\](?: +-?\d+){7} \S+", s):
        return "[<*>] <*> <*> <*> <*> <*> <*> <*> <*>"
    s = re.sub(r"'[^']*'|\"[^\"]*\"", V, s)
    s = re.sub(r"\b(?:comm|Comm:) \S+?(?=:| )", lambda c: c.group(0).split()[0] + " " + V, s)
    s = re.sub(r"^\S+ (?=invoked oom-killer)", V + " ", s)
    s = re.sub(r"^\S+ \(\d+\): drop_caches", V + " (" + V + "): drop_caches", s)
    s = re.sub(r"Killed process \d+ \(\S+\)", "Killed process <*> (<*>)", s)
    s = re.sub(r"task=[^,]+", "task=<*>", s)
    s = re.sub(r"all_unreclaimable\? \w+", "all_unreclaimable? <*>", s)
    s = re.sub(r"\b(?:vd[a-z]|sd[a-z]|DMA32|DMA|Normal|Movable)\b", V, s)
    s = re.sub(r"(?<![\w/<])/[^\s,;()\[\]]*", V, s)
    s = re.sub(r"[^\s,;:()\[\]<>=]*\d[^\s,;:()\[\]<>=]*", V, s)
    s = re.sub(r"<\*>(?:[.:,/\-x*]?<\*>)+", V, s)
    return re.sub(r"\s+", " ", s)


KERNEL = System(
    r"^\[ *\d+\.\d+\] (?P<content>.*)$",
    rules=[(r"(?P<msg>.*)", kernel_event)])


# Kea (ISC Kea 2.2 DHCPv4 server's own log file, its default pattern, DEBUG level 50): the header
# is the time, the severity and `[logger/pid.thread]`. Every Kea message starts with its message
# ID, which names one format string of Kea's message files, so the ID is the event; within one
# ID, a DHCP message type (`DHCPDISCOVER (type 1)`, `type DHCPREQUEST`), a control command's name
# on the lines that receive it, a host identifier's type (`hwaddr=`, `client-id=`, `circuit-id=`)
# and an error's reason text (after `reason: `, `packet: `, `command: ` or a parser element) are
# enumerations, each value its own event. Class lists, timer and hook names (the rows of a
# registry walked at start and stop), addresses, ids, counts and the configuration dumped as
# JSON are variables.
def kea_reason(text):
    s = re.sub(r"'[^']*'|\"[^\"]*\"|\([^()]*:\d+:\d+\)", V, text)
    s = re.sub(r"(?<![\w<])/[^\s,;()]*", V, s)
    s = re.sub(r"[^\s,;:()\[\]<>=]*\d[^\s,;:()\[\]<>=]*", V, s)
    return re.sub(r"<\*>(?:[.:,/\-x*]?<\*>)+", V, s).strip()


KEA_ENUMS = [
    re.compile(r"\b(DHCP[A-Z]+) \(type \d+\)"),
    re.compile(r"\btype (DHCP[A-Z]+)\b"),
    re.compile(r"\bsending (DHCP[A-Z]+)\b"),
    re.compile(r"^Received command '([^']*)'"),
    re.compile(r"^received command (\S+?),"),
    re.compile(r"\bidentifie[rd](?: by)?:? (hwaddr|client-id|circuit-id|duid|flex-id|remote-id)="),
]
KEA_REASONS = re.compile(
    r".*?(?:, reason: |error on attempt to receive packet: |Error while processing command: "
    r"|configuration element \S+: )(.*)")


def kea_event(m):
    ident, rest = m.group(1), (m.group(2) or "").rstrip()
    parts = [ident]
    for regex in KEA_ENUMS:
        e = regex.search(rest)
        if e:
            parts.append(e.group(1))
    r = KEA_REASONS.fullmatch(rest)
    if r:
        parts.append(kea_reason(r.group(1)))
    return " ".join(parts) + " <*>"


KEA = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ +(?:DEBUG|INFO|WARN|ERROR|FATAL) +\[[^\]]+\] "
    r"(?P<content>.*)$",
    rules=[(r"([A-Z][A-Z0-9_]+)(?: (.*))?", kea_event)])


# OpenVPN (an OpenVPN 2.6 server's own log file, `verb 3`): the header is the time. A line about
# one client starts with the client's `name/address:port` (or `address:port` before the name is
# known), a variable. OpenVPN prints about a hundred different messages in a short run, so, as
# for Kafka, one rule: the event is the message's shape, where quoted text, paths, a `CN=`,
# a client's name in brackets, and anything holding a digit (addresses, ports, counts, versions,
# ciphers' names) become `<*>`; other words stay, so a TLS error's and an unwrap error's text,
# an errno name (`[ECONNREFUSED]`), a session state (`TM_ACTIVE`), a trust level (`trusted`,
# `semi-trusted`) and a signal with its kind and reason (`SIGUSR1[soft,ping-restart]`) are each
# their own event. The `peer info: KEY=value` rows a client's connection dumps are one event
# (one format string for every row); a control message sent is its verb (`PUSH_REPLY` with
# its options a variable, `AUTH_FAILED`) and a management command its verb (`status`, `kill`,
# `signal`), the arguments variables.
def openvpn_event(m):
    s = m.group("msg")
    p = re.match(r"(?:[\w.@-]+/)?\d+\.\d+\.\d+\.\d+:\d+ (.*)", s)
    if p:
        s = p.group(1)
    s = s.rstrip()
    if s.startswith("peer info: "):
        return "peer info: <*>"
    c = re.fullmatch(r"SENT CONTROL \[[^\]]*\]: '([A-Z_]+)[^']*' \(status=\d+\)", s)
    if c:
        return "SENT CONTROL [<*>]: '%s<*>' (status=<*>)" % c.group(1)
    c = re.fullmatch(r"MANAGEMENT: CMD '(\S+)[^']*'", s)
    if c:
        return "MANAGEMENT: CMD '%s <*>'" % c.group(1)
    signal = re.search(r"\bSIG[A-Z0-9]+\[[^\]]*\]", s)
    s = re.sub(r"'[^']*'|\"[^\"]*\"", V, s)
    s = re.sub(r"\bCN=[^,\s]+", "CN=" + V, s)
    s = re.sub(r"^\[[^\]]+\] ", "[<*>] ", s)
    s = re.sub(r"(?<![\w<\]])/[^\s,;()\[\]]*", V, s)
    s = re.sub(r"[^\s,;:()\[\]<>=]*\d[^\s,;:()\[\]<>=]*", V, s)
    s = re.sub(r"<\*>(?:[.:,/\-x*]?<\*>)+", V, s)
    if signal:
        s = re.sub(r"<\*>\[[^\]]*\]", signal.group(0), s, count=1)
    return re.sub(r"\s+", " ", s)


OPENVPN = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?P<content>.*)$",
    rules=[(r"(?P<msg>.*)", openvpn_event)])


# DBus (dbus-daemon 1.14's own messages on stderr, a session bus): the header is
# `dbus-daemon[pid]: ` and the bus's `[session uid=N pid=N] ` context (the same message printed
# with and without it is one event). One event per format string of dbus-daemon; a rejected
# message's type (`method_call`, `signal`), how an activated service failed (an exit status,
# a signal, a program that cannot be executed with its error text) and a configuration
# parser's error text are enumerations, each value its own event. Names, connection ids,
# pids, the requesting command line, interfaces, members and limits are variables.
DBUS_PEER = r"\(uid=\d+ pid=\d+ comm=\".*\"\)"
DBUS = System(
    r"^dbus-daemon\[\d+\]: (?:\[\w+ uid=\d+ pid=\d+\] )?(?P<content>.*)$",
    rules=[
        (r"Activating service name='\S+' requested by '\S+' " + DBUS_PEER,
         "Activating service name=<*> requested by <*> (uid=<*> pid=<*> comm=<*>)"),
        (r"Successfully activated service '\S+'", "Successfully activated service <*>"),
        (r"Activated service '\S+' failed: Process \S+ exited with status \d+",
         "Activated service <*> failed: Process <*> exited with status <*>"),
        (r"Activated service '\S+' failed: Process \S+ received signal \d+",
         "Activated service <*> failed: Process <*> received signal <*>"),
        (r"Activated service '\S+' failed: Failed to execute program \S+: (.*)",
         lambda m: "Activated service <*> failed: Failed to execute program <*>: " + m.group(1)),
        (r"Failed to activate service '\S+': timed out \(service_start_timeout=\d+ms\)",
         "Failed to activate service <*>: timed out (service_start_timeout=<*>ms)"),
        (r"Rejected send message, \d+ matched rules; type=\"(\w+)\", sender=\"\S+\" "
         + DBUS_PEER + r" interface=\"\S+\" member=\"\S+\" error name=\"\S+\" "
         r"requested_reply=\"\d+\" destination=\"\S+\" (?:\(.*\)|\"\(unset\)\")",
         lambda m: "Rejected send message, <*> matched rules; type=%s, sender=<*> (uid=<*> pid=<*> "
         "comm=<*>) interface=<*> member=<*> error name=<*> requested_reply=<*> destination=<*> "
         "(<*>)" % m.group(1)),
        (r"Connection \S+ " + DBUS_PEER + r" became a monitor\.",
         "Connection <*> (uid=<*> pid=<*> comm=<*>) became a monitor."),
        (r"Monitoring connection \S+ closed\.", "Monitoring connection <*> closed."),
        (r"The maximum number of pending replies for \"\S+\" " + DBUS_PEER
         + r" has been reached \(max_replies_per_connection=\d+\)",
         "The maximum number of pending replies for <*> (uid=<*> pid=<*> comm=<*>) has been "
         "reached (max_replies_per_connection=<*>)"),
        (r"Connection \"\S+\" is not allowed to add more match rules \(increase limits in "
         r"configuration file if required; max_match_rules_per_connection=\d+\)",
         "Connection <*> is not allowed to add more match rules (increase limits in "
         "configuration file if required; max_match_rules_per_connection=<*>)"),
        (r"The maximum number of active connections for UID \d+ has been reached "
         r"\(max_connections_per_user=\d+\)",
         "The maximum number of active connections for UID <*> has been reached "
         "(max_connections_per_user=<*>)"),
        (r"Connection has not authenticated soon enough, closing it \(auth_timeout=\d+ms, "
         r"elapsed: \d+ms\)",
         "Connection has not authenticated soon enough, closing it (auth_timeout=<*>ms, "
         "elapsed: <*>ms)"),
        (r"Unable to reload configuration: Error in file \S+, line \d+, column \d+: (.*)",
         lambda m: "Unable to reload configuration: Error in file <*>, line <*>, column <*>: "
         + m.group(1)),
        (r"Reloaded configuration", "Reloaded configuration"),
        (r"org\.freedesktop\.DBus\.Error\.AccessDenied: Failed to set fd limit to \d+: (.*)",
         lambda m: "org.freedesktop.DBus.Error.AccessDenied: Failed to set fd limit to <*>: "
         + m.group(1)),
    ])

SLAPD_TEXTS = [(re.compile(r), t) for r, t in [
    (r"(\S+): attribute type undefined", "<*>: attribute type undefined"),
    (r"modify/delete: \S+: no such attribute", "modify/delete: <*>: no such attribute"),
    (r"non-unique attributes found with .*", "non-unique attributes found with <*>"),
    (r"object class '[^']*' requires attribute '[^']*'",
     "object class <*> requires attribute <*>"),
]]


def slapd_text(text):
    """A result's text= is a format string of its own: its kind is part of the event, the
    names it prints are variables; a text without any is one constant."""
    for regex, template in SLAPD_TEXTS:
        if regex.fullmatch(text):
            return template
    return text


SL = r"conn=\d+ op=\d+ "
SLAPD = System(
    r"^[0-9a-f]+\.[0-9a-f]+ 0x[0-9a-f]+ (?P<content>.*)$",
    continuation=r"^\t",
    rules=[
        (r"conn=\d+ fd=\d+ ACCEPT from IP=\S+ \(IP=\S+\)",
         "conn=<*> fd=<*> ACCEPT from IP=<*> (IP=<*>)"),
        (r"conn=\d+ fd=\d+ ACCEPT from PATH=\S+ \(PATH=\S+\)",
         "conn=<*> fd=<*> ACCEPT from PATH=<*> (PATH=<*>)"),
        (r"conn=\d+ fd=\d+ closed", "conn=<*> fd=<*> closed"),
        (r"conn=\d+ fd=\d+ closed \(([^)]*)\)",
         lambda m: "conn=<*> fd=<*> closed (%s)" % m.group(1)),
        (SL + r"UNBIND", "conn=<*> op=<*> UNBIND"),
        (SL + r"WHOAMI", "conn=<*> op=<*> WHOAMI"),
        (SL + r"BIND dn=\".*\" method=(\d+)",
         lambda m: "conn=<*> op=<*> BIND dn=<*> method=" + m.group(1)),
        (SL + r"BIND dn=\".*\" mech=(\S+) bind_ssf=\d+ ssf=\d+",
         lambda m: "conn=<*> op=<*> BIND dn=<*> mech=%s bind_ssf=<*> ssf=<*>" % m.group(1)),
        (SL + r"BIND authcid=\".*\" authzid=\".*\"",
         "conn=<*> op=<*> BIND authcid=<*> authzid=<*>"),
        (SL + r"RESULT tag=(\d+) err=(\d+) qtime=\S+ etime=\S+ text=(.*)",
         lambda m: "conn=<*> op=<*> RESULT tag=%s err=%s qtime=<*> etime=<*> text=%s" % (
             m.group(1), m.group(2), slapd_text(m.group(3)))),
        (SL + r"RESULT oid=(\S*) err=(\d+) qtime=\S+ etime=\S+ text=(.*)",
         lambda m: "conn=<*> op=<*> RESULT oid=%s err=%s qtime=<*> etime=<*> text=%s" % (
             m.group(1), m.group(2), slapd_text(m.group(3)))),
        (SL + r"SEARCH RESULT tag=(\d+) err=(\d+) qtime=\S+ etime=\S+ nentries=\d+ text=(.*)",
         lambda m: "conn=<*> op=<*> SEARCH RESULT tag=%s err=%s qtime=<*> etime=<*> "
                   "nentries=<*> text=%s" % (m.group(1), m.group(2), slapd_text(m.group(3)))),
        (SL + r"SRCH base=\".*\" scope=(\d+) deref=(\d+) filter=\".*\"",
         lambda m: "conn=<*> op=<*> SRCH base=<*> scope=%s deref=%s filter=<*>" % (
             m.group(1), m.group(2))),
        (SL + r"SRCH attr=.*", "conn=<*> op=<*> SRCH attr=<*>"),
        (SL + r"(ADD|MOD|DEL|MODRDN) dn=\".*\"",
         lambda m: "conn=<*> op=<*> %s dn=<*>" % m.group(1)),
        (SL + r"MOD attr=.*", "conn=<*> op=<*> MOD attr=<*>"),
        (SL + r"CMP dn=\".*\" attr=\".*\"", "conn=<*> op=<*> CMP dn=<*> attr=<*>"),
        (SL + r"EXT oid=(\S+)", lambda m: "conn=<*> op=<*> EXT oid=" + m.group(1)),
        # " old" and " new" say which of the request's optional fields were given.
        (SL + r"PASSMOD id=\".*\"( old)?( new)?", "conn=<*> op=<*> PASSMOD id=<*><*>"),
        (SL + r"do_extended: unsupported operation \".*\"",
         "conn=<*> op=<*> do_extended: unsupported operation <*>"),
        (SL + r"do_search: invalid dn: \".*\"", "conn=<*> op=<*> do_search: invalid dn: <*>"),
        (r"connection_input: conn=\d+ deferring operation: (.*)",
         lambda m: "connection_input: conn=<*> deferring operation: " + m.group(1)),
        (r"Entry \(.*\): object class '[^']*' requires attribute '[^']*'",
         "Entry (<*>): object class <*> requires attribute <*>"),
        (r"ppolicy_get: policy subentry \S+ missing or invalid at '[^']*', no policy will be applied!",
         "ppolicy_get: policy subentry <*> missing or invalid at <*>, no policy will be applied!"),
        (r"@\(#\) \$OpenLDAP: slapd .*\$", "@(#) $OpenLDAP: slapd <*> $"),
        (r"Debian OpenLDAP Maintainers <.*>", "Debian OpenLDAP Maintainers <*>"),
        (r"slapd starting", "slapd starting"),
        (r"slapd stopped\.", "slapd stopped."),
        (r"slapd shutdown: waiting for \d+ operations/tasks to finish",
         "slapd shutdown: waiting for <*> operations/tasks to finish"),
        (r"daemon: shutdown requested and initiated\.", "daemon: shutdown requested and initiated."),
    ])


DV_ELEMS = r"user=<[^>]*>, (?:method=(\S+), )?rip=\S+, lip=\S+, (?:mpid=\d+, )?\w+, session=<[^>]*>"
MAIL_LOG = r"box=.*, uid=\d+, msgid=.*, size=\d+, from=.*, subject=.*, flags=\(.*\)"


def dv_elems(m, i):
    """A login process's log elements: the SASL method is an enumeration (a login's own
    format, `method=PLAIN` vs `method=LOGIN`); mpid= appears only once logged in."""
    method = m.group(i)
    return "user=<*>, %srip=<*>, lip=<*>, <*>, session=<*>" % (
        "method=%s, " % method if method else "")


def dv_reason(text):
    """A disconnect reason is a format string of its own (`auth failed, %u attempts in %u secs`):
    its words are the event, numbers and the last IMAP command's name are variables."""
    text = re.sub(r"\(\w+ finished \S+ secs ago\)", "(<*> finished <*> secs ago)", text)
    text = re.sub(r"read\(size=\d+\)", "read(size=<*>)", text)
    return re.sub(r"\b\d+\b", V, text)


DOVECOT = System(
    r"^\w{3} [ \d]\d \d\d:\d\d:\d\d [\w-]+(?:\([^)]*\))?(?:<[^>]*>)*: "
    r"(?:Info|Warning|Error|Fatal|Panic|Debug): (?P<content>.*)$",
    rules=[
        (r"Login: " + DV_ELEMS, lambda m: "Login: " + dv_elems(m, 1)),
        (r"Disconnected: (.*?): " + DV_ELEMS,
         lambda m: "Disconnected: %s: %s" % (dv_reason(m.group(1)), dv_elems(m, 2))),
        (r"(save|expunge|delete|undelete|flag_change): " + MAIL_LOG,
         lambda m: m.group(1) + ": box=<*>, uid=<*>, msgid=<*>, size=<*>, from=<*>, "
                   "subject=<*>, flags=<*>"),
        (r"copy from .*: " + MAIL_LOG,
         "copy from <*>: box=<*>, uid=<*>, msgid=<*>, size=<*>, from=<*>, subject=<*>, flags=<*>"),
        (r"Mailbox (created|deleted): .*", lambda m: "Mailbox %s: <*>" % m.group(1)),
        (r"Mailbox renamed: .* -> .*", "Mailbox renamed: <*> -> <*>"),
        (r"Disconnected: (.*?) ?in=\d+ out=\d+ deleted=\d+ expunged=\d+",
         lambda m: "Disconnected: %s in=<*> out=<*> deleted=<*> expunged=<*>" % dv_reason(
             m.group(1))),
        (r"Disconnected: (.*?) ?top=\d+/\d+, retr=\d+/\d+, del=\d+/\d+, size=\d+",
         lambda m: "Disconnected: %s top=<*>, retr=<*>, del=<*>, size=<*>" % dv_reason(
             m.group(1))),
        (r"passwd-file\([^)]*\): allow_nets check failed: IP \S+ not in allowed networks",
         "passwd-file(<*>): allow_nets check failed: IP <*> not in allowed networks"),
        (r"passwd-file\([^)]*\): (.*)", lambda m: "passwd-file(<*>): " + m.group(1)),
        (r"mkdir\(.*\) failed: Permission denied \(euid=.*\)",
         "mkdir(<*>) failed: Permission denied (euid=<*> egid=<*> missing +w perm: <*>, dir owned by "
         "<*> mode=<*>)"),
        (r"Mailbox \S+: Failed to autocreate mailbox: Internal error occurred\. Refer to server log "
         r"for more information\. \[.*\]",
         "Mailbox <*>: Failed to autocreate mailbox: Internal error occurred. Refer to server log "
         "for more information. [<*>]"),
        (r"auth client \d+ disconnected with \d+ pending requests: (.*)",
         lambda m: "auth client <*> disconnected with <*> pending requests: " + m.group(1)),
        (r"auth-master client: Master requested auth for nonexistent client \d+ \(created \d+ msecs "
         r"ago, handshake \d+ msecs ago\)",
         "auth-master client: Master requested auth for nonexistent client <*> (created <*> msecs "
         "ago, handshake <*> msecs ago)"),
        (r"auth-master: login: request \[\d+\]: Login auth request failed: (.*?) \(auth connected "
         r"\d+ msecs ago, request took \d+ msecs, client-pid=\d+ client-id=\d+\)",
         lambda m: "auth-master: login: request [<*>]: Login auth request failed: %s (auth "
                   "connected <*> msecs ago, request took <*> msecs, client-pid=<*> client-id=<*>)"
                   % m.group(1)),
        (r"Killed with signal (\d+) \(by pid=\d+ uid=\d+ code=(\w+)\)",
         lambda m: "Killed with signal %s (by pid=<*> uid=<*> code=%s)" % (m.group(1), m.group(2))),
        (r"Dovecot v\S+ \(\w+\) starting up for .* \(core dumps disabled\)",
         "Dovecot v<*> (<*>) starting up for <*> (core dumps disabled)"),
        (r"SIGHUP received - reloading configuration", "SIGHUP received - reloading configuration"),
    ])


LIGHTTPD_FIELDS = ("Request-URI|URI-scheme|URI-authority|URI-path \(clean\)|URI-query|URI|Path|"
                   "Rel-Path|Doc-Root|Basedir|Pathinfo")
LIGHTTPD = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d: \([\w.]+\.c\.\d+\) (?P<content>.*)$",
    rules=[
        # Request handling's field rows: one format string per field name ("Path" is printed
        # at two places with the same text: one event, as Chromium's same text).
        (r"(%s) *: ?.*" % LIGHTTPD_FIELDS, lambda m: m.group(1) + " : <*>"),
        (r"-- (parsed Request-URI|logical -> physical|handling subrequest|"
         r"handling the request as \S+)", lambda m: m.group(0)),
        # log_perror: the C library's error text is the failure's kind.
        (r"-- : (.*)", lambda m: "-- : " + m.group(1)),
        # Request-header dump after a rejected request: one row format.
        (r"rqst:(?: .*)?", "rqst: <*>"),
        (r"(invalid [\w -]+(?:\([\w ]+\))?|duplicate Host header|unknown HTTP version) -> (\d+)",
         lambda m: m.group(0)),
        (r"request-size too long: \d+ -> (\d+)",
         lambda m: "request-size too long: <*> -> " + m.group(1)),
        (r"connection closed - (\w+) timeout: \d+",
         lambda m: "connection closed - %s timeout: <*>" % m.group(1)),
        (r"read timeout on CGI: \S+ \(pid: \d+\)", "read timeout on CGI: <*> (pid: <*>)"),
        (r"handling the request using (\w+)", lambda m: m.group(0)),
        (r"establishing connection failed: socket: \S+: (.*)",
         lambda m: "establishing connection failed: socket: <*>: " + m.group(1)),
        (r"gw-server re-enabled: \S+ \S+ \d+ ?", "gw-server re-enabled: <*> <*> <*>"),
        (r"all handlers for \S+ on \S* are down\.", "all handlers for <*> on <*> are down."),
        (r"password doesn't match for \S+ username: \S+ IP: \S+",
         "password doesn't match for <*> username: <*> IP: <*>"),
        (r"url denied as we match access_deny \S+", "url denied as we match access_deny <*>"),
        (r"server started \(lighttpd/\S+\)", "server started (lighttpd/<*>)"),
        (r"server stopped by UID = \d+ PID = \d+", "server stopped by UID = <*> PID = <*>"),
        (r"logfiles cycled UID = \d+ PID = \d+", "logfiles cycled UID = <*> PID = <*>"),
        (r"\[note\] graceful shutdown started", "[note] graceful shutdown started"),
    ])


# fail2ban's logging: `%(asctime)s %(name)-23.23s [%(process)d]: %(levelname)-7s %(message)s`;
# the lines after a header-less first line are the rest of a shell script fail2ban printed.
F2B_J = r"\[[\w-]+\] "
FAIL2BAN = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} fail2ban\.\w+ +\[\d+\]: "
    r"(?:INFO   |NOTICE |WARNING|ERROR  |DEBUG  |CRITICAL) (?P<content>.*)$",
    continuation=r"^(?!\d{4}-\d\d-\d\d )",
    rules=[
        (F2B_J + r"Found \S+ - \S+ \S+", "[<*>] Found <*> - <*> <*>"),
        # ", Ban" is an optional piece of one format string.
        (F2B_J + r"Found \S+, bad - \S+ \S+, \d+ # -> \S+?(, Ban)?",
         "[<*>] Found <*>, bad - <*> <*>, <*> # -> <*><*>"),
        (F2B_J + r"IP \S+ is bad: \d+ # last \S+ \S+ - incr \S+ to \S+",
         "[<*>] IP <*> is bad: <*> # last <*> <*> - incr <*> to <*>"),
        (F2B_J + r"Increase Ban \S+ \(\d+ # \S+ -> \S+ \S+\)",
         "[<*>] Increase Ban <*> (<*> # <*> -> <*> <*>)"),
        # A ban and an unban are different events; `Restore ` (a ban restored from the
        # database) is an optional piece of the ban's format string.
        (F2B_J + r"(?:Restore )?Ban \S+", "[<*>] <*>Ban <*>"),
        (F2B_J + r"Unban \S+", "[<*>] Unban <*>"),
        # Why an address is ignored: "by ip", "by ignoreself rule", "by command", "by dns".
        (F2B_J + r"Ignore \S+ by (.*)", lambda m: "[<*>] Ignore <*> by " + m.group(1)),
        (F2B_J + r"Flush ticket\(s\) with \S+", "[<*>] Flush ticket(s) with <*>"),
        (r"Jail '[^']*' (started|stopped|reloaded)", lambda m: "Jail <*> " + m.group(1)),
        (r"Jail '[^']*' uses poller \{\}", "Jail <*> uses poller {}"),
        (r"Creating new jail '[^']*'", "Creating new jail <*>"),
        # Two format strings: the name quoted (%r) and bare (%s).
        (r"Reload jail '[^']*'", "Reload jail '<*>'"),
        (r"Reload jail [^' ]+", "Reload jail <*>"),
        (r"Added logfile: '.*' \(pos = \d+, hash = \w*\)",
         "Added logfile: <*> (pos = <*>, hash = <*>)"),
        (r"Removed logfile: '.*'", "Removed logfile: <*>"),
        (r"  (maxRetry|findtime|banTime|encoding|maxLines|maxMatches|ignoreself): \S+",
         lambda m: "  %s: <*>" % m.group(1)),
        (r"  date pattern `.*`: `.*`", "  date pattern <*>: <*>"),
        (r"Set ([\w.]+) = \S+", lambda m: "Set %s = <*>" % m.group(1)),
        (r"Initiated '\w+' backend", "Initiated <*> backend"),
        (r"[0-9a-f]+ -- exec: .*", "<*> -- exec: <*>"),
        (r"[0-9a-f]+ -- stderr: .*", "<*> -- stderr: <*>"),
        (r"[0-9a-f]+ -- returned \d+", "<*> -- returned <*>"),
        (r'HINT on 127: "Command not found"\.  Make sure that all commands in ".*" are in the '
         r"PATH of fail2ban-server process .*",
         'HINT on 127: "Command not found".  Make sure that all commands in <*> are in the PATH '
         "of fail2ban-server process <*>"),
        (r"Failed to execute (ban|unban) jail '[^']*' action '[^']*' info 'ActionInfo\(.*\)': "
         r"Error starting action Jail\('[^']*'\)/\S+: '([^']*)'",
         lambda m: "Failed to execute %s jail <*> action <*> info <*>: Error starting action "
                   "Jail(<*>)/<*>: %s" % (m.group(1), m.group(2))),
        # The exception's class and its own format string are the failure's kind.
        (r"Command \[.*\] has failed\. Received UnknownJailException\('.*'\)",
         "Command <*> has failed. Received UnknownJailException(<*>)"),
        (r"Command \[.*\] has failed\. Received Exception\(\"Invalid command '.*' \(no set action "
         r"or not yet implemented\)\"\)",
         "Command <*> has failed. Received Exception(\"Invalid command <*> (no set action or not "
         "yet implemented)\")"),
        (r"Connected to fail2ban persistent database '.*'",
         "Connected to fail2ban persistent database <*>"),
        (r"New database created\. Version '\d+'", "New database created. Version <*>"),
        (r"Observer stop \.\.\. try to end queue \d+ seconds",
         "Observer stop ... try to end queue <*> seconds"),
        (r"Observer stopped, \d+ events remaining\.", "Observer stopped, <*> events remaining."),
        (r"rollover performed on .*", "rollover performed on <*>"),
        (r"Starting Fail2ban v\S+", "Starting Fail2ban v<*>"),
        (r"(Daemon started|Observer start\.\.\.|Stopping all jails|Shutdown in progress\.\.\.|"
         r"Exiting Fail2ban|Reload all jails|Reload finished\.|Connection to database closed\.|-{50})",
         lambda m: m.group(0)),
        # The shell script's further lines: one event per text, numbers and names aside.
        (r"for proto in \$\(echo '\S+' \| sed 's/,/ /g'\); do",
         "for proto in $(echo <*> | sed 's/,/ /g'); do"),
        (r"\{ iptables -w -C INPUT -p \$proto -m multiport --dports \S+ -j \S+ >/dev/null 2>&1; \} "
         r"\|\| \{ iptables -w -I INPUT -p \$proto -m multiport --dports \S+ -j \S+; \}",
         "{ iptables -w -C INPUT -p $proto -m multiport --dports <*> -j <*> >/dev/null 2>&1; } || "
         "{ iptables -w -I INPUT -p $proto -m multiport --dports <*> -j <*>; }"),
        (r"\{ iptables -w -C INPUT -p \$proto -j \S+ >/dev/null 2>&1; \} \|\| "
         r"\{ iptables -w -I INPUT -p \$proto -j \S+; \}",
         "{ iptables -w -C INPUT -p $proto -j <*> >/dev/null 2>&1; } || "
         "{ iptables -w -I INPUT -p $proto -j <*>; }"),
        (r"done", "done"),
    ])


# Names the driver (produce/pulseaudio.sh) chose: sinks, sources, their descriptions, the
# user, the host; and the client programs a message names.
PA_NAMES = (r"(?:speakers|headset|hdmi|both|mono|pipe|mic|Speakers|vm|pacat|pactl|parec|pacmd|paplay|"
            r"auto_null|Null Output)")


def pa_shape(m):
    """PulseAudio at debug prints several hundred different messages in a short run, so one
    rule, as for Kafka: the event is the message's shape. A dumped property row (`key =
    "value"`, a proplist of a stream, a device or a module) is one event; otherwise quoted
    text, `<...>`, paths, anything holding a digit and the names the driver chose become
    `<*>`, other words stay, so a state change's states, a resampler's method and a failure's
    text are their own events; the names of the driver's sinks and sources (and
    PulseAudio's own `auto_null`) are variables."""
    c = m.group(0)
    if re.fullmatch(r"\s*[\w.-]+ = \".*\"", c):
        return "<*> = <*>"
    # A resampler's channel matrix: its rows and rules are one event each, whatever the
    # number of channels.
    if re.fullmatch(r"\s*O\d+ \|.*", c):
        return "<*> | <*>"
    if re.fullmatch(r"\s*(?:I\d+\s*)+", c):
        return "<*>"
    if re.fullmatch(r"\s*\+-+", c):
        return "+-"
    # A default or preferred device is a name or `(unset)`: one value.
    c = re.sub(r"^((?:configured_)?default_\w+|Sink input \S+ preferred_\w+): \S+ -> \S+",
               r"\1: <*> -> <*>", c)
    # A stream's restore id (`sink-input-by-media-role:phone`) is one value.
    c = re.sub(r"\b(?:sink-input|source-output)-by-[\w-]+:[^\s,.]+(?: \([^)]*\))?", V, c)
    c = re.sub(r"\"[^\"]*\"|'[^']*'|<[^>]*>", V, c)
    c = re.sub(r"(?<!\S)\.{0,2}/\S*", V, c)
    # A channel map is a value (`front-left,front-right`, `mono`), and so is its pretty name
    # on the row under it in a status dump.
    c = re.sub(r"(channel map:? )\S+", r"\1" + V, c)
    c = re.sub(r"^\s+[A-Z]\w*$", V, c)
    # A signal's or an instruction set's name (SIGUSR1, SSE2) is a word.
    # A value's token ends before a closing `:`, `.` or `,`.
    c = re.sub(r"(?<![\w.:#-])(?![A-Z][A-Z_]*\d[A-Z0-9_]*\b)[\w.:#-]*\d(?:[\w.:#-]*[\w#-])?", V, c)
    c = re.sub(r"\b%s(?:\.monitor)?\b" % PA_NAMES, V, c)
    # Numbers padded to a width (`/  90%` and `/ 115%`) are one format.
    return re.sub(r"(?<=\S)  +", " ", c)


PULSEAUDIO = System(
    r"^\( *[\d.]+\| *[\d.]+\) [DIWEN]: \[[^\]]*\] [\w-]+\.c: (?P<content>.*)$",
    # Two threads' lines sometimes interleave in the file: the rest of a line that lost its
    # header.
    continuation=r"^(?!\( *[\d.]+\|)",
    rules=[(r"(?s).*", pa_shape)])



def xorg_shape(m):
    """The X server prints a few hundred different messages over a few starts, so one rule,
    as for Kafka: the event is the message's shape. A mode's line (`Modeline "..."x60.0 ...`
    with its flags and type letters) is one event, and so is a mode's summary whatever its
    preference mark and `(D)`/`(I)` suffix; the module, driver or extension a message names is
    a variable; otherwise quoted text (`"..."` and `` `...' ``), paths, anything holding a
    digit (so output names: `DUMMY3`) and the config's monitor name become `<*>`, other words
    stay, so a mode's rejection reason, a signal's kind and an on/off state are their own
    events."""
    c = m.group(0)
    c = re.sub(r"^(\w+\(\d+\): )?Modeline .*", r"\1Modeline <*>", c)
    c = re.sub(r"^(\w+\(\d+\): )[ *](\w+ mode \"[^\"]*\": .* Hz)(?: \([DI]\))?$", r"\1<*>\2<*>", c)
    c = re.sub(r"^(Module|Warning, couldn't open module|Falling back to old probe method for|"
               r"Matched|Initializing extension) [\w -]+?(: vendor=| as |$)",
               lambda k: "%s %s%s" % (k.group(1), V, k.group(2)), c)
    c = re.sub(r"^\w+: Driver for .*", "<*>: Driver for <*>", c)
    c = re.sub(r"^(Log file: \"[^\"]*\", Time: ).*", r"\1<*>", c)
    c = re.sub(r"\"[^\"]*\"|`[^']*'", V, c)
    c = re.sub(r"(?<!\S)\.{0,2}/\S*", V, c)
    c = re.sub(r"(?<![\w.:#+-])[\w.:#+-]*\d(?:[\w.:#+-]*[\w#+-])?", V, c)
    c = re.sub(r"\bmon\b", V, c)
    return c


XORG = System(
    # The time, and the message's type marker ((II), (EE), (**) from the config...) as its
    # level.
    r"^\[ *\d+\.\d+\] (?:\((?:II|EE|WW|DB|\*\*|==|--|\+\+|!!|NI|\?\?)\) )?(?P<content>.*)$",
    # The banner's, the font path's and a fatal error's further lines carry no time.
    continuation=r"^(?!\[ *\d+\.\d+\] )",
    rules=[(r"(?s).*", xorg_shape)])
FTP_VERBS = ("ABOR|ACCT|ALLO|APPE|CDUP|CWD|DELE|EPRT|EPSV|FEAT|HELP|LIST|MDTM|MKD|MODE|NLST|NOOP|"
             "OPTS|PASS|PASV|PORT|PWD|QUIT|REIN|REST|RETR|RMD|RNFR|RNTO|SITE|SIZE|SMNT|STAT|STOR|"
             "STOU|STRU|SYST|TYPE|USER|XCUP|XCWD|XMKD|XPWD|XRMD")


def ftp_command(m):
    """An FTP command's verb is an enumeration (as an HTTP method); SITE's sub-command and the
    mode letter of TYPE, MODE and STRU are too. An unknown verb is a variable."""
    verb, arg = m.group(1), (m.group(2) or "").strip()
    if verb not in FTP_VERBS.split("|"):
        return "FTP command: Client <*>, <*>"
    if verb == "SITE":
        return "FTP command: Client <*>, SITE %s <*>" % arg.split(" ")[0].upper()
    if verb in ("TYPE", "MODE", "STRU"):
        return "FTP command: Client <*>, %s %s" % (verb, arg)
    return "FTP command: Client <*>, %s <*>" % verb


def ftp_response(m):
    """Each reply is a string literal of vsftpd (its code with it); a reply vsftpd writes in
    pieces (STAT, FEAT, HELP) logs each piece: a literal piece is its text, a piece that is a
    value alone (a number, an address, a user name) is one event."""
    text = m.group(1)
    if re.fullmatch(r"\d+|\d+\.\d+\.\d+\.\d+|[a-z][\w.-]*", text):
        return "FTP response: Client <*>, <*>"
    text = re.sub(r'"[^"]*"', "<*>", text)
    text = re.sub(r"for \S+ \(\d+ bytes\)", "for <*> (<*> bytes)", text)
    text = re.sub(r"(?<=.{4})\d+(?:[.,]\d+)*", "<*>", text) if re.match(r"\d{3}[ -]", text) \
        else re.sub(r"\d+(?:\.\d+)*", "<*>", text)
    return "FTP response: Client <*>, " + text


VSFTPD_USER = r"(?:\[[^\]]*\] )?"
VSFTPD = System(
    # vsftpd_log_file's own format: the time (ctime), `[pid N]`; then the session's user in
    # brackets once known (a variable: the same message with and without it is one event).
    r"^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4} \[pid \d+\] (?P<content>.*)$",
    rules=[
        (VSFTPD_USER + r'CONNECT: Client "[^"]*"', "CONNECT: Client <*>"),
        (VSFTPD_USER + r'CONNECT: Client "[^"]*", "(.*)"',
         lambda m: "CONNECT: Client <*>, " + m.group(1)),
        # A logged action: its outcome and kind are the event; the file, sizes, rate and an
        # anonymous login's password are variables or optional parts.
        (VSFTPD_USER + r'(OK|FAIL) (LOGIN|UPLOAD|DOWNLOAD|MKDIR|RMDIR|DELETE|RENAME|CHMOD): '
         r'Client "[^"]*"(?:, .*)?', lambda m: "%s %s: Client <*>, <*>" % (m.group(1), m.group(2))),
        (VSFTPD_USER + r'FTP command: Client "[^"]*", "(\S*)( .*)?"', ftp_command),
        (VSFTPD_USER + r'FTP response: Client "[^"]*", "(.*)"', ftp_response),
    ])


def caddy_shape(text):
    """An error's or message's text without its values: ids, quoted text, addresses, paths,
    hex and numbers become `<*>`; an HTTP status written in the text stays."""
    t = re.sub(r"\{id=\w+\}", V, text)
    t = re.sub(r'"[^"]*"', V, t)
    t = re.sub(r"\b(?:\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]*\]|localhost)(?::\d+)?(?:->\S+:\d+)?", V, t)
    t = re.sub(r"(?:unix)?/[\w./-]+", V, t)
    t = re.sub(r"\b0x[0-9a-f]+\b", V, t)
    t = re.sub(r"\b(?=[0-9a-f-]*\d)[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", V, t)
    t = re.sub(r"(?<!HTTP )\b\d+(?:\.\d+)?\b", V, t)
    return t


class CaddySystem(System):
    """Caddy's zap JSON lines: `level`, `ts` and `logger` are header, the message is the rest
    of the object. One event per `msg` text (an error log's `msg` is the error's text, a format
    string of its own: its shape is the event); an HTTP request's method (top level or in the
    logged `request`), a response status, an emitted `event`'s `name` and an `error` field's
    kind are enumerations, each value its own event; other fields are variables."""

    def content(self, line):
        m = re.match(r'^\{"level":"\w+","ts":[\d.e+]+,(?:"logger":"[^"]*",)?(?P<content>.*)$',
                     line)
        if m:
            return "{" + m.group("content"), None
        raise ValueError("no header: %r" % line)

    def label(self, content, field=None):
        import json
        d = json.loads(content)
        parts = ["msg=" + caddy_shape(d["msg"])]
        method = d.get("method") or (d.get("request") or {}).get("method")
        if method:
            parts.append("method=" + method)
        for k in ("status", "status_code"):
            if k in d:
                parts.append("%s=%s" % (k, d[k]))
        if d["msg"] == "event":
            parts.append("name=" + d["name"])
        if "error" in d:
            parts.append("error=" + caddy_shape(str(d["error"])))
        return " ".join(parts)


CADDY = CaddySystem(r"^$", rules=[])


# Varnish's records whose value is an enumeration (a method, a status, a VCL subroutine or
# its return, a reason phrase, a close reason): each value is its own event.
VARNISH_ENUM_TAGS = ("ReqMethod|BereqMethod|RespStatus|BerespStatus|RespReason|BerespReason|"
                     "VCL_call|VCL_return")
# Records of one format string whose whole value is variables (a header line, a URL, byte
# counts, addresses, ids): one event per tag.
VARNISH_VALUE_TAGS = ("ReqHeader|RespHeader|BereqHeader|BerespHeader|ReqUnset|RespUnset|"
                      "BereqUnset|BerespUnset|ReqURL|BereqURL|ReqProtocol|RespProtocol|"
                      "BereqProtocol|BerespProtocol|ReqAcct|BereqAcct|PipeAcct|ReqStart|"
                      "SessOpen|Length|Hit|HitMiss|HitPass|VCL_use|ExpBan|HttpGarbage|Filters|"
                      "End|BogoHeader|LostHeader|ObjHeader|ObjProtocol|ObjStatus|ObjReason")
VARNISH = System(
    # varnishlog's default output (grouped by vxid): a transaction's `*   << Request  >> N`
    # line, then `-   Tag  value` per record; the leading `*`/`-` column is header.
    r"^(?:\*|-+) +(?P<content>.*)$",
    rules=[
        (r"<< (\w+) +>> \d+", lambda m: "<< %s >> <*>" % m.group(1)),
        (r"(%s) +(.*)" % VARNISH_ENUM_TAGS, lambda m: "%s %s" % (m.group(1), m.group(2))),
        (r"(%s)(?: .*)?" % VARNISH_VALUE_TAGS, lambda m: m.group(1) + " <*>"),
        # A timestamp's label is a string literal of each call (Start, Req, Fetch, ...).
        (r"Timestamp +(\w+): [\d.]+ [\d.]+ [\d.]+", lambda m: "Timestamp %s: <*> <*> <*>" % m.group(1)),
        # A transaction's type and reason (`req 5 rxreq`, `bereq 7 pass`) are enumerations.
        (r"(Begin|Link) +(\w+) \d+ (\S+)", lambda m: "%s %s <*> %s" % m.groups()),
        (r"SessClose +(\w+) [\d.]+", lambda m: "SessClose %s <*>" % m.group(1)),
        (r"TTL +(VCL|RFC) [-\d. ]+ (cacheable|uncacheable)",
         lambda m: "TTL %s <*> %s" % (m.group(1), m.group(2))),
        (r"Storage +(\w+) \S+", lambda m: "Storage %s <*>" % m.group(1)),
        (r"Fetch_Body +\d+ (\S+) (\S+)", lambda m: "Fetch_Body <*> %s %s" % m.groups()),
        (r"BackendOpen +\d+ \S+ \S+ \d+ \S+ \d+ (connect|reuse)",
         lambda m: "BackendOpen <*> <*> <*> <*> <*> <*> " + m.group(1)),
        (r"BackendClose +\d+ \S+ (\w+)(?: (.*))?",
         lambda m: "BackendClose <*> <*> %s %s" % (m.group(1), m.group(2) or "")),
        (r"FetchError +backend \S+: unhealthy", "FetchError backend <*>: unhealthy"),
        (r"FetchError +backend \S+: fail errno \d+ \((.*)\)",
         lambda m: "FetchError backend <*>: fail errno <*> (%s)" % m.group(1)),
        (r"FetchError +([A-Za-z ]+)", lambda m: "FetchError " + m.group(1)),
        (r"VCL_Log +\w+ recv \S+", "VCL_Log <*> recv <*>"),
    ])


# RabbitMQ 3.10's own log file (`time [level] <pid> message`; the level and the Erlang pid are
# header; a message of several lines repeats the header on each, so each line is labelled by its
# own text). The broker prints a few hundred different messages over a few starts, so, as for
# Kafka, the event is the message's shape: a connection's description `(client -> server - name`
# (the client-provided name optional), Erlang pids, quoted text ('...', "...", `...`), paths,
# node names (`name@host`) and anything holding a digit become `<*>`, and a run of variables
# separated by commas is one. Other words stay: an AMQP method (`basic.publish`), an exception
# and its error code (`not_found`, `precondition_failed`), a connection's state, the keys a
# connection's description prints (`vhost:`, `user:`: each set its own format string), a queue
# type, a feature flag's state letter (`[x]`, `[ ]`, `[~]`), an alarm and a STOMP error frame's
# message are part of the event. Format strings whose argument is a bare name (a boot step and
# its application, a feature flag, a Ra system or server, a Mnesia table, a peer discovery
# backend, a plugin or application in a list, a vhost, user tags, an index module) take it as
# `<*>`; a STOMP error frame's `Detail:` is its text's shape. An Erlang supervisor report is one
# event per key (`supervisor:`, `errorContext:`, `reason:`, `offender:`), and the further rows
# of the term it prints one event.
RMQ_CONN = r"\(\d+\.\d+\.\d+\.\d+:\d+ -> \d+\.\d+\.\d+\.\d+:\d+(?: - [^,)]*)?"
RMQ_FORMATS = [(re.compile(r), t) for r, t in [
    (r"Running boot step \S+ defined by app \S+", "Running boot step <*> defined by app <*>"),
    (r"Feature flags:   \[(.)\] \S+", lambda m: "Feature flags:   [%s] <*>" % m.group(1)),
    (r"Feature flag `[^`]*`:( +)migrating Mnesia table \S+", "Feature flag <*>: migrating Mnesia table <*>"),
    (r"Creating table \S+ for feature flag `[^`]*`", "Creating table <*> for feature flag <*>"),
    # an Erlang supervisor report: one event per key; the offender's further rows are rows of
    # one printed term
    (r" {4}(supervisor|errorContext|reason|offender): .*", lambda m: "%s: <*>" % m.group(1)),
    (r" {5,}[\[{<].*", "{<*>}"),
    (r"Feature flags:( +)- list of previously disabled feature flags now marked as such: \[.*\]",
     "Feature flags: - list of previously disabled feature flags now marked as such: <*>"),
    # a list's row: a plugin started (` * name`), an application stopped or left running
    (r" \* [\w-]+", " * <*>"),
    (r" {2,}[\w-]+", "<*>"),
    # the banner's rows `key : value` and the log files' further rows
    (r" (node|home dir|database dir|config file\(s\)|log\(s\)|cookie hash)( +): .*",
     lambda m: " %s : <*>" % m.group(1)),
    (r" +: .*", " : <*>"),
    (r"Starting [a-z_]+", "Starting <*>"),
    (r"Application \S+ exited with reason: (.*)", lambda m: "Application <*> exited with reason: " + rmq_shape(m.group(1))),
    (r"ra: starting system \S+", "ra: starting system <*>"),
    (r"starting Ra system: \S+ in directory: \S+", "starting Ra system: <*> in directory: <*>"),
    (r"ra: meta data store initialised for system \S+\. \d+ record\(s\) recovered",
     "ra: meta data store initialised for system <*>. <*> record(s) recovered"),
    (r"ra: started cluster \S+ with \d+ servers", "ra: started cluster <*> with <*> servers"),
    (r"WAL: \S+ init, open tbls: \S+, closed tbls: \S+", "WAL: <*> init, open tbls: <*>, closed tbls: <*>"),
    (r"Leader: \{.*\}", "Leader: <*>"),
    (r"(?:queue '[^']*' in vhost '[^']*'|[\w.]+): (\w+ -> \w+ in term: .*)",
     lambda m: "<*>: " + rmq_shape(m.group(1))),
    (r"rabbit_stream_coordinator: (.*)", lambda m: "<*>: " + rmq_shape(m.group(1))),
    (r"Setting up a table for (.*) on this node: \S+", lambda m: "Setting up a table for %s on this node: <*>" % m.group(1)),
    (r"Message store (\"[^\"]*\"): using \S+ to provide index", "Message store <*>: using <*> to provide index"),
    (r"Priority queues enabled, real BQ is \S+", "Priority queues enabled, real BQ is <*>"),
    (r"(.*)peer discovery backend:? rabbit_peer_discovery_\w+(.*)",
     lambda m: rmq_shape(m.group(1)) + "peer discovery backend <*>" + rmq_shape(m.group(2))),
    (r"Peer discovery backend \S+ (.*)", lambda m: "Peer discovery backend <*> " + m.group(1)),
    (r"vhost \S+ not found", "vhost <*> not found"),
    (r"Adding vhost '[^']*' \(description: '[^']*', tags: \S+\)", "Adding vhost <*> (description: <*>, tags: <*>)"),
    (r"Successfully set user tags for user '[^']*' to \[.*\]", "Successfully set user tags for user <*> to <*>"),
    (r"Message: \"(.*)\"", lambda m: "Message: " + m.group(1)),
    (r"Message: (\w+)", lambda m: "Message: " + m.group(1)),
    (r"Detail: \"(.*)\"", lambda m: "Detail: " + rmq_shape(m.group(1).replace('\\"', ""))),
]]


def rmq_shape(s):
    s = re.sub(RMQ_CONN, "(<*>", s)
    s = re.sub(r"<\d+\.\d+\.\d+>", V, s)
    s = re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`", V, s)
    s = re.sub(r"[\w.-]+@[\w.-]+", V, s)
    s = re.sub(r"(?<![\w<])/[\w./@-]*", V, s)
    s = re.sub(r"[\w.\-:@$]*\d[\w.\-:@$]*", V, s)
    s = re.sub(r"(?:[\w.\-:@$/]*<\*>)+(?:[\w.\-:@$/]*[\w.\-@$/])?", V, s)
    s = re.sub(r"<\*>(?:, ?<\*>)+", V, s)
    return s


def rmq_event(m):
    text = m.group(0)
    for regex, template in RMQ_FORMATS:
        f = regex.fullmatch(text)
        if f:
            return template(f) if callable(template) else template
    return rmq_shape(text)


RABBITMQ = System(
    r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+\+\d\d:\d\d \[\w+\] <\d+\.\d+\.\d+> ?(?P<content>.*)$",
    rules=[(r"(?s).*", rmq_event)])


# VLC 3.0 as `cvlc -vvv` (its messages on stderr, a desktop media player's log): the header is
# `[object address] ` (with the `[name] ` of an interface's object), the module, the object's
# type and the level (none for information); a message of several lines continues without a
# header (an HTTP request's and response's lines), and the libraries VLC loads write their own
# lines to the same stderr (ALSA's, libavcodec's `[codec @ 0x...]`, libdvdread's notice box).
# VLC prints several hundred different messages in a few dozen runs, so, as for Kafka, the event
# is the message's shape: quoted text ('...', "...", `...'), URIs, paths, file names, hex and
# anything holding a digit become `<*>` (an HTTP status stays), and a run of variables
# separated by commas is one; other words stay, so an error's text, a codec's or format's
# kind in words, an ES category and a state are part of the event. The core's format strings
# whose argument is a bare name take it as `<*>`: a module capability looked for, used or not
# matched (`looking for demux module matching "any": 50 candidates`), a playlist item, a config
# option set, a codec or fourcc named in a transcoding step or printed as a name (a fourcc, a
# sample format), a host resolved, a CPU's capabilities and the build's configure line (and
# the unresolvable host the driver named); an MP4 box of the demuxer's tree is one event
# whatever its depth and type. Header-less lines: an HTTP request line is its method, a status
# line its status and reason, a header row one event; a library's line is its text's shape.
VLC_FORMATS = [(re.compile(r), t) for r, t in [
    (r"looking for (.+?) module matching \"(.*)\": \d+ candidates",
     "looking for <*> module matching <*>: <*> candidates"),
    (r"using (.+?) module \"(.*)\"", "using <*> module <*>"),
    (r"no (.+?) modules? matched", "no <*> modules matched"),
    (r"no (.+?) module matching \"(.*)\" could be loaded", "no <*> module matching <*> could be loaded"),
    (r"set config option: \S+ to .*", "set config option: <*> to <*>"),
    (r"resyncing on .*", "resyncing on <*>"),
    (r".* is at -?\d+", "<*> is at <*>"),
    (r"processing request item: (.*), node: (.*), skip: -?\d+",
     "processing request item: <*>, node: <*>, skip: <*>"),
    (r"forced subtitle: .*", "forced subtitle: <*>"),
    (r"CPU has capabilities .*", "CPU has capabilities <*>"),
    (r"configured with .*", "configured with <*>"),
    (r"using cpu capabilities: .*", "using cpu capabilities: <*>"),
    # `%s+ %4.4s size %lu offset %lu%s`: the depth, the type and an unknown box's ` (????)`
    (r"[| ]*\+ .{4} size \d+ offset \d+(?: \(\?\?\?\?\))?", "+ <*> size <*> offset <*>"),
    # `Creating an input for %s'%s'`: an optional `preparsing ` and the item's name
    (r"Creating an input for (?:preparsing )?'.*'", "Creating an input for <*>"),
    # `destroying chain... (name=%s)`: a stream output module's name
    (r"destroying chain\.\.\. \(name=.*\)", "destroying chain... (name=<*>)"),
    (r"found (.+) audio format", "found <*> audio format"),
    (r"found encoder (.+)", "found encoder <*>"),
    (r"detected format \S+", "detected format <*>"),
    (r"(Checking (?:video )?codec mapping for) \S+ got \S+", lambda m: m.group(1) + " <*> got <*>"),
    (r"codec (audio|video)=\S+ (.*)", lambda m: "codec %s=<*> %s" % (m.group(1), vlc_shape(m.group(2)))),
    (r"(Trying to find more suitable sample format instead of) \S+", lambda m: m.group(1) + " <*>"),
    (r"resolving \S+ \.\.\.", "resolving <*> ..."),
    (r"cannot resolve \S+: (.*)", lambda m: "cannot resolve <*>: " + m.group(1)),
    (r"(.*) language \w+", lambda m: vlc_shape(m.group(1)) + " language <*>"),
    # a fourcc or sample format's name printed by `%4.4s` or `%s`
    (r"(format: .*, fourcc:) \w+(, .*)", lambda m: vlc_shape(m.group(1)) + " <*>" + vlc_shape(m.group(2))),
    (r"creating header for \S+", "creating header for <*>"),
    (r"(Trying to find packet sample format instead of planar) \S+", lambda m: m.group(1) + " <*>"),
    (r"Ended up using \S+ as sample format", "Ended up using <*> as sample format"),
    (r"\S+->\S+, bits per sample: \d+->\d+", "<*>-><*>, bits per sample: <*>-><*>"),
    (r"\S+->\S+, bits per sample: \d+", "<*>-><*>, bits per sample: <*>"),
    (r"detected \S+ format", "detected <*> format"),
]]
VLC_FILES = r"\b[\w.-]+\.(?:wav|ogg|mp3|mp4|png|ts|srt|m3u|xspf|flac|avi|luac|lua|dat|IFO|json|html|xml)\b"
VLC_CHANNELS = r"\b(?:Stereo|Mono|Dual-mono|Left|Right)\b"


def vlc_shape(s):
    s = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`']*['`]", V, s)
    s = re.sub(r"\b[a-z][\w+./-]*://\S*", V, s)
    s = re.sub(r"(?<![\w<])/[\w./@%+-]*", V, s)
    s = re.sub(VLC_FILES, V, s)
    s = re.sub(r"\bmedia\.invalid\b", V, s)
    s = re.sub(VLC_CHANNELS, V, s)
    s = re.sub(r"\b0x[0-9a-f]+\b", V, s)
    statuses = re.findall(r"\bHTTP(?:/\d\.\d)? (?:answer code )?(\d{3})\b", s)  # an HTTP status stays
    s = re.sub(r"\b(HTTP(?:/\d\.\d)? (?:answer code )?)\d{3}\b", "\\1\x01", s)
    s = re.sub(r"[\w.\-:@$]*\d[\w.\-:@$%]*", V, s)
    for status in statuses:
        s = s.replace("\x01", status, 1)
    s = re.sub(r"(?:[\w.\-:@$/]*<\*>)+(?:[\w.\-:@$/]*[\w.\-@$/])?", V, s)
    s = re.sub(r"<\*>(?:, ?<\*>)+", V, s)
    s = re.sub(r" {2,}(?=<\*>)", " ", s)  # a number's field width (`format:  8000 rate`)
    return s


def vlc_event(m):
    text = m.group(0)
    for regex, template in VLC_FORMATS:
        f = regex.fullmatch(text)
        if f:
            return template(f) if callable(template) else template
    return vlc_shape(text)


def vlc_other(m):
    """A line without VLC's header: an HTTP message's line, or a library's own."""
    text = m.group(0)
    r = re.fullmatch(r"([A-Z]+) \S+ HTTP/\d\.\d", text)
    if r:
        return "%s <*> HTTP/<*>" % r.group(1)
    r = re.fullmatch(r"HTTP/\d\.\d (\d{3}) (.*)", text)
    if r:
        return "HTTP/<*> %s %s" % r.groups()
    if re.fullmatch(r"[A-Z][\w-]*: .*", text):
        return "<*>: <*>"
    r = re.fullmatch(r"\[[\w,]+ @ 0x[0-9a-f]+\] (.*)", text)
    if r:
        return "[<*> @ <*>] " + vlc_shape(r.group(1))
    return vlc_shape(text)


class VlcLog(System):
    def content(self, line):
        m = re.match(r"^\[[0-9a-f]{16}\] (?:\[\w+\] )?\S+ [a-z][a-z_ ]*?(?: (?:debug|warning|error))?: "
                     r"(?P<content>.*)$", line)
        if m:
            return m.group("content"), None
        return line.strip(), "no header"

    def label(self, content, field=None):
        m = re.fullmatch(r"(?s).*", content.rstrip())
        return vlc_other(m) if field == "no header" else vlc_event(m)


VLC = VlcLog(r"^$", rules=[])


# Apache ZooKeeper 3.8 through Debian's log4j layout (`%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n`):
# the header is the time, the level and `[thread:Class@line]` (a thread's name holds brackets:
# `QuorumPeer[myid=1](plain=...)`). About two hundred messages over a few starts and elections,
# so, as for Kafka, the event is the message's shape: session ids and other hex, addresses,
# paths, file names and anything holding a digit become `<*>`, and a run of variables separated
# by commas is one; other words stay, so a peer's and a notification's states (`my
# state:LOOKING`, `n.state:FOLLOWING`, `following - broadcast`), a four-letter word processed,
# an authentication scheme and an error's text are part of the event. The server environment
# dump (`Server environment:key=value`) is one event, one format string for every row, and so
# are the lists of four-letter words (one each), the purge task's `Removing file:` rows and a
# system property printed with its value through one of the format strings that take both
# (`{} = {}`, `{} = {} ms`, `{}={}`, `{} : {}`: one event each). A multi-line message's further lines carry no header: an
# exception's line is its type with its message's shape (`Caused by: ` its own), a stack frame
# `at ...` one event, `... N more` another, the banner's rows one event per text.
ZK_FORMATS = [(re.compile(r), t) for r, t in [
    (r"(Server|Client) environment:[\w.]+=.*", lambda m: "%s environment:<*>=<*>" % m.group(1)),
    (r"(The list of (?:known|enabled) four letter word commands is :) .*", lambda m: m.group(1) + " <*>"),
    # the purge task's row: a file's time and path
    (r"Removing file: .*", "Removing file: <*>"),
    # a system property and its value, printed through `{} = {}`, `{} = {} ms`, `{} = {}ms`,
    # `{}={}` or `{} : {}` (the key is an argument, as in a settings dump)
    (r"zookeeper\.[\w.]+( = |=| : )(?:-?\d+(ms| ms)|.*)",
     lambda m: "<*>%s<*>%s" % (m.group(1), m.group(2) or "")),
]]


def zk_shape(s):
    s = re.sub(r"'[^']*'|\"[^\"]*\"", V, s)
    s = re.sub(r"\b0x[0-9a-f]+\b", V, s)
    s = re.sub(r"(?<![\w<])/[\w./@:%-]*", V, s)
    s = re.sub(r"[\w.\-:@$]*\d[\w.\-:@$]*", V, s)
    s = re.sub(r"(?:[\w.\-:@$/]*<\*>)+(?:[\w.\-:@$/]*[\w.\-@$/])?", V, s)
    s = re.sub(r"<\*>(?:, ?<\*>)+", V, s)
    return s


class ZooKeeperLog(System):
    def content(self, line):
        m = re.match(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - [A-Z]+ +\[.*?:[\w$]+@\d+\] - "
                     r"(?P<content>.*)$", line)
        if m:
            return m.group("content"), None
        return line.strip(), "no header"

    def label(self, content, field=None):
        text = content.rstrip()
        if field == "no header":
            if re.fullmatch(r"at \S+(?: Method\))?", text):  # `(Native Method)` as the file
                return "at <*>"
            if re.fullmatch(r"\.\.\. \d+ more", text):
                return "... <*> more"
            m = re.fullmatch(r"(Caused by: )?([\w.$]*(?:Exception|Error|Throwable))(?:: (.*))?", text)
            if m:
                return (m.group(1) or "") + m.group(2) + (": " + zk_shape(m.group(3)) if m.group(3) is not None else "")
            return zk_shape(text)
        for regex, template in ZK_FORMATS:
            m = regex.fullmatch(text)
            if m:
                return template(m) if callable(template) else template
        return zk_shape(text)


ZOOKEEPER = ZooKeeperLog(r"^$", rules=[])


SYSTEMS = {
    "PostgreSQL": POSTGRES,
    "Nginx": NGINX,
    "NginxError": NGINX_ERROR,
    "Redis": REDIS,
    "Dnsmasq": DNSMASQ,
    "Sshd": SSHD,
    "Dpkg": DPKG,
    "PyApp": PYAPP,
    "ApacheError": APACHE,
    # Apache's `combined` access log has nginx's layout: the same rules.
    "ApacheAccess": NGINX,
    "MariaDBError": MARIADB_ERROR,
    "MariaDBGeneral": MARIADB_GENERAL,
    "ClickHouse": CLICKHOUSE,
    "Kafka": KAFKA,
    "Chromium": CHROMIUM,
    "Postfix": POSTFIX,
    "Squid": SQUID,
    "Tomcat": TOMCAT,
    "HAProxy": HAPROXY,
    "Bind9": BIND9,
    "Prometheus": PROMETHEUS,
    "Placement": PLACEMENT,
    "DebianSyslog": DEBIAN_SYSLOG,
    "Samba": SAMBA,
    "Cups": CUPS,
    "Mosquitto": MOSQUITTO,
    "Unbound": UNBOUND,
    "Etcd": ETCD,
    "Kernel": KERNEL,
    "Kea": KEA,
    "OpenVPN": OPENVPN,
    "DBus": DBUS,
    "Slapd": SLAPD,
    "Dovecot": DOVECOT,
    "Lighttpd": LIGHTTPD,
    "Fail2ban": FAIL2BAN,
    "PulseAudio": PULSEAUDIO,
    "Xorg": XORG,
    "Vsftpd": VSFTPD,
    "Caddy": CADDY,
    "Varnish": VARNISH,
    "RabbitMQ": RABBITMQ,
    "VLC": VLC,
    "ZooKeeper": ZOOKEEPER,
}


def label_lines(system, lines):
    if hasattr(system, "prepare"):
        system.prepare(lines)
    contents, templates, errors = [], [], []
    for i, line in enumerate(lines, 1):
        try:
            c, field = system.content(line)
            contents.append(c)
            templates.append(system.label(c, field))
        except ValueError as e:
            errors.append("line %d: %s" % (i, e))
            contents.append("")
            templates.append("")
    return contents, templates, errors


def csv_text(contents, templates):
    """The labelled csv's text and its number of events."""
    ids = {}
    for t in templates:
        ids.setdefault(t, "E%d" % (len(ids) + 1))
    out = io.StringIO(newline="")
    w = csv.writer(out)
    w.writerow(["LineId", "Content", "EventId", "EventTemplate"])
    for i, (c, t) in enumerate(zip(contents, templates), 1):
        w.writerow([i, c, ids[t], t])
    return out.getvalue(), len(ids)


def write_csv(path, contents, templates):
    text, events = csv_text(contents, templates)
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.write(text)
    return events


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [l.rstrip("\n").replace("\r", "") for l in f]


def thin(templates, limit, seed):
    """Indices of at most `limit` lines, in order: the most frequent events are capped first
    (every event keeps min(count, cap) lines, cap the largest that fits), the rest sampled."""
    if len(templates) <= limit:
        return list(range(len(templates)))
    counts = collections.Counter(templates)
    lo, hi = 1, max(counts.values())
    while lo < hi:
        cap = (lo + hi + 1) // 2
        if sum(min(c, cap) for c in counts.values()) <= limit:
            lo = cap
        else:
            hi = cap - 1
    cap = lo
    rng = random.Random(seed)
    by_event = collections.defaultdict(list)
    for i, t in enumerate(templates):
        by_event[t].append(i)
    keep = []
    for t, idx in by_event.items():
        keep.extend(idx if len(idx) <= cap else rng.sample(idx, cap))
    spare = limit - len(keep)
    rest = sorted(set(range(len(templates))) - set(keep))
    keep.extend(rng.sample(rest, min(spare, len(rest))))
    return sorted(keep)


def main(argv):
    if len(argv) >= 3 and argv[0] == "sample":
        raw_dir, out_dir = argv[1], argv[2]
        names = argv[3:] or list(SYSTEMS)
        for name in names:
            raw = os.path.join(raw_dir, name, name + "_raw.log")
            if not os.path.isfile(raw):
                print("%s: no %s" % (name, raw))
                continue
            lines = [l for l in read_lines(raw) if l.strip()]
            contents, templates, errors = label_lines(SYSTEMS[name], lines)
            if errors:
                print("%s: %d unlabelled lines\n  %s" % (name, len(errors), "\n  ".join(errors[:20])))
                return 1
            keep = thin(templates, LIMIT, seed=14)
            os.makedirs(os.path.join(out_dir, name), exist_ok=True)
            with open(os.path.join(out_dir, name, name + "_2k.log"), "w", encoding="utf-8") as f:
                f.write("".join(lines[i] + "\n" for i in keep))
        argv = ["label", out_dir]
    if argv and argv[0] == "check":
        # The committed labels must be what the rules give: a rule edited for one system must
        # not silently relabel another.
        root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
        differ, checked = [], 0
        for name, system in SYSTEMS.items():
            log = os.path.join(root, name, name + "_2k.log")
            if not os.path.isfile(log):
                continue
            checked += 1
            contents, templates, errors = label_lines(system, read_lines(log))
            with open(log + "_structured_corrected.csv", newline="", encoding="utf-8") as f:
                committed = f.read()
            if errors or csv_text(contents, templates)[0] != committed:
                differ.append(name)
        print("labels differ from the rules: " + ", ".join(differ) if differ
              else "%d systems: every committed label is what label.py gives" % checked)
        return 1 if differ else 0
    if argv and argv[0] == "label":
        root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
        status = 0
        for name, system in SYSTEMS.items():
            log = os.path.join(root, name, name + "_2k.log")
            if not os.path.isfile(log):
                continue
            lines = read_lines(log)
            contents, templates, errors = label_lines(system, lines)
            if errors:
                print("%s: %d unlabelled lines\n  %s" % (name, len(errors), "\n  ".join(errors[:20])))
                status = 1
                continue
            others = sum(1 for t in templates if t.startswith("OTHER "))
            events = write_csv(log + "_structured_corrected.csv", contents, templates)
            print("%-12s %5d lines %4d events%s" % (name, len(lines), events,
                                                  " (%d OTHER)" % others if others else ""))
        return status
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
