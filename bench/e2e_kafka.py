"""bench/e2e.py part `kafka`: one logfold instance consuming a pre-filled topic from a local
single-node broker, next to kcat merely reading the same topic to /dev/null, in the same run.

The broker is Apache Kafka from the jars scripts/kafka-fixture caches (KRaft, one node, free
loopback ports, its own data dir); the topic (4 partitions, records keyed by the line's
host field, no compression) is filled once with the corpus by kcat -P. Each run then reads all
of it, alternating kcat and logfold:

  kcat     kcat -C -o beginning -e -q -f '%s\\n' > /dev/null: wall from spawn to exit, CPU of
           the process (children's rusage).
  logfold  a kafka input (a new consumer group each run, auto.offset.reset=earliest), the
           default engine and workers, events to a file: wall from the first line received
           (the group join before it is not consuming) until every line was processed and the
           output holds no unwritten byte; CPU of the process over the same span. Accounting
           (first events + summary counts after SIGTERM) must equal the corpus.
  base     with --kafka-base BINARY: the same as logfold with that binary, run between kcat
           and logfold in each round, so that before and after are measured on the same load
           (and in exactly-once mode after logfold's exactly-once run).
  eos      the same input in exactly-once mode (exactly_once, commit_interval 1s, a new
           changelog topic and events topic each run, events to that topic in transactions):
           wall from the first line received until every line was received and a transaction
           committed after that; CPU of the process over the same span. Accounting: the
           committed events (kcat, isolation.level=read_committed) after SIGTERM. Its ratio to
           the at-least-once run of the same round is the exactly-once overhead.
"""
import ctypes
import json
import os
import resource
import shutil
import subprocess
import time
import uuid

KAFKA_JARS = os.environ.get("LOGFOLD_KAFKA_JARS",
                            os.path.expanduser("~/.cache/logfold/kafka-broker"))
PARTITIONS = 4


