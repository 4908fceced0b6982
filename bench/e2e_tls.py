"""Part `tls` of bench/e2e.py: syslog over TLS (RFC 5425, octet-counted) ingest, in one run:
logfold's tls input, logfold's plain tcp input and rsyslog's imtcp with its TLS driver (ossl,
or gtls when ossl is missing), all fed the same pre-framed corpus by the same client (Python's
ssl module over one connection, 256 KiB writes, so the client's per-call cost is negligible).
Server authentication only (no client certificates) on both TLS servers, TLS 1.3, the
certificates an EC P-256 test PKI made with the openssl CLI. The end of a run is detected as
in the tcp part; CPU is the server's utime+stime, reported per line.
"""
import os
import shutil
import socket
import ssl
import subprocess
import time

CHUNK = 256 * 1024


def make_pki(workdir):
    """A CA and a server certificate for 127.0.0.1 / localhost; returns (ca, cert, key)."""
    pki = os.path.join(workdir, "pki")
    os.makedirs(pki, exist_ok=True)
    ca, ca_key = os.path.join(pki, "ca.pem"), os.path.join(pki, "ca.key")
    cert, key = os.path.join(pki, "server.pem"), os.path.join(pki, "server.key")
    csr, ext = os.path.join(pki, "server.csr"), os.path.join(pki, "server.ext")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run = lambda argv: subprocess.run(argv, check=True, capture_output=True)
    run(["openssl", "req", "-x509"] + ec + ["-keyout", ca_key, "-out", ca, "-days", "2",
                                            "-subj", "/CN=bench CA"])
    run(["openssl", "req"] + ec + ["-keyout", key, "-out", csr, "-subj", "/CN=localhost"])
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run(["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", ext])
    return ca, cert, key


def frame(corpus):
    """The corpus as RFC 5425 frames ("LEN SP MSG"), in CHUNK-sized pieces; (chunks, lines)."""
    chunks, buf, lines = [], bytearray(), 0
    with open(corpus, "rb") as f:
        for line in f:
            msg = line.rstrip(b"\n")
            buf += b"%d " % len(msg) + msg
            lines += 1
            if len(buf) >= CHUNK:
                chunks.append(bytes(buf))
                buf.clear()
    if buf:
        chunks.append(bytes(buf))
    return chunks, lines


def send(port, chunks, lines, ca=None):
    """One connection (TLS when `ca` is given), every chunk; the clock starts before connect."""
    start = time.monotonic()
    sock = socket.create_connection(("127.0.0.1", port))
    if ca:
        context = ssl.create_default_context(cafile=ca)
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        sock = context.wrap_socket(sock, server_hostname="localhost")
    total = 0
    for c in chunks:
        sock.sendall(c)
        total += len(c)
    if ca:
        sock.settimeout(30)
        try:
            sock.unwrap()  # close_notify, so the server sees a clean end of the stream
        except (OSError, ssl.SSLError):
            pass  # the server closed without answering it: every record was written anyway
    sock.close()
    return {"lines": lines, "bytes": total, "start": start, "client_s": time.monotonic() - start}


