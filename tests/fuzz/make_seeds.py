#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/), committed to the repo.

Sources: the examples of RFC 5424 section 6.5 and RFC 3164 section 5.4, what the real
`logger` sends (captured on a loopback socket), lines of ../shared/corpus/gen_corpus.py when
that checkout is present, and the shipped config files. Inputs whose tail carries settings
(see each *_fuzz.cc) are encoded the way libFuzzer's FuzzedDataProvider reads them back.
Run from anywhere: tests/fuzz/make_seeds.py (needs logger; rewrites the corpus directories).
"""
import hashlib
import json
import pathlib
import shutil
import socket
import subprocess
import zlib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE / "corpus"

RFC5424 = [
    b"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - "
    b"\xef\xbb\xbf'su root' failed for lonvick on /dev/pts/8",
    b"<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - "
    b"%% It's time to make the do-nuts.",
    b"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
    b'[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] '
    b"\xef\xbb\xbfAn application event log entry...",
    b"<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
    b'[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"]'
    b'[examplePriority@32473 class="high"]',
]
RFC3164 = [
    b"<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
    b"<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!",
    b"<165>Aug 24 05:34:00 CST 1987 mymachine myproc[10]: %% It's time to make the do-nuts.  "
    b"%%  Ingredients: Mix=OK, Jelly=OK # Devices: Mixer=OK, Jelly_Injector=OK, Frier=OK # "
    b"Transport: Conveyer1=OK, Conveyer2=OK # %%",
    b"<0>1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's All Folks!",
    b"Use the BFG!",
]
EDGE = [b"", b"<0>", b"<191>", b"<192>x", b"<13>1", b"<13>1 - - - - - -", b"<13>line\r\n",
        b'<13>1 - h a p m [x a="b\\"]"] m', b"<13>Feb 29 00:00:00 h t: leap"]
LOGGER_ARGS = [
    ["--rfc3164"],
    ["--rfc5424"],
    ["--rfc5424", "--sd-id", "origin@32473", "--sd-param", 'ip="10.0.0.1"', "--msgid", "ID47"],
    ["--rfc5424=notq", "-p", "local3.err", "-t", "cron"],
    ["--rfc3164", "-t", "sshd", "-i", "-p", "auth.info"],
]
LOGGER_TEXT = ["disk /dev/sda1 is 91% full", "Accepted password for alice from 10.1.2.3 port 51514"]


def logger_datagrams():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(5)
        port = str(s.getsockname()[1])
        out = []
        for args in LOGGER_ARGS:
            for text in LOGGER_TEXT:
                subprocess.run(["logger", "-n", "127.0.0.1", "-P", port, "--udp", *args, text],
                               check=True)
                out.append(s.recv(65536))
        return out


def logger_tcp_stream(framing):
    """The bytes logger writes to one TCP connection (octet-counted or newline framing)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(5)
        port = str(server.getsockname()[1])
        proc = subprocess.Popen(["logger", "-n", "127.0.0.1", "-P", port, "--tcp", framing,
                                 "--rfc5424"], stdin=subprocess.PIPE)
        proc.stdin.write("\n".join(LOGGER_TEXT).encode() + b"\n")
        proc.stdin.close()
        conn, _ = server.accept()
        data = b""
        with conn:
            conn.settimeout(5)
            while chunk := conn.recv(65536):
                data += chunk
        proc.wait(timeout=5)
        return data


def gen_corpus(*args):
    gen = ROOT.parent / "shared" / "corpus" / "gen_corpus.py"
    if not gen.exists():
        return []
    out = subprocess.run(["python3", str(gen), "-n", "40", "--seed", "6", *args], check=True,
                         capture_output=True).stdout
    return out.splitlines()


def be(value, n):
    return value.to_bytes(n, "big")


def frame_input(stream, framing=0, nul=False, max_size=None, chunks=()):
    """frame_decoder_fuzz's layout: consumed from the end, the options, then the stream's size;
    the stream from the front; the chunk sizes from the end of what is left."""
    opts = bytes([framing, int(nul), int(max_size is not None)])
    if max_size is not None:
        opts += be(max_size - 1, 2)
    chunk_part = bytes(reversed(chunks))
    n = 1
    while (len(stream) + len(chunk_part) + n).bit_length() > 8 * n:
        n += 1
    consumed = opts + be(len(stream), n)
    return stream + chunk_part + bytes(reversed(consumed))


def disk_record(payload):
    """A disk-buffer record (daemon/outputs/disk_queue.h): magic, length, CRC-32 of the payload,
    CRC-32 of those 12 bytes, little-endian; then the payload."""
    head = (0x3152464C).to_bytes(4, "little") + len(payload).to_bytes(4, "little")
    head += zlib.crc32(payload).to_bytes(4, "little")
    return head + zlib.crc32(head).to_bytes(4, "little") + payload


