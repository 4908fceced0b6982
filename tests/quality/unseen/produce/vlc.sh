#!/bin/bash
# Produces VLC/VLC_raw.log: a desktop media player's own log, VLC 3.0 (Debian 12 `vlc-bin`,
# `vlc-plugin-base`) run headless as `cvlc -vvv` (its messages on stderr, one line each:
# `[object] module type level: message`) with dummy audio and video outputs, as an unprivileged
# user (VLC refuses root), one run after another: WAV files played whole, from a start time,
# faster, with audio filters; files transcoded to Ogg/Vorbis, MP3, FLAC, MP4 (H.264 from a
# still image) and WAV and played back; playlists (M3U, XSPF, a directory) with missing
# entries; a subtitle file; files that are truncated, garbage or text; missing files; HTTP from
# a local origin (`vlc_origin` below: a file, 404, 500, a redirect, a stall past VLC's
# timeout), a closed port, an unresolvable name, RTSP and MMS to nobody, UDP input that never
# comes, an unknown scheme; the `cli` interface on stdin (play, pause, seek, volume, info,
# unknown commands) and the Lua HTTP interface (good and wrong passwords, commands, a missing
# page).
# Usage: vlc.sh OUTDIR   (origin on 127.0.0.1:58081, VLC's HTTP interface on 58082)
set -eu
out=$1
w=$(mktemp -d /tmp/unseen-vlc.XXXXXX)
id vlcuser >/dev/null 2>&1 || useradd -m -s /bin/bash vlcuser
chmod 755 "$w"
cd "$w"
python3 - <<'P'
import math, struct, wave, zlib
for name, rate, ch, secs in [("tone.wav", 44100, 2, 3), ("mono8k.wav", 8000, 1, 2),
                             ("short48k.wav", 48000, 2, 1)]:
    w = wave.open(name, "wb"); w.setnchannels(ch); w.setsampwidth(2); w.setframerate(rate)
    w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i / (7 + ch)))) * ch
                           for i in range(rate * secs)))
    w.close()