def logfold_run(h, a, chunks, lines, workdir, pki):
    port = h.free_port()
    ca, cert, key = pki
    if ca:
        inputs = [{"name": "tls", "type": "tls", "address": "127.0.0.1", "port": port,
                   "tls": {"cert_file": cert, "key_file": key, "min_version": "1.3"}}]
    else:
        inputs = [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": port}]
    server = h.Logfold(a.logfold, workdir, inputs)
    try:
        sent = send(port, chunks, lines, ca)

        def done():
            server.check_alive()
            m = server.metrics()
            return (m.get("logfold_lines_processed_total", 0) >= sent["lines"]
                    and m.get("logfold_sink_buffered_bytes", 0) == 0)
        h.wait_for(done, 600, "logfold to process every line")
        end = time.monotonic()
        usage = server.usage()
    finally:
        server.stop()
    accounted = server.accounted()
    return result(usage, sent, end, accounted)


def result(usage, sent, end, accounted):
    secs = end - sent["start"]
    return dict(usage, lines=sent["lines"], seconds=secs, lines_per_s=sent["lines"] / secs,
                mb_per_s=sent["bytes"] / secs / 1e6, accounted=accounted,
                loss=sent["lines"] - accounted,
                cpu_us_per_line=usage["cpu_s"] / sent["lines"] * 1e6,
                lines_per_cpu_s=sent["lines"] / max(usage["cpu_s"], 0.01))


RSYSLOG_CONF = """# rsyslog side of bench/e2e.py part tls: imtcp with the {driver} TLS driver -> omfile
global(workDirectory="{work}" defaultNetstreamDriverCAFile="{ca}"
       defaultNetstreamDriverCertFile="{cert}" defaultNetstreamDriverKeyFile="{key}")
module(load="imtcp" StreamDriver.Name="{driver}" StreamDriver.Mode="1"
       StreamDriver.AuthMode="anon")
input(type="imtcp" address="127.0.0.1" port="{port}" ruleset="bench")
ruleset(name="bench") {{
  action(type="omfile" file="{out}")
}}
"""


def rsyslog_driver():
    for d in ("/usr/lib/x86_64-linux-gnu/rsyslog", "/usr/lib/rsyslog"):
        for name in ("ossl", "gtls"):
            if os.path.exists(os.path.join(d, "lmnsd_%s.so" % name)):
                return name
    return None


def start_rsyslog_tls(h, binary, workdir, pki, driver):
    """rsyslogd with a TLS imtcp, as an e2e Rsyslog (its process handling and output wait)."""
    server = h.Rsyslog.__new__(h.Rsyslog)  # its __init__ would load bench/rsyslog/<proto>.conf
    server.port = h.free_port()
    server.proto = "tcp"
    server.out = os.path.join(workdir, "rsyslog-out.log")
    work = os.path.join(workdir, "rsyslog-work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if os.path.exists(server.out):
        os.unlink(server.out)
    conf = os.path.join(workdir, "rsyslog-tls.conf")
    with open(conf, "w") as f:
        f.write(RSYSLOG_CONF.format(driver=driver, work=work, ca=pki[0], cert=pki[1], key=pki[2],
                                    port=server.port, out=server.out))
    pidfile = os.path.join(workdir, "rsyslog.pid")
    h.Server.__init__(server, [binary, "-n", "-f", conf, "-i", pidfile], workdir, "rsyslogd")
    h.wait_for(lambda: server.check_alive() or h.bound(server.port, "tcp"), 15,
               "rsyslogd's TLS input")
    return server


def rsyslog_run(h, a, chunks, lines, workdir, pki, driver):
    server = start_rsyslog_tls(h, a.rsyslogd, workdir, pki, driver)
    try:
        sent = send(server.port, chunks, lines, pki[0])
        end, got = server.wait_output(sent["lines"], sent["start"])
        usage = server.usage()
    finally:
        server.stop()
    return result(usage, sent, end, got)


def run(h, a, corpus, workdir, runs, rsyslog, raw, failures):
    """Runs the part and prints its table (h: the e2e module, for its servers and helpers)."""
    pki = make_pki(workdir)
    chunks, lines = frame(corpus)
    driver = rsyslog_driver() if rsyslog else None
    if rsyslog and not driver:
        h.log("rsyslog has no TLS driver (Debian package rsyslog-openssl): logfold only")
    cases = {"logfold tls": [], "logfold tcp (plain)": [], "rsyslog tls": []}
    for i in range(runs):
        h.log("tls run %d/%d: logfold tls" % (i + 1, runs))
        cases["logfold tls"].append(logfold_run(h, a, chunks, lines, workdir, pki))
        h.log("tls run %d/%d: logfold tcp (plain)" % (i + 1, runs))
        cases["logfold tcp (plain)"].append(
            logfold_run(h, a, chunks, lines, workdir, (None, None, None)))
        if driver:
            h.log("tls run %d/%d: rsyslog tls (%s)" % (i + 1, runs, driver))
            cases["rsyslog tls"].append(rsyslog_run(h, a, chunks, lines, workdir, pki, driver))
    raw["tls"] = dict(cases, rsyslog_driver=driver)
    keys = ["lines_per_s", "mb_per_s", "seconds", "cpu_s", "cpu_us_per_line", "peak_rss_mib"]
    table = []
    for name, rows in cases.items():
        if not rows:
            continue
        s = h.summarize(rows, keys)
        table.append([name + (" (%s)" % driver if name.startswith("rsyslog") else ""),
                      h.fmt(s["lines_per_s"]), h.fmt(s["mb_per_s"], "%.1f"),
                      h.fmt(s["seconds"], "%.2f"), h.fmt(s["cpu_s"], "%.2f"),
                      h.fmt(s["cpu_us_per_line"], "%.2f"), h.fmt(s["peak_rss_mib"], "%.1f"),
                      " / ".join(str(r["loss"]) for r in rows),
                      ", ".join("%.0f" % r["lines_per_s"] for r in rows)])
    lf, plain, rs = cases["logfold tls"], cases["logfold tcp (plain)"], cases["rsyslog tls"]
    ratio = lambda xs, ys, k: h.median([x[k] / y[k] for x, y in zip(xs, ys)])
    table.append(["**logfold tls / logfold plain**", "**%.2f**" % ratio(lf, plain, "lines_per_s"),
                  "", "", "", "%.2f" % ratio(lf, plain, "cpu_us_per_line"), "", "", ""])
    if rs:
        table.append(["**logfold tls / rsyslog tls**", "**%.2f**" % ratio(lf, rs, "lines_per_s"),
                      "", "", "", "%.2f" % ratio(lf, rs, "cpu_us_per_line"), "", "",
                      "per run: " + ", ".join("%.2f" % (x["lines_per_s"] / y["lines_per_s"])
                                              for x, y in zip(lf, rs))])
    h.print_table("TLS in (RFC 5425, octet-counted, TLS 1.3, one connection) -> file out, %d "
                  "lines, medians of %d" % (lines, runs),
                  ["server", "lines/s", "MB/s in", "wall s", "CPU s", "CPU µs/line",
                   "peak RSS MiB", "loss per run", "lines/s per run"], table)
    for name, rows in cases.items():
        for r in rows:
            if r["loss"] != 0:
                failures.append("tls: %s run lost %d lines" % (name, r["loss"]))