def disk_queue_inputs():
    """disk_queue_fuzz's layout: its last byte (odd: a cursor follows at the front, up to the
    first lone backslash), then the segment file's bytes."""
    events = [b'{"kind":"first","group_id":"00000000000000a1","message":"disk full"}\n',
              b'{"kind":"summary","count":41}\n{"kind":"first"}\n', b"x" * 300]
    sound = b"LFDBSEG1" + b"".join(disk_record(e) for e in events)
    bad_crc = bytearray(sound)
    bad_crc[40] ^= 0xFF  # inside the first payload
    bad_len = bytearray(sound)
    bad_len[12] ^= 0x01  # the first record's length
    torn = sound[:-50]
    no_magic = sound[8:]
    cursor = b"0000010000000000 16\ncrc 0\n\\x"
    return [sound + b"\x00", bytes(bad_crc) + b"\x00", bytes(bad_len) + b"\x00",
            torn + b"\x00", no_magic + b"\x00", cursor + sound + b"\x01", b"\x00"]


def write(target, inputs):
    d = CORPUS / target
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    for data in inputs:
        (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    datagrams = logger_datagrams()
    lines = RFC5424 + RFC3164 + EDGE + datagrams + gen_corpus()
    write("syslog_parser", lines)

    octet = logger_tcp_stream("--octet-count")
    newline = logger_tcp_stream("--rfc3164")
    mixed = b"".join(b"%d %s" % (len(l), l) if i % 2 else l + b"\n" for i, l in
                     enumerate(RFC5424 + RFC3164))
    write("frame_decoder", [
        frame_input(octet), frame_input(octet, framing=1, chunks=(1, 3, 17)),
        frame_input(newline), frame_input(newline, framing=2, chunks=(5, 0, 40)),
        frame_input(mixed), frame_input(mixed, max_size=40, chunks=(7, 7, 7, 7)),
        frame_input(b"\0".join(RFC3164) + b"\0", nul=True),
        frame_input(b"99999999 x\n12 short\n3 abc", chunks=(2, 2)),
    ])

    objects = [
        {"message": "disk /dev/sda1 is 91% full", "host": "web1", "app": "df", "severity": "warn",
         "timestamp": "2024-03-01T10:00:00.5+01:00", "pid": 4242},
        {"msg": "user alice logged in", "hostname": "h", "program": "sshd", "severity": 6,
         "time": "2024-03-01 10:00:00Z", "tags": ["a", "b"], "ctx": {"ip": "10.0.0.1"}},
        {"log": {"message": "nested", "level": "info"}, "@timestamp": "2024-03-01T10:00:00Z"},
        {"a": {"b": {"c": {"n": 1.5e3}}}, "message": None},
    ]
    json_inputs = []
    for obj in objects:
        text = json.dumps(obj).encode()
        # The last byte picks the message field: 0 message, 1 msg, 2 log.message, 3 a.b.c.
        json_inputs += [text + bytes([k]) for k in range(4)]
    json_inputs += [b"[1,2]\0", b"{\"message\":\"x\"\0", b"not json\0", b"{}\0"]
    write("json_lines", json_inputs)

    configs = [p.read_bytes() for p in sorted((ROOT / "config").glob("*.json"))]
    configs += [
        b'{"inputs":[{"name":"in","type":"stdin","format":"json","json_message_field":"log.msg"}],'
        b'"outputs":[{"name":"o","type":"tcp","address":"::1","port":6000,'
        b'"when_full":"drop","block_timeout":"250ms"}]}',
        b'{"inputs":[{"name":"t","type":"tcp","port":0,"framing":"octet-counted",'
        b'"max_message_size":"1KiB","idle_timeout":"0"}],"engine":{"window":"1.5s",'
        b'"scope":["host","app","severity"]},"outputs":[{"name":"s","type":"syslog",'
        b'"address":"127.0.0.1","port":514,"protocol":"udp"}],"metrics":{"enabled":false}}',
    ]
    write("config", configs)

    messages = gen_corpus("--no-header") + [
        b"Accepted password for alice from 10.1.2.3 port 51514 ssh2",
        b"GET /api/v1/items/12345?x=1 200 0.013s uuid=123e4567-e89b-12d3-a456-426614174000",
        b"link eth0 mac 00:1a:2b:3c:4d:5e addr fe80::1%eth0 [::1]:514 host.example.org:5070",
        b"veth58b7fff en0 awdl0 a1b2c3d4e5 0x1f 2024-03-01T10:00:00Z mail bob@example.org",
        b"url https://example.org/a/1 path /var/log/x.1 ~/y2 -7 +3 1e-3 3.14 12:34:56.789",
    ]
    # Settings, in the order they are read from the end: custom weights?, pairs off?, then
    # (custom) 14 classes' weights in 1/1024 steps as 2 bytes each, then max_tokens set?, its
    # value. Default weights with pairs; then pairs off; then every weight 512, max_tokens 4.
    custom = b"\x01\x00" + b"\x02\x00" * 14 + b"\x01\x04"
    fingerprint = [m + b"\x00\x00\x00" for m in messages]
    fingerprint += [m + b"\x00\x01\x00" for m in messages[-5:]]
    fingerprint += [m + bytes(reversed(custom)) for m in messages[-5:]]
    write("fingerprint", fingerprint)
    write("disk_queue", disk_queue_inputs())
    write("state_file", state_file_seeds())
    write("journal", journal_seeds())


# --- state files (daemon/state/checkpoint_file.h, journal_file.h), encoded independently here

def u16(v):
    return v.to_bytes(2, "little")


def u32(v):
    return v.to_bytes(4, "little")


def u64(v):
    return (v & (2**64 - 1)).to_bytes(8, "little")


def field(tag, value):
    return u16(tag) + u32(len(value)) + value


def int_field(tag, v):
    return field(tag, u64(v))


def crc32(data):
    import zlib
    return zlib.crc32(data) & 0xFFFFFFFF


def sample_record(message, host=b"web01", app=b"sshd", arrival=1_700_000_000_000_000):
    return b"".join([
        int_field(1, arrival - 5_000_000), int_field(2, arrival), int_field(3, 1),
        int_field(4, 4), int_field(5, 6), int_field(6, 1), int_field(7, 0),
        field(8, host), field(9, app), field(10, b"4242"), field(11, b""), field(12, b""),
        field(13, message), field(14, b""),
    ])


def checkpoint_body(groups, worker=0, workers=2, done=()):
    head = b"".join([int_field(1, worker), int_field(2, workers), int_field(3, 0x1234),
                     int_field(4, 17), int_field(5, 1_700_000_000_000_000), int_field(6, 3),
                     int_field(7, 41)] + [int_field(8, d) for d in done])
    return head + b"".join(field(16, g) for g in groups)


def group(gid, message, flags, count_total, count_since, last=None, hosts=()):
    parts = [int_field(1, gid), int_field(2, 0xABCDEF), int_field(3, count_total),
             int_field(4, count_since), int_field(5, 1), int_field(6, 2), int_field(7, 3),
             int_field(8, 4), int_field(9, 2), field(10, bytes(flags)),
             field(11, sample_record(message))]
    if last is not None:
        parts.append(field(12, sample_record(last)))
    parts += [field(13, h) for h in hosts] + [int_field(14, 0), field(99, b"future field")]
    return b"".join(parts)


def learned(threshold, siblings, value_words):
    """The merger's learned evidence: siblings as (key, anchor, sightings, variable, values)."""
    parts = [int_field(1, threshold)]
    for key, anchor, sightings, variable, values in siblings:
        parts.append(field(2, u64(key) + u64(anchor) + u16(sightings) +
                           bytes([len(values), variable]) + b"".join(u64(v) for v in values)))
    parts.append(field(3, b"".join(u64(w) for w in value_words)))
    return field(17, b"".join(parts))


def checkpoint_file(body):
    return b"LFCK" + u32(1) + u64(len(body)) + u32(crc32(body)) + body


def state_file_seeds():
    g1 = group(1, b"session 7 opened for user u923 by (uid=0)", [0, 2, 0, 0, 0, 2, 0, 0], 600, 599,
               last=b"session 14383 opened for user u696 by (uid=0)")
    g2 = group(2, b"disk /dev/sda is 22% full", [0, 0, 0, 3, 0], 1, 0, hosts=[b"a", b"b"])
    bodies = [checkpoint_body([]), checkpoint_body([g1]), checkpoint_body([g1, g2], 1, 2, [44, 45])]
    bodies.append(checkpoint_body([g1]) + learned(6, [(0x51B, 0, 9, 1, [11, 12, 13, 14, 15, 16]),
                                                       (0x7E5, 12, 2, 0, [21, 22])], [0x77, 0x99]))
    seeds = [checkpoint_file(b) + b"\x01" for b in bodies]  # whole files as on disk
    seeds.append(checkpoint_file(bodies[1])[:-9] + b"\x01")  # truncated
    seeds += [b + b"\x00" for b in bodies]  # bodies the target wraps
    return seeds


def journal_payload(seq, lines, input_id=0, arrival=1_700_000_000_000_000):
    return (u64(seq) + u32(input_id) + u64(arrival) + u32(len(lines)) +
            b"".join(u32(len(l)) + l for l in lines))


def journal_seeds():
    head = b"LFJN" + u32(1) + u64(3) + u32(2)
    head += u32(crc32(head))
    payloads = [journal_payload(1, [b"<13>Nov 25 12:00:00 web01 sshd: session 7 opened"]),
                journal_payload(2, [b"<13>Nov 25 12:00:00 web02 cron: job 1 done",
                                    b"<13>Nov 25 12:00:01 web02 cron: job 2 done"], 1),
                journal_payload(3, [])]
    records = [u32(len(p)) + u32(crc32(p)) + p for p in payloads]
    segment = head + b"".join(records)
    corrupt = bytearray(segment)
    corrupt[len(head) + 12] ^= 0xFF
    seeds = [head + b"\x01", segment + b"\x01", segment[:-7] + b"\x01", bytes(corrupt) + b"\x01"]
    seeds.append(b"".join(bytes([len(p)]) + p for p in payloads) + b"\x00")
    return seeds


if __name__ == "__main__":
    main()