class Broker:
    """A single-node KRaft broker on free loopback ports, stopped by stop()."""

    def __init__(self, e2e, workdir):
        if not os.path.exists(os.path.join(KAFKA_JARS, "VERSION")):
            raise RuntimeError("Kafka broker jars missing: run scripts/kafka-fixture")
        self.root = os.path.join(workdir, "kafka")
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(os.path.join(self.root, "data"))
        self.port, controller = e2e.free_port(), e2e.free_port()
        props = os.path.join(self.root, "server.properties")
        with open(props, "w") as f:
            f.write("\n".join([
                "process.roles=broker,controller", "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:%d" % controller,
                "listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (
                    self.port, controller),
                "advertised.listeners=PLAINTEXT://127.0.0.1:%d" % self.port,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT",
                "log.dirs=" + os.path.join(self.root, "data"),
                # kcat -P creates the topic on its first record.
                "num.partitions=%d" % PARTITIONS, "auto.create.topics.enable=true",
                "offsets.topic.replication.factor=1", "offsets.topic.num.partitions=1",
                "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
                "group.initial.rebalance.delay.ms=0", ""]))
        with open(os.path.join(self.root, "log4j.properties"), "w") as f:
            f.write("log4j.rootLogger=WARN, stderr\n"
                    "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
                    "log4j.appender.stderr.Target=System.err\n"
                    "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
                    "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n")
        java = ["java", "-Xms256m", "-Xmx1g", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
                "-Dlog4j.configuration=file:" + os.path.join(self.root, "log4j.properties"),
                "-cp", KAFKA_JARS + "/*"]
        cluster = uuid.uuid4().bytes
        import base64
        cluster_id = base64.urlsafe_b64encode(cluster).decode().rstrip("=")
        subprocess.run(java + ["kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", props],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.log = open(os.path.join(self.root, "broker.log"), "w")
        self.proc = subprocess.Popen(java + ["kafka.Kafka", props], stdout=self.log,
                                     stderr=self.log)
        e2e.wait_for(lambda: self.check_alive() or subprocess.run(
            ["kcat", "-b", self.brokers, "-L", "-m", "2"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL).returncode == 0, 120, "the Kafka broker", interval=0.5)

    @property
    def brokers(self):
        return "127.0.0.1:%d" % self.port

    def check_alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError("the Kafka broker exited: see %s" % self.log.name)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def fill_topic(broker, corpus, workdir):
    """Produces every corpus line, keyed by its host field (as omkafka keyed by host would)."""
    keyed = os.path.join(workdir, "kafka-keyed.txt")
    with open(corpus, "rb") as src, open(keyed, "wb") as out:
        for line in src:
            fields = line.split(b" ", 4)
            host = fields[2] if line.startswith(b"<") and len(fields) > 3 else b"-"
            out.write(host.replace(b"\t", b" ") + b"\t" + line)
    subprocess.run(["kcat", "-P", "-b", broker.brokers, "-t", "bench", "-K", "\t",
                    "-X", "linger.ms=50", "-X", "batch.num.messages=10000", "-l", keyed],
                   check=True)
    os.unlink(keyed)


def kcat_read(broker, lines):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        proc = subprocess.run(["kcat", "-C", "-b", broker.brokers, "-t", "bench", "-o",
                               "beginning", "-e", "-q", "-f", "%s\\n"], stdout=null, check=True)
    secs = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    del proc
    return {"lines": lines, "seconds": secs, "lines_per_s": lines / secs, "cpu_s": cpu,
            "lines_per_cpu_s": lines / max(cpu, 0.01)}


def timed_read(e2e, server, lines, done, what, accounted):
    """Times `server` from its first line received until done(metrics), then stops it; the
    row with `accounted()` (called after the stop) checked against `lines`."""
    try:
        t0 = cpu0 = None

        def started():
            nonlocal t0, cpu0
            server.check_alive()
            if server.metrics().get("logfold_received_total", 0) > 0:
                t0, cpu0 = time.monotonic(), e2e.proc_cpu_seconds(server.proc.pid)
                return True
            return False
        e2e.wait_for(started, 120, "logfold to join the group and receive", interval=0.005)

        def finished():
            server.check_alive()
            return done(server.metrics())
        e2e.wait_for(finished, 900, what)
        secs = time.monotonic() - t0
        cpu = e2e.proc_cpu_seconds(server.proc.pid) - cpu0
        usage = server.usage()
    finally:
        server.stop()
    return {"lines": lines, "seconds": secs, "lines_per_s": lines / secs, "cpu_s": cpu,
            "lines_per_cpu_s": lines / max(cpu, 0.01), "peak_rss_mib": usage["peak_rss_mib"],
            "loss": lines - accounted()}


def logfold_read(e2e, binary, broker, lines, workdir):
    group = "bench-" + uuid.uuid4().hex[:8]
    server = e2e.Logfold(binary, workdir, [{
        "name": "kafka", "type": "kafka", "brokers": broker.brokers, "topics": ["bench"],
        "group_id": group}])
    return timed_read(e2e, server, lines,
                      lambda m: (m.get("logfold_lines_processed_total", 0) >= lines
                                 and m.get("logfold_sink_buffered_bytes", 0) == 0),
                      "logfold to process every line", server.accounted)


def create_topic(broker, topic, compact):
    """Creates `topic` (PARTITIONS partitions, compacted if `compact`) through librdkafka's
    admin API (ctypes: the broker jars have no TopicCommand, Debian no Python client)."""
    lib = ctypes.CDLL("librdkafka.so.1")
    for name in ["rd_kafka_conf_new", "rd_kafka_new", "rd_kafka_NewTopic_new", "rd_kafka_queue_new",
                 "rd_kafka_queue_poll", "rd_kafka_event_CreateTopics_result",
                 "rd_kafka_CreateTopics_result_topics", "rd_kafka_topic_result_error_string"]:
        getattr(lib, name).restype = ctypes.c_void_p
    lib.rd_kafka_CreateTopics_result_topics.restype = ctypes.POINTER(ctypes.c_void_p)
    lib.rd_kafka_topic_result_error_string.restype = ctypes.c_char_p
    errstr = ctypes.create_string_buffer(512)
    size = ctypes.c_size_t(512)
    conf = ctypes.c_void_p(lib.rd_kafka_conf_new())
    lib.rd_kafka_conf_set(conf, b"bootstrap.servers", broker.brokers.encode(), errstr, size)
    rk = ctypes.c_void_p(lib.rd_kafka_new(0, conf, errstr, size))  # 0: a producer handle
    if not rk:
        raise RuntimeError("librdkafka: " + errstr.value.decode())
    new = ctypes.c_void_p(lib.rd_kafka_NewTopic_new(topic.encode(), PARTITIONS, 1, errstr, size))
    if compact:
        lib.rd_kafka_NewTopic_set_config(new, b"cleanup.policy", b"compact")
    queue = ctypes.c_void_p(lib.rd_kafka_queue_new(rk))
    lib.rd_kafka_CreateTopics(rk, (ctypes.c_void_p * 1)(new), ctypes.c_size_t(1), None, queue)
    event = ctypes.c_void_p(lib.rd_kafka_queue_poll(queue, 30000))
    error = "no answer in 30 s"
    if event:
        count = ctypes.c_size_t(0)
        results = lib.rd_kafka_CreateTopics_result_topics(
            ctypes.c_void_p(lib.rd_kafka_event_CreateTopics_result(event)), ctypes.byref(count))
        error = "no result"
        if count.value == 1:
            result = ctypes.c_void_p(results[0])
            if lib.rd_kafka_topic_result_error(result) == 0:
                error = ""
            else:
                error = (lib.rd_kafka_topic_result_error_string(result) or b"?").decode()
        lib.rd_kafka_event_destroy(event)
    lib.rd_kafka_queue_destroy(queue)
    lib.rd_kafka_NewTopic_destroy(new)
    lib.rd_kafka_destroy(rk)
    if error:
        raise RuntimeError("creating topic %s: %s" % (topic, error))


def committed_accounted(broker, topic):
    """first events + summary counts of `topic` as read_committed readers see it."""
    out = subprocess.run(["kcat", "-C", "-b", broker.brokers, "-t", topic, "-o", "beginning",
                          "-e", "-q", "-X", "isolation.level=read_committed", "-f", "%s\n"],
                         check=True, stdout=subprocess.PIPE).stdout
    firsts = counted = 0
    for line in out.splitlines():
        if b'"kind":"first"' in line:
            firsts += 1
        elif b'"kind":"summary"' in line:
            counted += int(json.loads(line)["count"])
    return firsts + counted


def logfold_eos_read(e2e, binary, broker, lines, workdir):
    run_id = uuid.uuid4().hex[:8]
    events, changelog = "events-" + run_id, "changelog-" + run_id
    create_topic(broker, events, False)
    create_topic(broker, changelog, True)
    server = e2e.Logfold(binary, workdir, [{
        "name": "kafka", "type": "kafka", "brokers": broker.brokers, "topics": ["bench"],
        "group_id": "bench-" + run_id, "exactly_once": True, "commit_interval": "1s",
        "changelog_topic": changelog, "transactional_id": "bench-" + run_id}],
        outputs=[{"name": "out", "type": "kafka", "brokers": broker.brokers, "topic": events}])
    commit = 'logfold_kafka_transactions_total{input="kafka",proto="kafka",result="commit"}'
    commits_at_end = None

    def done(m):
        nonlocal commits_at_end
        if commits_at_end is None:
            if m.get("logfold_received_total", 0) >= lines:
                commits_at_end = m.get(commit, 0)
            return False
        return m.get(commit, 0) > commits_at_end
    return timed_read(e2e, server, lines, done, "logfold to receive every line and commit",
                      lambda: committed_accounted(broker, events))


def run(e2e, a, corpus, lines, runs, workdir, raw, failures):
    if not shutil.which("kcat") or not shutil.which("java"):
        e2e.log("kafka: kcat or java missing, part skipped")
        return
    broker = Broker(e2e, workdir)
    try:
        e2e.log("kafka: filling topic bench (%d partitions) with %d lines" % (PARTITIONS, lines))
        fill_topic(broker, corpus, workdir)
        kc, base, lf, eos, eos_base = [], [], [], [], []
        for i in range(runs):
            e2e.log("kafka run %d/%d: kcat" % (i + 1, runs))
            kc.append(kcat_read(broker, lines))
            if a.kafka_base:
                e2e.log("kafka run %d/%d: logfold base (%s)" % (i + 1, runs, a.kafka_base))
                base.append(logfold_read(e2e, a.kafka_base, broker, lines, workdir))
            e2e.log("kafka run %d/%d: logfold" % (i + 1, runs))
            lf.append(logfold_read(e2e, a.logfold, broker, lines, workdir))
            e2e.log("kafka run %d/%d: logfold exactly-once" % (i + 1, runs))
            eos.append(logfold_eos_read(e2e, a.logfold, broker, lines, workdir))
            if a.kafka_base:
                e2e.log("kafka run %d/%d: logfold base exactly-once" % (i + 1, runs))
                eos_base.append(logfold_eos_read(e2e, a.kafka_base, broker, lines, workdir))
    finally:
        broker.stop()
    raw["kafka"] = {"kcat": kc, "logfold": lf, "logfold_base": base, "logfold_eos": eos,
                    "logfold_base_eos": eos_base}
    keys = ["lines_per_s", "seconds", "cpu_s", "lines_per_cpu_s"]
    readers = [("logfold", lf), ("logfold exactly-once", eos)] + (
        [("logfold base", base), ("logfold base exactly-once", eos_base)] if base else [])
    table = []
    for name, rows in readers + [("kcat -C > /dev/null", kc)]:
        s = e2e.summarize(rows, keys)
        table.append([name, e2e.fmt(s["lines_per_s"]), e2e.fmt(s["seconds"], "%.2f"),
                      e2e.fmt(s["cpu_s"], "%.2f"), e2e.fmt(s["lines_per_cpu_s"]),
                      " / ".join(str(r.get("loss", "-")) for r in rows),
                      ", ".join("%.0f" % r["lines_per_s"] for r in rows)])
    for name, rows in readers:
        ratio = e2e.median([l["lines_per_s"] / k["lines_per_s"] for l, k in zip(rows, kc)])
        cpu_ratio = e2e.median([l["lines_per_cpu_s"] / k["lines_per_cpu_s"]
                                for l, k in zip(rows, kc)])
        table.append(["**ratio %s/kcat**" % name, "**%.2f**" % ratio, "", "",
                      "**%.2f**" % cpu_ratio, "", "per run: " + ", ".join(
                          "%.2f" % (l["lines_per_s"] / k["lines_per_s"])
                          for l, k in zip(rows, kc))])
    ratio = e2e.median([e["lines_per_s"] / l["lines_per_s"] for e, l in zip(eos, lf)])
    cpu_ratio = e2e.median([e["lines_per_cpu_s"] / l["lines_per_cpu_s"] for e, l in zip(eos, lf)])
    table.append(["**ratio exactly-once/at-least-once**", "**%.2f**" % ratio, "", "",
                  "**%.2f**" % cpu_ratio, "", "per run: " + ", ".join(
                      "%.2f" % (e["lines_per_s"] / l["lines_per_s"]) for e, l in zip(eos, lf))])
    e2e.print_table("Kafka topic (%d partitions, local broker) -> %d lines read, medians of %d"
                    % (PARTITIONS, lines, runs),
                    ["reader", "lines/s", "wall s", "CPU s", "lines/CPU-s", "loss per run",
                     "lines/s per run"], table)
    for r in lf + base + eos + eos_base:
        if r["loss"] != 0:
            failures.append("kafka run lost %d lines" % r["loss"])