def png(name, wd, ht):
    raw = b"".join(b"\x00" + bytes((x * 3 + y) % 256 for x in range(wd * 3)) for y in range(ht))
    chunk = lambda t, d: struct.pack("!I", len(d)) + t + d + struct.pack("!I", zlib.crc32(t + d))
    open(name, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack("!IIBBBBB", wd, ht, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
png("still.png", 320, 240)
open("truncated.wav", "wb").write(open("tone.wav", "rb").read()[:300])
import random
r = random.Random(5)
open("garbage.mp4", "wb").write(bytes(r.randrange(256) for _ in range(40000)))
open("notes.mp3", "w").write("this is not audio\n" * 50)
open("subs.srt", "w").write("1\n00:00:00,500 --> 00:00:01,500\nHello\n\n2\n00:00:01,600 --> 00:00:02,500\nWorld\n\nbroken\n")
P
cat >list.m3u <<M
#EXTM3U
#EXTINF:3,Tone
$w/tone.wav
$w/missing-one.wav
#EXTINF:1,Short
short48k.wav
http://127.0.0.1:58081/mono8k.wav
M
cat >list.xspf <<X
<?xml version="1.0" encoding="UTF-8"?>
<playlist xmlns="http://xspf.org/ns/0/" version="1"><trackList>
<track><location>file://$w/mono8k.wav</location><title>Mono</title></track>
<track><location>file://$w/nothere.ogg</location></track>
</trackList></playlist>
X
echo '<playlist><broken' >broken.xspf
mkdir -p album && cp mono8k.wav short48k.wav album/
chmod -R a+rwX "$w"
# the local origin: files, a 404, a 500, a redirect, a stall
python3 - <<'P' &
import http.server, os, time
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path == "/error.wav":
            self.send_error(500, "boom"); return
        if self.path == "/moved.wav":
            self.send_response(302); self.send_header("Location", "/tone.wav"); self.end_headers(); return
        if self.path == "/stall.wav":
            self.send_response(200); self.send_header("Content-Type", "audio/wav"); self.end_headers()
            self.wfile.write(open("tone.wav", "rb").read()[:2000]); self.wfile.flush(); time.sleep(25); return
        return super().do_GET()
http.server.ThreadingHTTPServer.allow_reuse_address = True
http.server.ThreadingHTTPServer(("127.0.0.1", 58081), H).serve_forever()
P
origin=$!
sleep 1
log="$w/vlc.log"
: >"$log"; chmod a+rw "$log"
v() { runuser -u vlcuser -- timeout "${T:-20}" cvlc -vvv --no-media-library --aout dummy --vout dummy \
        --play-and-exit "$@" >>"$log" 2>&1 </dev/null || true; }
O=http://127.0.0.1:58081
v tone.wav
v --start-time 1 --stop-time 2 tone.wav
v --rate 2 mono8k.wav
v --audio-filter normvol --norm-max-level 1.5 short48k.wav
v --audio-filter equalizer --equalizer-preset rock short48k.wav
v --gain 3 --no-audio mono8k.wav
v --sout '#transcode{acodec=vorb,ab=96,channels=2}:std{access=file,mux=ogg,dst='"$w"'/out.ogg}' tone.wav
v --sout '#transcode{acodec=mpga,ab=128}:std{access=file,mux=dummy,dst='"$w"'/out.mp3}' tone.wav
v --sout '#transcode{acodec=flac}:std{access=file,mux=ogg,dst='"$w"'/out.flac.ogg}' mono8k.wav
v --sout '#transcode{acodec=s16l,samplerate=22050}:std{access=file,mux=wav,dst='"$w"'/out22k.wav}' tone.wav
T=40 v --image-duration 2 --sout '#transcode{vcodec=h264,vb=300,fps=10}:std{access=file,mux=mp4,dst='"$w"'/still.mp4}' still.png
v --sout '#transcode{acodec=mp4a}:std{access=file,mux=ts,dst='"$w"'/out.ts}' mono8k.wav
v --sout '#transcode{vcodec=nosuchcodec}:std{access=file,mux=mp4,dst='"$w"'/bad.mp4}' tone.wav
v --sout '#std{access=file,mux=avi,dst=/nonexistent/dir/x.avi}' tone.wav
for f in out.ogg out.mp3 out.flac.ogg out22k.wav still.mp4 out.ts; do v "$f"; done
v --sub-file subs.srt still.mp4
v --sub-file missing.srt still.mp4
v list.m3u
v list.xspf
v broken.xspf
v album
v truncated.wav
v garbage.mp4
v notes.mp3
v nothere.wav
v /root/secret.wav
v $O/tone.wav
v $O/missing.wav
v $O/error.wav
v $O/moved.wav
T=40 v --http-reconnect $O/stall.wav
v http://127.0.0.1:58089/tone.wav
v http://media.invalid/tone.wav
v rtsp://127.0.0.1:58090/stream
v mms://127.0.0.1:58091/stream
T=8 v --run-time 4 udp://@127.0.0.1:58092
v nosuchscheme://x/y
v --loop --run-time 4 short48k.wav
v --input-repeat 1 short48k.wav
v --aout nosuchaout tone.wav
v --demux nosuchdemux tone.wav
# the cli interface on stdin (its answers on stdout are not the log)
{ sleep 1; echo "add $w/tone.wav"; sleep 1; echo pause; sleep 0.5; echo pause; echo "seek 1"; echo "volume 128";
  echo info; echo stats; echo "frobnicate now"; echo "add $w/nothere.wav"; sleep 1; echo "enqueue $w/mono8k.wav";
  echo next; sleep 1; echo status; echo quit; } | runuser -u vlcuser -- timeout 30 cvlc -vvv -I cli --aout dummy \
  --vout dummy 2>>"$log" >/dev/null || true
# the Lua HTTP interface: commands with the right and a wrong password, a missing page
runuser -u vlcuser -- timeout 40 cvlc -vvv -I http --http-host 127.0.0.1 --http-port 58082 --http-password pw \
  --aout dummy --vout dummy >>"$log" 2>&1 </dev/null &
hv=$!
sleep 4
S=http://127.0.0.1:58082/requests/status.xml
curl -s -o /dev/null -u :pw "$S" || true
curl -s -o /dev/null -u :wrong "$S" || true
curl -s -o /dev/null "$S" || true
curl -s -o /dev/null -u :pw "$S?command=in_play&input=file://$w/tone.wav" || true
sleep 1
curl -s -o /dev/null -u :pw "$S?command=pl_pause" || true
curl -s -o /dev/null -u :pw "$S?command=seek&val=50%25" || true
curl -s -o /dev/null -u :pw "$S?command=volume&val=200" || true
curl -s -o /dev/null -u :pw "$S?command=in_enqueue&input=file://$w/nothere.wav" || true
curl -s -o /dev/null -u :pw "$S?command=pl_next" || true
curl -s -o /dev/null -u :pw "http://127.0.0.1:58082/requests/playlist.json" || true
curl -s -o /dev/null -u :pw "http://127.0.0.1:58082/nosuchpage.html" || true
curl -s -o /dev/null -u :pw "$S?command=in_play&input=$O/missing.wav" || true
sleep 2
curl -s -o /dev/null -u :pw "$S?command=pl_stop" || true
wait "$hv" 2>/dev/null || true  # its timeout ends it
kill "$origin"
mkdir -p "$out/VLC"
cp "$log" "$out/VLC/VLC_raw.log"
cd /; rm -rf "$w"
